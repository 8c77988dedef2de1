"""Shared pytest set-up: the ``slow`` and ``long`` markers, the repository paths, the test order (longest
xdist scopes first, from ``durations.json``) and one temp directory for the run
(:func:`pytest_configure`), removed at its end."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

#: seconds per xdist scope (a module, or a class with a scope of its own) as the last
#: ``pytest --store-durations`` run measured them (setup, call and teardown of its tests)
DURATIONS = Path(__file__).with_name("durations.json")


def scope_of(nodeid: str) -> str:
    """xdist's ``--dist loadscope`` scope of a test: its node id up to the last ``::``."""
    return nodeid.rsplit("::", 1)[0]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--store-durations", action="store_true",
                     help=f"write each scope's measured seconds to {DURATIONS.name} (the test order reads it)")


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
    config.addinivalue_line(
        "markers",
        "long: whole networks at full size, full-size designs a smaller or sibling test covers, the Ray cluster, "
        "exhaustive searches (slow too; left out of the default run and CI by addopts: -m long runs them)",
    )
    if hasattr(config, "workerinput"):  # an xdist worker: TMPDIR is already the run's
        return
    if config.getoption("--store-durations"):
        config.pluginmanager.register(_Durations(), "lego-durations")
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
    """The scopes longest first, as :data:`DURATIONS` measured them (unmeasured ones last, in
    collection order). xdist hands out scopes in collection order (``--no-loadscope-reorder``), so
    no long scope starts last and runs alone at the end: longest-first is the classic
    list-scheduling rule for two workers. Scheduling only: every test runs either way."""
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    items.sort(key=lambda item: -seconds.get(scope_of(item.nodeid), 0.0))


class _Durations:
    """``--store-durations``: sums each report's duration per scope on the controller (xdist
    forwards the workers' reports) and writes :data:`DURATIONS` when the session ends."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        scope = scope_of(report.nodeid)
        self.seconds[scope] = self.seconds.get(scope, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Merged into the stored figures (a partial run updates the scopes it ran); scopes whose
        test file is gone are dropped."""
        stored = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
        merged = {k: v for k, v in {**stored, **self.seconds}.items()
                  if (REPO_ROOT / k.split("::")[0]).exists()}
        ranked = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))
        DURATIONS.write_text(json.dumps({k: round(v, 1) for k, v in ranked}, indent=1) + "\n")


def long_where(cases, long) -> list:
    """``cases`` for a parametrize, each one in ``long`` marked for the long tier."""
    return [pytest.param(c, marks=pytest.mark.long) if c in long else c for c in cases]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
