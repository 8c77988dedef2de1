"""The controller's loop nest of a layer on a generated array (one temporal loop per dim).

Every dim unrolled on the array is tiled by the array extent (edge tiles padded);
every other dim is a full temporal loop. One-trip loops never move: those of output
dims sit outermost, those of reduction dims innermost, because the generated
controller treats its innermost ``len(reduction dims)`` counters as the accumulation
loops. The mapper (:mod:`lego_build.mapping.stage`) chooses the order of the others.
"""
from __future__ import annotations

from dataclasses import dataclass

from lego_build.ir.mapping import Mapping, tiled_loops
from lego_build.ir.workload import Kernel


@dataclass(frozen=True, slots=True)
class Status:
    ok: bool
    reason: str = ""


def controller_mapping(kernel: Kernel, spatial: tuple[tuple[str, int], ...], order: tuple[str, ...],
                       outer_order: tuple[str, ...] = ()) -> Mapping:
    """The controller's nest: the moving loops in ``order``, one-trip output loops outside, reduction inside.

    The other moving loops (those that move only above the controller level) go outside in
    ``outer_order`` (the upper levels' order, outermost first): the sequencer walks the
    tile grid in this nest's order, so the tiles follow the mapper's order and keep the
    reuse it counted (e.g. weights staying in their half across the inner output tiles).
    A dim that moves at the controller level too keeps its place in ``order`` (the nest
    is one for the tile and the grid), so there the walk can differ from the upper order."""
    loops = tiled_loops(kernel, spatial)
    reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
    names = [d.name for d in kernel.dims]
    moving = [d for d in order if loops[d].bound > 1]
    rank = {d: i for i, d in enumerate(dict.fromkeys(outer_order))}
    rest = sorted((d for d in names if loops[d].bound > 1 and d not in moving),
                  key=lambda d: (rank.get(d, len(rank)), names.index(d)))
    moving = [d for d in rest if d not in reduction] + moving + [d for d in rest if d in reduction]
    outer = [d for d in names if loops[d].bound == 1 and d not in reduction]
    inner = [d for d in names if loops[d].bound == 1 and d in reduction]
    return Mapping(spatial, tuple(loops[d] for d in (*outer, *moving, *inner)))


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
