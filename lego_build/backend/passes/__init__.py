"""The back-end pass pipeline as data (seed 004 ch. 5).

Each pass is a module-level :class:`Pass` with the facts it ``requires`` and
``provides``. :data:`ORDER` is the canonical execution order; an optimizer preset
lists the passes it runs (``optimizer.passes``), and :func:`check_order` verifies
statically that every requirement is provided by an earlier pass. A pass is
``run(dag, cfg) -> dag``.
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


#: every pass in canonical order (``mac_fusion`` is for FPGA targets: ``optimizer=fpga``)
ORDER: tuple[str, ...] = ("reduction_tree", "pin_reuse", "mac_fusion", "fifo_sizing", "bitwidth", "delay_matching",
                          "broadcast_rewiring", "power_gating", "delay_elaboration")


def get(name: str) -> Pass:
    import importlib

    if name not in ORDER:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}").PASS


def pipeline(names: tuple[str, ...] | list[str] = ORDER) -> tuple[Pass, ...]:
    return tuple(get(name) for name in names)


def check_order(passes: tuple[Pass, ...], initial: tuple[str, ...] = ("codegen",)) -> None:
    """Raise ValueError naming the first pass whose requirements are not yet provided."""
    have = set(initial)
    for p in passes:
        missing = [r for r in p.requires if r not in have]
        if missing:
            raise ValueError(f"pass {p.name} requires {', '.join(missing)}; run the pass providing it first")
        have.update(p.provides)
