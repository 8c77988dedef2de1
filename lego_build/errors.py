"""The errors every layer raises, defined once at the bottom of the house.

Each carries a one-line message that names the offending key or file and says what to
do; the roof (:mod:`lego_build.flow.tasks`) turns them into an ``error:`` line, the
journal's rollback and an exit status.
"""
from __future__ import annotations


class ConfigError(ValueError):
    """A bad configuration value (exit 2, nothing written). The message is one line and names the key."""


class BudgetError(ConfigError):
    """A build whose estimated memory or time exceeds the limits (exit 2, before any work)."""


class StageError(RuntimeError):
    """A stage cannot proceed on this design; the message is one line and says what to change (exit 1)."""


class InputError(StageError):
    """The configuration is valid but unusable for this workload (e.g. no tile fits a buffer): exit 2."""
