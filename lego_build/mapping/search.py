"""Ask/tell search over loop orders (timeloop-style ``next`` / ``report``).

The mapspace here is the perfect-factorization skeleton: every dim unrolled on
the array is tiled by the array extent (edge tiles padded), every other dim is a
full temporal loop, and the search is over the order of the loops that iterate
more than once. One-trip loops never move: those of output dims sit outermost,
those of reduction dims innermost, because the generated controller treats its
innermost ``len(reduction dims)`` counters as the accumulation loops. Every rejected
candidate carries its reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import Iterator

from lego_build.ir.mapping import Loop, Mapping
from lego_build.ir.workload import Kernel

from .cost import Cost


@dataclass(frozen=True, slots=True)
class Status:
    ok: bool
    reason: str = ""


def tiled_loops(kernel: Kernel, spatial: tuple[tuple[str, int], ...]) -> dict[str, Loop]:
    extents: dict[str, int] = {}
    for dim, extent in spatial:
        extents[dim] = extents.get(dim, 1) * extent
    loops = {}
    for dim in kernel.dims:
        extent = extents.get(dim.name, 1)
        loops[dim.name] = Loop(dim.name, -(-dim.bound // extent), extent)
    return loops


def pre_check(kernel: Kernel, mapping: Mapping) -> Status:
    """Cheap legality checks before costing."""
    reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
    seen_reduction = False
    for loop in mapping.temporal:
        if loop.bound == 1:
            continue
        if loop.dim in reduction:
            seen_reduction = True
        elif seen_reduction:
            return Status(False, f"reduction loop outside {loop.dim}: the FU accumulates its output in place, "
                                 "so reduction loops must be innermost")
    return Status(True)


@dataclass
class OrderSearch:
    """Exhaustive over loop orders; ``next()`` asks, ``report()`` tells."""

    kernel: Kernel
    spatial: tuple[tuple[str, int], ...]
    objective: str
    fixed_order: tuple[str, ...] = ()  # the hardware's loop order (outermost level per dim), if it has one
    best: tuple[Mapping, Cost] | None = None
    log: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._loops = tiled_loops(self.kernel, self.spatial)
        names = [d.name for d in self.kernel.dims]
        reduction = {self.kernel.dims[d].name for d in self.kernel.reduction_dims}
        fixed = [n for n in names if self._loops[n].bound == 1]
        self._outer = [n for n in fixed if n not in reduction]
        self._inner = [n for n in fixed if n in reduction]
        moving = [n for n in names if self._loops[n].bound > 1]
        self._orders: Iterator[tuple[str, ...]] = permutations(moving)
        self._fixed = [d for d in self.fixed_order if d in moving]
        self._pending: Mapping | None = None

    def next(self) -> Mapping | None:
        order = next(self._orders, None)
        if order is None:
            return None
        self._pending = Mapping(self.spatial, tuple(self._loops[d] for d in (*self._outer, *order, *self._inner)))
        return self._pending

    def report(self, status: Status, cost: Cost | None = None) -> None:
        mapping = self._pending
        assert mapping is not None
        order = [lp.dim for lp in mapping.temporal if lp.bound > 1]
        if status.ok and self._fixed and order != self._fixed:
            status = Status(False, f"the array's temporal dataflow fixes the loop order {self.fixed_order}")
        if not status.ok:
            self.log.append({"order": order, "status": "rejected", "reason": status.reason})
            return
        assert cost is not None
        score = cost.objective(self.objective)
        self.log.append({"order": order, "status": "valid", self.objective: score})
        if self.best is None or score < self.best[1].objective(self.objective):
            self.best = (mapping, cost)
