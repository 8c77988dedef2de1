"""Shared pytest set-up: the ``slow`` marker, the repository paths, and one temp directory for
the run (:func:`pytest_configure`), removed at its end."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

#: the suite's longest xdist scopes (a module, or a class with its own scope), longest first, as
#: ``pytest --junitxml`` measured them on two cores with empty caches (50 to 400 s each). They are
#: collected first and xdist hands out scopes in collection order (``--no-loadscope-reorder``), so
#: no long scope starts last and runs alone at the end (xdist's own order, most tests first, put
#: the one-test fuzzer parts and the two-test thesis sweeps last). Scheduling only: every test
#: runs either way.
LONG_SCOPES = (
    "tests/test_sim_stage.py",
    "tests/test_sim_asic.py",
    "tests/test_emit_stage.py",
    "tests/test_sim_memsys.py",
    "tests/test_presets.py",
    "tests/test_dodo_reliability.py",
    "tests/test_flow_app.py::TestThesisSweeps",
    "tests/test_readme.py",
    "tests/test_flow_app.py",
    "tests/test_flow_latency_check.py",
    "tests/test_flow_config_fuzz.py::TestFirstPart",
    "tests/test_flow_config_fuzz.py::TestSecondPart",
    "tests/test_flow_app.py::TestRayLauncher",
    "tests/test_fulang_expr.py",
    "tests/test_benchmarks_quant_fus.py",
    "tests/test_backend_stage.py",
    "tests/test_dodo.py",
    "tests/test_flow_tasks.py",
    "tests/test_bad_inputs.py",
)


#: the run's temp directory and the ``TMPDIR`` it replaced, on the controller (xdist's, or the only process)
RUN_TMP = pytest.StashKey[tuple]()


def pytest_configure(config: pytest.Config) -> None:
    """The marker; on the controller, a temp directory for the whole run that ``TMPDIR`` points at:
    pytest's ``tmp_path`` trees, the workers (which inherit the environment), the builds they start
    and their scratch trees and logs all write below it, and :func:`pytest_unconfigure` removes it,
    so a run leaves nothing in the system's temp directory."""
    config.addinivalue_line(
        "markers",
        "slow: builds, simulates or sweeps designs (part of the default run and CI; -m 'not slow' is the quick run)",
    )
    if hasattr(config, "workerinput"):  # an xdist worker: TMPDIR is already the run's
        return
    root = tempfile.mkdtemp(prefix="lego_build-tests-")
    config.stash[RUN_TMP] = (root, os.environ.get("TMPDIR"))
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's temp directory (the controller's) and restore ``TMPDIR``."""
    if RUN_TMP not in config.stash:  # a worker
        return
    root, before = config.stash[RUN_TMP]
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    tempfile.tempdir = None
    shutil.rmtree(root, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long scopes first (:data:`LONG_SCOPES`), the rest in collection order."""
    rank = {scope: i for i, scope in enumerate(LONG_SCOPES)}
    items.sort(key=lambda item: rank.get(item.nodeid.rsplit("::", 1)[0], len(rank)))  # xdist's scope


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
