"""The back-end pass pipeline as data (seed 004 ch. 5).

Each pass is a module-level :class:`Pass` with the facts it ``requires`` and
``provides``. :data:`ORDER` is the canonical execution order of the built-ins; an
optimizer preset lists the passes it runs (``optimizer.passes``), and :func:`check_order`
verifies statically that every requirement is provided by an earlier pass. A pass is
``run(dag, optimizer) -> dag``; it reads its settings from the optimizer config.

:data:`PASSES` names them: the built-ins, plus any ``Pass`` a user's package registers
under the entry-point group ``lego_build.passes`` (:mod:`lego_build.runtime.registry`),
which an ``optimizer.passes`` list may then name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG
from lego_build.runtime.registry import Registry


@dataclass(frozen=True)
class Pass:
    name: str
    requires: tuple[str, ...]
    provides: tuple[str, ...]
    run: Callable[[DAG, OptimizerConf], DAG]
    #: facts that must not be provided yet when this pass runs (what it changes would void them)
    before: tuple[str, ...] = ()


#: every built-in pass in canonical order (``mac_fusion``, ``registered_reads``, ``pipelined_rmw``,
#: ``row_prefetch`` and ``merged_halves`` are for FPGA targets: ``optimizer=fpga``)
ORDER: tuple[str, ...] = ("reduction_tree", "pin_reuse", "mac_fusion", "registered_reads", "pipelined_rmw",
                          "row_prefetch", "merged_halves", "fifo_sizing", "bitwidth", "acc_fusion", "delay_matching",
                          "broadcast_rewiring", "power_gating", "delay_elaboration")

PASSES: Registry[Pass] = Registry("lego_build.passes", "optimizer.passes",
                                  {name: f"lego_build.backend.passes.{name}:PASS" for name in ORDER})


def get(name: str) -> Pass:
    """The pass ``name`` (built-in or plugin); :class:`ConfigError` naming the choices if unknown."""
    return PASSES.get(name)


def pipeline(names: tuple[str, ...] | list[str] = ORDER) -> tuple[Pass, ...]:
    return tuple(get(name) for name in names)


def check_order(passes: tuple[Pass, ...], initial: tuple[str, ...] = ("codegen",)) -> None:
    """Raise ValueError naming the first pass whose requirements are not yet provided, or that
    comes after a pass providing a fact it must precede."""
    have = set(initial)
    for p in passes:
        missing = [r for r in p.requires if r not in have]
        if missing:
            raise ValueError(f"pass {p.name} requires {', '.join(missing)}; run the pass providing it first")
        late = [f for f in p.before if f in have]
        if late:
            raise ValueError(f"pass {p.name} must run before the pass providing {', '.join(late)}")
        have.update(p.provides)
