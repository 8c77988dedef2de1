"""The back-end pass pipeline as data (seed 004 ch. 5).

Each pass is a module-level :class:`Pass` with the facts it ``requires`` and
``provides``; :data:`PASSES` is the execution order, checked statically by
``tests/test_backend_passes.py``. A pass is ``run(dag, cfg) -> dag``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lego_build.ir.dag import DAG


@dataclass(frozen=True)
class Pass:
    name: str
    requires: tuple[str, ...]
    provides: tuple[str, ...]
    run: Callable[[DAG, object], DAG]


def pipeline() -> tuple[Pass, ...]:
    from . import bitwidth, delay_matching

    return (bitwidth.PASS, delay_matching.PASS)


def check_order(passes: tuple[Pass, ...], initial: tuple[str, ...] = ("codegen",)) -> None:
    """Raise ValueError naming the first pass whose requirements are not yet provided."""
    have = set(initial)
    for p in passes:
        missing = [r for r in p.requires if r not in have]
        if missing:
            raise ValueError(f"pass {p.name} requires {', '.join(missing)}; run the pass providing it first")
        have.update(p.provides)
