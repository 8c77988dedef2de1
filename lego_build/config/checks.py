"""The value checks the config schemas share: each raises :class:`~lego_build.errors.ConfigError`
with one line naming the key and what to give instead."""
from __future__ import annotations

import math
import re
from typing import Any

from lego_build.errors import ConfigError

MAX_MHZ = 20_000.0  # a clock above this is a unit mistake (Hz, kHz), not a design goal


def check_positive(group: str, obj: Any, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if value <= 0:
            kind = "integer" if isinstance(value, int) else "number"
            raise ConfigError(f"{group}.{name}={value:g}: must be a positive {kind}")


def check_finite(group: str, obj: Any, *names: str) -> None:
    """``nan`` and ``inf`` parse as floats and slip past every ``<`` check: refuse them first."""
    for name in names:
        value = getattr(obj, name)
        if value is not None and not math.isfinite(value):
            raise ConfigError(f"{group}.{name}={value}: must be a finite number")


def check_seed(group: str, obj: Any) -> None:
    if obj.seed < 0:
        raise ConfigError(f"{group}.seed={obj.seed}: must be an integer >= 0 (the random generators take "
                          "no negative seeds), e.g. 1")


#: a name the config gives (a group's ``name``, a memory level's, a dataflow's key): see :func:`check_name`
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def check_name(key: str, value: str) -> None:
    """Names end up in paths (``out/<arch>-<workload>-<hash>``) and reports next to Verilog
    identifiers: letters, digits and ``_`` only, so ``../x``, ``a b`` or ``x;y`` cannot escape
    ``out/`` or break a tool that reads them."""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise ConfigError(f"{key}={value!r}: not a valid name; use 1-64 letters, digits and _, "
                          "starting with a letter (e.g. my_array)")


def check_choice(group: str, name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"{group}.{name}={value!r}: must be one of {', '.join(choices)}")
