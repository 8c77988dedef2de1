"""Shared pytest set-up: the ``slow`` marker and the repository paths."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: builds, simulates or sweeps designs (part of the default run and CI; -m 'not slow' is the quick run)",
    )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
