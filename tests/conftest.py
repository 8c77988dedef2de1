"""Shared pytest set-up: the ``slow`` marker and the repository paths."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

#: the suite's longest xdist scopes (a module, or a class with its own scope), longest first, as
#: ``pytest --durations`` measured them on two cores. They are collected first and xdist hands
#: out scopes in collection order (``--no-loadscope-reorder``), so no long scope starts last and
#: runs alone at the end (xdist's own order, most tests first, put the one-test fuzzer parts and
#: the two-test thesis sweeps last). Scheduling only: every test runs either way.
LONG_SCOPES = (
    "tests/test_sim_stage.py",
    "tests/test_dodo_reliability.py",
    "tests/test_flow_app.py::TestThesisSweeps",
    "tests/test_flow_latency_check.py",
    "tests/test_flow_config_fuzz.py::TestFirstPart",
    "tests/test_flow_app.py",
    "tests/test_emit_stage.py",
    "tests/test_bad_inputs.py",
    "tests/test_readme.py",
    "tests/test_flow_app.py::TestRayLauncher",
    "tests/test_flow_config_fuzz.py::TestSecondPart",
    "tests/test_sim_objcache.py",
    "tests/test_dodo.py",
    "tests/test_backend_stage.py",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: builds, simulates or sweeps designs (part of the default run and CI; -m 'not slow' is the quick run)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long scopes first (:data:`LONG_SCOPES`), the rest in collection order."""
    rank = {scope: i for i, scope in enumerate(LONG_SCOPES)}
    items.sort(key=lambda item: rank.get(item.nodeid.rsplit("::", 1)[0], len(rank)))  # xdist's scope


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
