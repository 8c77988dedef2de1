"""The simulated tile of a layer (picked here, beside the mapper, as the latency model and the
simulation both use it): the layer's own loop nest, clipped to fit.

A tile keeps the layer's index maps and tensor extents and shrinks iteration
bounds, so it computes a corner of the real layer (padding included). Bounds are
halved, largest trip count first among the loops a tensor that does not fit depends on,
until every tensor fits one bank (``buffer_depth`` words) and the run takes at most
``max_steps`` time steps. Tensor
shapes are then cut to the window of elements the tile touches (:func:`window`), so
test data stays as small as the tile, wherever in the layer it lies.
"""
from __future__ import annotations

from dataclasses import replace
from math import prod

import numpy as np

from lego_build.ir.mapping import Mapping, tiled_loops
from lego_build.ir.workload import Dim, Kernel


def _mapping_for(kernel: Kernel, order: tuple[str, ...], spatial) -> Mapping:
    loops = tiled_loops(kernel, spatial)
    return Mapping(spatial, tuple(loops[d] for d in order))


def window(kernel: Kernel) -> tuple[Kernel, dict[str, tuple[int, ...]]]:
    """Each tensor cut to the box of elements the iteration domain touches, and the box's origin.

    Along each data dim the box runs from ``lo = max(0, min index)`` to
    ``min(shape, max index + 1)``; the bias moves by ``-lo``. Padding stays padding: an
    index below 0 keeps ``lo = 0``, one past the tensor's end stays past the box's end.
    """
    tensors, origin = [], {}
    for t in kernel.tensors:
        low = [sum(min(c, 0) * (d.bound - 1) for c, d in zip(row, kernel.dims)) + b
               for row, b in zip(t.matrix, t.bias)]
        top = [sum(max(c, 0) * (d.bound - 1) for c, d in zip(row, kernel.dims)) + b
               for row, b in zip(t.matrix, t.bias)]
        lo = tuple(min(max(0, v), s - 1) for v, s in zip(low, t.shape))
        shape = tuple(max(1, min(s, hi + 1) - o) for s, hi, o in zip(t.shape, top, lo))
        tensors.append(replace(t, shape=shape, bias=tuple(b - o for b, o in zip(t.bias, lo))))
        origin[t.name] = lo
    return replace(kernel, tensors=tuple(tensors)), origin


def fit_tile(kernel: Kernel, mapping: Mapping, depth, max_steps: int,
             start: dict[str, int] | None = None, min_period: int = 1) -> tuple[Kernel, Mapping]:
    """The tile the simulation runs: ``start`` (the mapper's controller-level tile) or the
    whole layer, halved until it fits the banks (``depth`` words, or a function of the
    tensor's name) and ``max_steps``; its tensors in the layer's coordinates (the corner
    tile's window starts at the origin). ``min_period``: a reduction loop is not halved below
    that many steps per accumulation (shared output lanes, :mod:`lego_build.ir.outshare`) while
    another candidate loop remains."""
    words = depth if callable(depth) else (lambda _: depth)
    order = tuple(lp.dim for lp in mapping.temporal)
    spatial = mapping.spatial
    bounds = {d.name: min(d.bound, (start or {}).get(d.name, d.bound)) for d in kernel.dims}
    reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
    extent: dict[str, int] = {}
    for dim, e in spatial:
        extent[dim] = extent.get(dim, 1) * e
    while True:
        tile = replace(kernel, dims=tuple(Dim(d.name, bounds[d.name]) for d in kernel.dims))
        tm = _mapping_for(tile, order, spatial)
        over = [t.name for t in tile.tensors if tm.footprint(tile, t.name) > words(t.name)]
        if tm.steps <= max_steps and not over:
            return tile, tm
        trips = {lp.dim: lp.bound for lp in tm.temporal}
        # halve, among the loops an overflowing tensor depends on (any loop when only the steps are too
        # many), the one with the most trips (ties: the later dim, i.e. inner loops first): halving a loop
        # the tensor does not index shrinks the run, not its footprint (issue 44: an output bank of 42 words
        # had lego_mnicoc's 1x1 layers' input channels cut from 256 to 4, each accumulation 4 steps long)
        levels = {lv for t in over for lv in tm.tensor_levels(tile, t)} if over else range(len(order))
        dims = [tm.temporal[lv].dim for lv in sorted(levels)] or list(order)
        if min_period > 1:  # keep every accumulation at min_period steps where another loop can go
            period = prod(trips[d] for d in reduction)
            keep = [d for d in dims if trips[d] > 1 and (d not in reduction or
                                                         period // trips[d] * -(-trips[d] // 2) >= min_period)]
            dims = keep or dims
        dim = max(reversed(dims), key=lambda d: trips[d])
        if trips[dim] == 1:
            raise ValueError("even a single time step does not fit")
        bounds[dim] = max(1, extent.get(dim, 1) * (-(-trips[dim] // 2)) if dim in extent else -(-bounds[dim] // 2))


def edge_tile(layer: Kernel, corner: Kernel, mapping: Mapping) -> tuple[Kernel, Mapping, dict[str, int]] | None:
    """The layer's last tile and its iteration offset per dim, or None when it has the corner
    tile's shape (every dim divides evenly, or the corner tile is the whole layer): a tile of
    the same bounds at an offset tests nothing the corner does not.

    Tiling dim ``d`` by the corner tile's bound ``b`` leaves ``D - (ceil(D/b) - 1) b``
    iterations for the last tile: Ruby's last-iteration bound at the buffer level
    (seed 002, ``T_n = (T_{n+1} - 1) P_n + R_n``). The array runs it with its own bound
    registers; the index maps are the layer's, shifted by the tile's offset.
    """
    offsets, dims = [], []
    for d, t in zip(layer.dims, corner.dims):
        rem = d.bound - (-(-d.bound // t.bound) - 1) * t.bound
        offsets.append(d.bound - rem)
        dims.append(Dim(d.name, rem))
    if all(d.bound == t.bound for d, t in zip(dims, corner.dims)):
        return None
    tensors = tuple(replace(t, bias=tuple(b + sum(m * o for m, o in zip(row, offsets))
                                          for row, b in zip(t.matrix, t.bias))) for t in layer.tensors)
    edge = replace(layer, dims=tuple(dims), tensors=tensors)
    return (edge, _mapping_for(edge, tuple(lp.dim for lp in mapping.temporal), mapping.spatial),
            {d.name: o for d, o in zip(layer.dims, offsets)})


def reduction_tile(kernel: Kernel, mapping: Mapping) -> tuple[Kernel, Mapping]:
    """The tile cut to one temporal step of every output dim, with its whole reduction.

    The extreme test patterns (all minimum, all maximum, ...) exist to reach the datapath's
    worst-case sums; those depend on how many terms an accumulator adds, not on how many
    output positions a tile visits. Every FU still runs (the spatial extents stay), every
    reduction step runs, and the tile keeps its offset in the layer; only the temporal loops
    of the output dims shrink to one trip, so the extremes cost a fraction of the tile."""
    reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
    extent: dict[str, int] = {}
    for dim, e in mapping.spatial:
        extent[dim] = extent.get(dim, 1) * e
    dims = tuple(d if d.name in reduction else Dim(d.name, min(d.bound, extent.get(d.name, 1))) for d in kernel.dims)
    tile = replace(kernel, dims=dims)
    return tile, _mapping_for(tile, tuple(lp.dim for lp in mapping.temporal), mapping.spatial)


def strides(kernel: Kernel, mapping: Mapping, tensor: str) -> np.ndarray:
    """Per loop level, the step of ``tensor``'s dense row index (bank address, or DRAM row of the
    whole-layer image): levels the tensor does not depend on step 0, inner levels fastest."""
    levels = set(mapping.tensor_levels(kernel, tensor))
    out = np.zeros(len(mapping.temporal), dtype=np.int64)
    step = 1
    for lv in reversed(range(len(mapping.temporal))):
        if lv in levels:
            out[lv] = step
            step *= mapping.temporal[lv].bound
    return out
