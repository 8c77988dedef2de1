"""Latency of a whole layer on the generated accelerator with its memory system: an analytic
prediction, made without the RTL, that the simulate stage checks against measured cycles.

The layer runs as a grid of tiles (:class:`Grid`; the reduction levels innermost, so an
output tile accumulates in its bank half). Each tile is *loaded* (every input tensor's box
of rows from DRAM), *computed* (the array walks the tile's loop nest, one step per cycle,
plus programming its bound registers, the start cycle and the pipeline drain) and, at the
end of an output tile, *stored*. Double buffering (seed 001's double-buffered level; the
ping-pong halves of :mod:`lego_build.emit.soc`) overlaps them under three rules:

* load ``j`` may start when load ``j-1`` is done and compute ``j-2`` has freed its half;
  it moves only the input tensors whose tile differs from tile ``j-1``'s (a tensor that
  none of the moving levels indexes stays in its half: weights across output tiles);
* compute ``j`` starts when load ``j`` is done, compute ``j-1`` is done and, for the first
  tile of output tile ``o``, store ``o-2`` has freed its half;
* store ``o`` starts when its last compute and store ``o-1`` are done.

A transfer of ``n`` bursts of ``b`` beats takes the DRAM latency to its first beat, then
beats at ``min(1, bandwidth / bus bytes)`` per cycle unless the outstanding-burst limit
binds: bursts go out in waves of ``outstanding``, each wave waiting for the previous one's
data (the latency plus its beats). Reads and writes share the DRAM
bandwidth: the layer takes at least all its beats at the bandwidth.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil, prod

import numpy as np

MAX_BURST = 256


@dataclass(frozen=True)
class Grid:
    """A layer's tile grid: per level (outer to inner), the layer's trips and a full tile's."""

    trips: tuple[int, ...]
    full: tuple[int, ...]

    @property
    def tiles(self) -> tuple[int, ...]:
        return tuple(-(-t // f) for t, f in zip(self.trips, self.full))

    @property
    def rem(self) -> tuple[int, ...]:
        return tuple(t - (n - 1) * f for t, f, n in zip(self.trips, self.full, self.tiles))

    @property
    def count(self) -> int:
        return prod(self.tiles)

    def bounds(self, idx: tuple[int, ...]) -> tuple[int, ...]:
        """Trips of the tile at tile index ``idx``: the remainder on a last tile (Ruby, seed 002)."""
        return tuple(r if i == n - 1 else f for i, n, f, r in zip(idx, self.tiles, self.full, self.rem))


@dataclass(frozen=True)
class Traffic:
    """How one tensor moves: bytes per row, the levels it depends on, the level whose rows
    are contiguous in DRAM (one burst), and whether it is the output."""

    slot: int
    depends: tuple[bool, ...]
    run_level: int | None
    output: bool = False


@dataclass(frozen=True)
class MemSystem:
    bus_bytes: int
    bytes_per_cycle: float
    latency: int
    outstanding: int
    program_cycles: int  # writing the array's bound registers before each tile
    drain: int  # the array's cycles after its last step

    @property
    def rate(self) -> float:
        return min(1.0, self.bytes_per_cycle / self.bus_bytes)


def bursts(t: Traffic, bounds: tuple[int, ...], bus_bytes: int) -> tuple[int, int]:
    """(bursts, beats) that move ``t``'s box of rows for a tile of ``bounds``: a row is
    ``slot / bus`` full beats or one narrow beat; a run of contiguous rows is one INCR
    burst, split at 256 beats and at 4 KB. The model counts the 4 KB from the run's start;
    the DMA splits at the address's own boundary, so a run may take one burst more there
    (the beats are the same: runs start at a multiple of the row's power-of-two size)."""
    rows = prod(b for b, d in zip(bounds, t.depends) if d)
    per_row = max(1, t.slot // bus_bytes)
    if t.run_level is None:
        return rows, rows * per_row
    run = bounds[t.run_level]
    beats = run * per_row
    runs = rows // run
    longest = min(MAX_BURST, 4096 // min(t.slot, bus_bytes))
    return runs * ceil(beats / longest), runs * beats


def transfer(ms: MemSystem, n: int, beats: int) -> float:
    """Cycles to move ``n`` bursts of ``beats`` beats in all."""
    if n == 0:
        return 0.0
    b = beats / n
    waves = -(-n // ms.outstanding)  # each wave of bursts waits for the previous one's data
    issue = (waves - 1) * (ms.latency + b + 1) + (n - (waves - 1) * ms.outstanding) * b
    return ms.latency + 2 + max(beats / ms.rate, issue)


def layer_cycles(grid: Grid, tensors: list[Traffic], ms: MemSystem) -> dict:
    """Predicted cycles of the whole layer, with the parts: compute, load, store, and the
    cycles the array waits for loads."""
    load_end = [0.0, 0.0]  # by tile parity
    comp_end = [0.0, 0.0]
    store_end = [0.0, 0.0]  # by output-tile parity
    last_load = last_comp = last_store = 0.0
    out_tile = -1
    pending = None  # (ready time) of an output tile waiting for its store
    total_beats = 0
    compute_total = load_total = 0.0
    out = next(t for t in tensors if t.output)
    inputs = [t for t in tensors if not t.output]
    reduction = tuple(not d for d in out.depends)
    prev = None
    for j, idx in enumerate(np.ndindex(*grid.tiles)):
        b = grid.bounds(idx)
        n = beats = 0
        moved = [prev is None or i != p for i, p in zip(idx, prev or idx)]
        prev = idx
        for t in inputs:
            if any(mv and d for mv, d in zip(moved, t.depends)):  # else its tile stays in its half
                bn, bb = bursts(t, b, ms.bus_bytes)
                n, beats = n + bn, beats + bb
        total_beats += beats
        load = transfer(ms, n, beats)
        load_total += load
        start_load = max(last_load, comp_end[j % 2] if j >= 2 else 0.0)
        last_load = load_end[j % 2] = start_load + load
        first = not any(i and r for i, r in zip(idx, reduction))
        if first:
            out_tile += 1
        start = max(last_load, last_comp, store_end[out_tile % 2] if first and out_tile >= 2 else 0.0)
        compute = ms.program_cycles + 2 + prod(b) + ms.drain + 1
        compute_total += compute
        last_comp = comp_end[j % 2] = start + compute
        ends = all(i == n - 1 or not r for i, n, r in zip(idx, grid.tiles, reduction))
        if ends:
            sn, sb = bursts(out, b, ms.bus_bytes)
            total_beats += sb
            begin = max(last_comp, last_store)
            last_store = store_end[out_tile % 2] = begin + transfer(ms, sn, sb)
            pending = last_store
    cycles = max(pending or last_comp, ms.latency + total_beats * ms.bus_bytes / ms.bytes_per_cycle) + 1
    return {"cycles": round(cycles), "compute": round(compute_total), "load": round(load_total),
            "beats": total_beats}
