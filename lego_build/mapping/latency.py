"""Latency of a whole layer on the generated accelerator with its memory system: an analytic
prediction, made without the RTL, that the simulate stage checks against measured cycles.

The layer runs as a grid of tiles (:class:`Grid`; the reduction levels innermost, so an
output tile accumulates in its bank half). Each tile is *loaded* (every input tensor's box
of rows from DRAM), *computed* and, at the end of an output tile, *stored*. Computing a tile
is programming its bound registers (a cycle to decide, one per level, into the array's
shadow registers, so while the previous tile still steps), a cycle to start it, one per time
step, and the pipeline's drain; the next tile starts as soon as the steps are over, so
drains overlap the next tile's steps (:mod:`lego_build.emit.ctrl`). Double buffering (seed
001's double-buffered level; the ping-pong halves of :mod:`lego_build.emit.soc`) overlaps the
rest under three rules:

* load ``j`` may start when load ``j-1`` is done and tile ``j-2``'s last input-bank read is
  done (``read_drain`` cycles after its last step, before its drain ends), freeing its
  half; it moves only the input tensors whose tile differs from tile ``j-1``'s (a tensor
  that none of the moving levels indexes stays in its half: weights across output tiles),
  and the first load every input;
* tile ``j`` is programmed once tile ``j-1`` has started; it starts when it is programmed,
  load ``j`` is done, tile ``j-1``'s steps are over, tile ``j-2`` has drained (two tiles in
  flight at most) and, for the first tile of output tile ``o``, store ``o-2`` has freed its
  half;
* store ``o`` starts when its last tile has drained and store ``o-1`` is done.

A transfer is a sequence of bursts, per tensor it moves one segment of them (the DMA walks
the tensors one after another on one address channel). A burst goes out once fewer than
``outstanding`` are in flight; its data starts the DRAM latency after its address, after the
data before it, and streams at ``min(1, bandwidth / bus bytes)`` beats per cycle. So the
bursts move in waves of ``outstanding``, each starting when the previous one's data ends or,
if the latency binds, a round trip after the previous wave's first burst ended: a tile whose
inputs are many short bursts is latency-bound there, and its weights' few long bursts are not
(an average burst length over both made such layers up to 15 % fast). The DRAM's bandwidth
is a bucket that refills while the channel waits, so a wave's first beats may come at one per
cycle. A store's write bursts do not wait for one another (only its last write response comes
a latency after its last beat); its beats take the cycles the reads leave free (reads go first
when both are ready), a beat a cycle at most, rows of one beat included (the storer reads its
rows in place, issue 44). Reads and writes share the DRAM bandwidth: the layer takes at least all
its beats at the bandwidth.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache
from math import ceil, lcm, prod

import numpy as np

from lego_build.ir.adg import ADG
from lego_build.ir.host import HostMap
from lego_build.ir.mapping import Mapping
from lego_build.ir.soc import MemSys, SocMap
from lego_build.ir.workload import Kernel
from lego_build.mapping.sim_tile import fit_tile, strides
from rtl_templates_free.primitives import PPU_STAGES

MAX_BURST = 256
#: a run's first burst goes out from the address channel's burst register, a cycle after the walker
#: reaches the run (lego_build.emit.soc.walkers.burst_channel, issue 45)
ISSUE = 1
LOAD_START = 1  # the load engine's start after the sequencer's decision (the decision: one cycle)
STORE_EXTRA = 5  # the store engine's start (2 cycles), the last write response and the done flag (3)
#: a store's first beat taken into the write path after its start: the engine and its walkers, then its
#: first burst's address (the burst register, ``ISSUE``) and the bank read of the head row
#: (lego_build.emit.soc.storer._bank_reads), a beat waiting for both
STORE_DATA = 2 + ISSUE
#: a beat's cycles from its take to AXI W: the storer's write path (lego_build.emit.soc.storer.W_PATH:
#: its first stage, the PPU's pipelined lanes and table registers, the output register), issues 44, 45
WRITE_PATH = 1 + PPU_STAGES + 1


@dataclass(frozen=True)
class Grid:
    """A layer's tile grid: per level (outer to inner), the layer's trips and a full tile's."""

    trips: tuple[int, ...]
    full: tuple[int, ...]

    @cached_property
    def tiles(self) -> tuple[int, ...]:
        return tuple(-(-t // f) for t, f in zip(self.trips, self.full))

    @cached_property
    def rem(self) -> tuple[int, ...]:
        return tuple(t - (n - 1) * f for t, f, n in zip(self.trips, self.full, self.tiles))

    @property
    def count(self) -> int:
        return prod(self.tiles)

    @cached_property
    def _levels(self) -> tuple[tuple[int, int, int], ...]:
        return tuple(zip(self.tiles, self.full, self.rem))

    def bounds(self, idx: tuple[int, ...]) -> tuple[int, ...]:
        """Trips of the tile at tile index ``idx``: the remainder on a last tile (Ruby, seed 002)."""
        return tuple(r if i == n - 1 else f for i, (n, f, r) in zip(idx, self._levels))


@dataclass(frozen=True)
class Traffic:
    """How one tensor moves: bytes per row, the levels it depends on, the level whose rows
    are contiguous in DRAM (one burst), and whether it is the output."""

    slot: int
    depends: tuple[bool, ...]
    run_level: int | None
    output: bool = False
    fill: int = 1  # rows one beat carries into the banks (a run's rows share beats)
    stride: tuple[int, ...] = ()  # rows between DRAM rows one trip apart, per level (where runs start)


@dataclass(frozen=True)
class MemSystem:
    bus_bytes: int
    bytes_per_cycle: float
    latency: int
    outstanding: int
    program_cycles: int  # writing the array's bound registers before each tile
    drain: int  # the array's cycles after its last step
    read_drain: int = 0  # cycles after the last step until its last input-bank read (0: drain)
    period: int = 1  # shared output lanes: an accumulation takes at least this many cycles (HostMap.held)

    @cached_property
    def rate(self) -> float:
        return min(1.0, self.bytes_per_cycle / self.bus_bytes)

    def credit(self, idle: float) -> float:
        """Beats the DRAM takes at one per cycle after ``idle`` cycles without a beat on a channel
        slower than the bus: its bandwidth is a bucket that fills at ``bytes_per_cycle`` up to two
        beats (:mod:`lego_build.sim.soc_tb`), then each beat takes one bus width from it."""
        return min(CREDIT, max(0.0, idle) * self.rate) if self.rate < 1 else 0.0


#: the beats the DRAM model's bandwidth bucket holds (lego_build.sim.soc_tb)
CREDIT = 2.0


def bursts(t: Traffic, bounds: tuple[int, ...], bus_bytes: int, first: tuple[int, ...] = ()) -> tuple[int, int]:
    """(bursts, beats) that move ``t``'s box of rows for a tile of ``bounds`` whose first
    trips are ``first``: a row is ``slot / bus`` full beats or one narrow beat; a run of
    contiguous rows is one INCR burst, split at 256 beats and at 4 KB. The model counts the
    4 KB from the run's start; the DMA splits at the address's own boundary, so a run may take
    one burst more there (the beats are the same: runs start at a multiple of the row's
    power-of-two size). With ``fill`` rows per beat a run takes the transfers of
    ``fill * slot`` bytes its rows touch: its first row's place in a transfer is its DRAM
    row index modulo ``fill`` (images start 4 KB-aligned), worked out for every run of the
    tile from the levels' strides."""
    rows = prod(b for b, d in zip(bounds, t.depends) if d)
    per_row = max(1, t.slot // bus_bytes)
    if t.run_level is None:
        return rows, rows * per_row
    run = bounds[t.run_level]
    runs = rows // run
    k = t.fill
    longest = min(MAX_BURST, 4096 // (min(t.slot, bus_bytes) * k))
    if k == 1:
        beats = run * per_row
        return runs * ceil(beats / longest), runs * beats
    first = first or (0,) * len(bounds)
    places = np.zeros(k, dtype=np.int64)  # runs of the tile by their first row's place in a transfer
    places[(first[t.run_level] * t.stride[t.run_level]) % k] = 1
    for l, (b, d) in enumerate(zip(bounds, t.depends)):
        if d and l != t.run_level:
            here = np.bincount(((first[l] + np.arange(b)) * t.stride[l]) % k, minlength=k)
            places = np.array([sum(places[(p - q) % k] * here[q] for q in range(k)) for p in range(k)])
    per_place = [(p + run + k - 1) // k for p in range(k)]
    return (int(sum(n * ceil(b / longest) for n, b in zip(places, per_place))),
            int(sum(n * b for n, b in zip(places, per_place))))


def transfer(ms: MemSystem, segments: tuple[tuple[int, int], ...], idle: float = float("inf")) -> float:
    """Cycles to move ``segments`` (per tensor, in the DMA's order: ``(bursts, beats)``, a
    segment's bursts of equal length) when the channel has had no beat for ``idle`` cycles
    before the first one's data (:func:`waves`)."""
    spans = waves(ms, segments, idle)
    return spans[-1][1] if spans else 0.0


def waves(ms: MemSystem, segments: tuple[tuple[int, int], ...], idle: float = float("inf")) \
        -> tuple[tuple[float, float], ...]:
    """When each wave of a transfer's data streams, from the transfer's start: the bursts go out
    one per cycle while fewer than ``outstanding`` are in flight; a burst's data starts the
    latency after its address, after the data before it. Taken in waves of ``outstanding``
    bursts (the first bursts of the load, the next ones, ...): wave ``w + 1``'s first burst goes
    out a cycle after wave ``w``'s first burst has delivered its last beat, so its data starts at
    the later of the end of wave ``w``'s data and that burst's end plus the latency; a wave's
    data is its beats at the bandwidth, whose first beats spend the credit saved up while the
    channel waited (:meth:`MemSystem.credit`: ``idle`` cycles before the first wave, the gap
    before each later one). Between waves the channel is free for other beats (a store's)."""
    live = tuple((n, beats) for n, beats in segments if n)
    if not live:
        return ()
    return _waves(ms.latency, ms.rate, round(ms.credit(idle), 3), ms.credit(1e18), ms.bus_bytes / ms.bytes_per_cycle,
                  ms.outstanding, live)


@lru_cache(maxsize=4096)
def _waves(latency: int, rate: float, credit: float, most: float, refill: float, outstanding: int,
           segments: tuple[tuple[int, int], ...]) -> tuple[tuple[float, float], ...]:
    """:func:`waves` (memoised: a layer's loads repeat the same few segment lists). ``credit``:
    the beats the first wave may take at one per cycle; ``most``: the bucket's size;
    ``refill``: the idle cycles that give back one beat of it."""
    sizes = np.repeat([beats / n for n, beats in segments], [n for n, _ in segments])
    count = len(sizes)
    n_waves = -(-count // outstanding)
    padded = np.zeros(n_waves * outstanding)
    padded[:count] = sizes
    wave_beats = padded.reshape(n_waves, outstanding).sum(axis=1).tolist()
    firsts = padded[::outstanding].tolist()
    start, free = latency + 2.0 + ISSUE, credit
    spans = []
    for w in range(n_waves):
        fast = min(wave_beats[w], free)
        end = start + fast + (wave_beats[w] - fast) / rate
        spans.append((start, end))
        if w + 1 < n_waves:
            nxt = max(end, start + min(firsts[w], free) + max(0.0, firsts[w] - free) / rate + 1 + latency)
            free = min(most, (nxt - end) / refill)
            start = nxt
    return tuple(spans)


class _Channel:
    """The DRAM channel's read beats in time (loads run one after another, so the intervals
    come in order): how much of a window reads occupy."""

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.prefix = [0.0]

    def add(self, start: float, end: float) -> None:
        if end > start:
            self.starts.append(start)
            self.ends.append(end)
            self.prefix.append(self.prefix[-1] + end - start)

    def last(self, t: float) -> float:
        """When the last read beat before ``t`` ended (``t`` while reads stream at ``t``)."""
        i = bisect_left(self.starts, t)  # the intervals that start before t
        return min(t, self.ends[i - 1]) if i else float("-inf")

    def busy(self, lo: float, hi: float) -> float:
        i0, i1 = bisect_right(self.ends, lo), bisect_left(self.starts, hi)
        if i0 >= i1:
            return 0.0
        total = self.prefix[i1] - self.prefix[i0] - max(0.0, lo - self.starts[i0]) - max(0.0, self.ends[i1 - 1] - hi)
        return max(0.0, total)

    def lengthen(self, first: float, end: float, tail: float, stream: float, yielded: float) -> float:
        """A store's end when its window from ``first`` to ``end - tail`` loses ``yielded`` of the
        read beats in it: ``end = first + stream + yielded * busy(first, end - tail) + tail``
        iterated from ``end`` (at most 64 times), :meth:`busy` inlined with its lower end fixed."""
        starts, ends, prefix = self.starts, self.ends, self.prefix
        i0 = bisect_right(ends, first)
        if i0 >= len(starts):  # no read beat after first
            return end
        p0, m0 = prefix[i0], max(0.0, first - starts[i0])
        i1 = i0
        for _ in range(64):
            hi = end - tail
            i1 = bisect_left(starts, hi, i1)
            busy = 0.0
            if i0 < i1:  # max(0, ...) as conditionals: the same values, without the calls
                over = ends[i1 - 1] - hi
                total = prefix[i1] - p0 - m0 - (over if over > 0.0 else 0.0)
                busy = total if total > 0.0 else 0.0
            longer = first + stream + yielded * busy + tail
            if longer <= end + 1e-9:
                break
            end = longer
        return end


class _TilePlan:
    """What :func:`layer_cycles` needs of each tile of ``grid``, worked out once per kind of tile:
    a tile's bounds depend only on which of its levels are at their last trip, so its steps, the
    bursts of the input tensors it loads (:func:`bursts`) and of the output it stores come from a
    table keyed by that pattern and the tensors its moving levels index (tensors packing several
    rows per beat add the tile's offsets modulo their packing). Tiles in the order of
    ``np.ndindex(*grid.tiles)``."""

    def __init__(self, grid: Grid, inputs: list[Traffic], out: Traffic, reduction: np.ndarray, bus: int,
                 period: int = 1) -> None:
        n = grid.tiles
        levels = len(n)
        idx = np.indices(n).reshape(levels, -1).T if levels else np.zeros((1, 0), dtype=np.int64)
        self.count = len(idx)
        last = idx == np.array(n) - 1
        moved = np.ones_like(last)
        moved[1:] = idx[1:] != idx[:-1]
        weights = 1 << np.arange(levels, dtype=np.int64)
        pattern = (last * weights).sum(axis=1)
        loads = np.zeros(self.count, dtype=np.int64)
        for k, t in enumerate(inputs):
            dep = np.array(t.depends, dtype=bool)
            loads |= (moved & dep).any(axis=1).astype(np.int64) << k
        # the first tile loads every input; later ones only what their moving levels index (the rest
        # stays in its half), so a tensor held whole in the array (no level indexes it) once
        loads[0] = (1 << len(inputs)) - 1
        packed = [k for k, t in enumerate(inputs) if t.fill > 1]
        modulus = lcm(*(inputs[k].fill for k in packed)) if packed else 1
        full, rem = grid.full, grid.rem
        bounds = {}

        def bounds_of(code: int) -> tuple[int, ...]:
            if code not in bounds:
                bounds[code] = tuple(r if code >> l & 1 else f for l, (f, r) in enumerate(zip(full, rem)))
            return bounds[code]

        table: dict = {}
        moves = []
        for j, (code, mask) in enumerate(zip(pattern.tolist(), loads.tolist())):
            # a packed tensor's bursts see the tile's offsets modulo its packing (:func:`bursts`)
            key = (code, mask) if not packed else (code, mask, tuple((idx[j] * full % modulus).tolist()))
            seg = table.get(key)
            if seg is None:
                b = bounds_of(code)
                start = tuple(int(i) * f for i, f in zip(idx[j], full))
                seg = table[key] = tuple(bursts(t, b, bus, start) for k, t in enumerate(inputs) if mask >> k & 1)
            moves.append(seg)
        self.moves = moves
        self.keys = [id(m) for m in moves]
        codes = pattern.tolist()
        # a tile's steps; with shared output lanes an accumulation shorter than ``period`` is held
        # that long (lego_build.emit.ctrl)
        red = reduction.tolist()
        steps = {code: prod(b for b, r in zip(bounds_of(code), red) if not r)
                 * max(period, prod(b for b, r in zip(bounds_of(code), red) if r)) for code in set(codes)}
        self.steps = [steps[c] for c in codes]
        self.firsts = (~(idx.astype(bool) & reduction).any(axis=1)).tolist()
        stored = (last | ~reduction).all(axis=1).tolist()
        ends = {}
        for c, s in zip(codes, stored):
            if s and c not in ends:
                b = bounds_of(c)
                ends[c] = bursts(out, b, bus)[1]
        self.ends = [ends[c] if s else None for c, s in zip(codes, stored)]
        self._spans: dict = {}

    def waves(self, ms: MemSystem, j: int, idle: float) -> tuple[tuple[float, float], ...]:
        """:func:`waves` of tile ``j``'s load, memoised by its segments and the credit ``idle`` gives."""
        key = (self.keys[j], round(ms.credit(idle), 3))
        spans = self._spans.get(key)
        if spans is None:
            spans = self._spans[key] = waves(ms, self.moves[j], idle)
        return spans


def layer_cycles(grid: Grid, tensors: list[Traffic], ms: MemSystem) -> dict:
    """Predicted cycles of the whole layer, with the parts: compute (the array's steps), load,
    and the bursts' beats.

    Loads and stores share the DRAM channel, reads first (a write beat goes when no read beat
    is ready, as DRAM controllers favour reads): a store takes its own time plus the time the
    read beats that pass during it take from it (all of theirs at one bus width per cycle,
    none at two). Loads depend only on earlier tiles' reads, so load ``j+2`` is placed as
    soon as tile ``j`` has started, and a store's end is worked out when something waits for
    it, by which time every load that can overlap it is placed."""
    out = next(t for t in tensors if t.output)
    inputs = [t for t in tensors if not t.output]
    reduction = np.array([not d for d in out.depends], dtype=bool)
    plan = _TilePlan(grid, inputs, out, reduction, ms.bus_bytes, ms.period)
    moves = plan.moves
    channel = _Channel()
    load_end: list[float] = []
    load_total = 0.0

    def place_load(j: int, half_free: float) -> None:
        nonlocal load_total
        begin = max(load_end[-1] + 1 if load_end else 1.0, half_free) + LOAD_START
        # the DRAM's bucket fills while no beat passes: since the last read or known store beat
        # (before the first load: the host's set-up, so full)
        quiet = begin + ms.latency + 2 + ISSUE - max(channel.last(begin), written)
        spans = plan.waves(ms, j, quiet)
        load = spans[-1][1] if spans else 0.0
        load_total += load
        load_end.append(begin + load)
        for lo, hi in spans:
            channel.add(begin + lo, begin + hi)

    stores: list[list] = []  # per output tile: [its last tile's drain end, beats, end or None]
    # the share of a write's time lost while reads stream: none when the DRAM can take a read
    # and a write beat in one cycle (bandwidth of two bus widths), all of it at one bus width
    capacity = ms.bytes_per_cycle / ms.bus_bytes
    yielded = 1.0 - max(0.0, min(1.0, capacity - 1.0)) / min(1.0, capacity)

    ended = 0  # the stores whose end is known: each starts after the one before it ends
    written = float("-inf")  # when the last of those stores' write beats went
    tail = ms.latency + STORE_EXTRA - 1  # a store's cycles after its last write beat

    def store_end(o: int) -> float:
        nonlocal ended, written
        while ended <= o:  # in order, each once (not recursive: a recursive closure is a reference cycle)
            rec = stores[ended]
            start = max(rec[0] + 1, stores[ended - 1][2] if ended else 0.0)
            # a write burst does not wait for the one before it: the latency once, for the last
            # write response; the beats at the bandwidth (the first on the credit the bucket saved
            # up since the last beat), a beat a cycle at most
            first = start + STORE_DATA + WRITE_PATH
            fast = min(rec[1], ms.credit(first - max(channel.last(first), written)))
            stream = fast + (rec[1] - fast) / ms.rate
            # the read beats inside the store's data window (its write beats run from STORE_DATA
            # after its start to the write response's latency and the done flag before its end)
            # lengthen it
            end = channel.lengthen(first, first + stream + tail, tail, stream, yielded)
            rec[2] = end
            written = end - tail
            ended += 1
        return stores[o][2]

    count = plan.count
    for j in range(min(2, count)):
        place_load(j, 0.0)
    started, steps_end, last_fin = -1.0, 0.0, 0.0
    fins = [-1.0, -1.0]  # by tile parity: when the tile two back drained
    out_tile, total_beats, compute_total = -1, sum(bb for segs in moves for _, bb in segs), 0.0
    drain, read_drain, program = ms.drain, (ms.read_drain or ms.drain), ms.program_cycles
    for j, (steps, first, ends) in enumerate(zip(plan.steps, plan.firsts, plan.ends)):
        if first:
            out_tile += 1
        ready = max(load_end[j], store_end(out_tile - 2) if first and out_tile >= 2 else 0.0) + 1
        started = max(ready, started + program + 2, steps_end, fins[j % 2] + 1)  # two in flight
        steps_end = started + steps + 1
        compute_total += steps
        last_fin = fins[j % 2] = started + steps + drain
        if j + 2 < count:
            place_load(j + 2, started + steps + read_drain + 1)  # the half tile j read
        if ends is not None:  # ends its output tile: the beats it stores
            total_beats += ends
            stores.append([last_fin, ends, None])
    last = store_end(len(stores) - 1) if stores else last_fin
    cycles = max(last, ms.latency + total_beats * ms.bus_bytes / ms.bytes_per_cycle) + 1
    return {"cycles": round(cycles), "compute": round(compute_total), "load": round(load_total),
            "beats": total_beats}


# ------------------------------------------------------------ a layer on a generated memory system
def grid(kernel: Kernel, mapping: Mapping, depth, tile: dict | None,
         period: int = 1) -> tuple[Grid, Kernel, Mapping]:
    """The tile grid of the layer: the mapper's controller tile (``tile``), halved until
    every tensor's tile fits one bank half of ``depth`` words (an accumulation kept at ``period``
    steps or more where a halving elsewhere fits too: :func:`lego_build.mapping.sim_tile.fit_tile`)."""
    tk, tm = fit_tile(kernel, mapping, depth, 1 << 62, tile, period)
    return Grid(tuple(lp.bound for lp in mapping.temporal), tuple(lp.bound for lp in tm.temporal)), tk, tm


def moving(st: np.ndarray, trips: tuple[int, ...]) -> list[int]:
    """Strides with the levels that never move (one trip in the layer) at zero."""
    return [int(s) if t > 1 else 0 for s, t in zip(st, trips)]


def layer_traffic(hm: HostMap, sm: SocMap, kernel: Kernel, mapping: Mapping, tk: Kernel, tm: Mapping,
                  g: Grid, df: int) -> list[Traffic]:
    """How each tensor moves between DRAM and the banks over the layer's tile grid ``g``
    (``tk``/``tm``: the tile's kernel and mapping, whose strides address the banks), in rows of
    the dataflow ``df``'s packed width."""
    traffic = []
    for ti, t in enumerate(hm.tensors):
        image = moving(strides(kernel, mapping, t), g.trips)
        bank = moving(strides(tk, tm, t), g.trips)
        run = [l for l in range(hm.levels) if image[l] == 1]
        output = ti == len(hm.tensors) - 1
        traffic.append(Traffic(sm.slot(ti, df), tuple(b != 0 for b in bank), run[0] if run else None, output,
                               1 if output else hm.rows_of(ti), tuple(image)))
    return traffic


def predict_layer(hm: HostMap, sm: SocMap, adg: ADG, kernel: Kernel, mapping: Mapping, dataflow: str,
                  tile: dict | None, memsys: MemSys) -> dict:
    """The latency model's cycles for a whole layer from its mapping alone (what the simulate
    stage's whole-layer runs are checked against; no data, no RTL)."""
    g, tk, tm = grid(kernel, mapping, adg.capacities(dataflow), tile, hm.out_period(dataflow))
    di = hm.dataflows.index(dataflow) if hm.dataflows else 0
    return layer_cycles(g, layer_traffic(hm, sm, kernel, mapping, tk, tm, g, di),
                        mem_system(hm, sm, memsys, hm.out_period(dataflow)))


def mem_system(hm: HostMap, sm: SocMap, memsys: MemSys, period: int = 1) -> MemSystem:
    """The timing the latency model runs: the bus of ``sm`` (its width, emitted from
    ``memsys.axi_data_bits``), the DRAM of ``memsys`` and the array's pipeline (``hm``; ``period``:
    its shortest accumulation under the layer's dataflow, :meth:`HostMap.out_period`)."""
    return MemSystem(sm.bus_bytes, memsys.dram_bytes_per_cycle, memsys.dram_latency_cycles, sm.max_outstanding,
                     hm.levels, hm.drain, hm.read_drain, period)


@dataclass(frozen=True)
class MemView:
    """The generated memory system as the map stage sees it (from ``dag.json`` and the arch):
    enough to run :func:`predict_layer` on a candidate mapping."""

    hm: HostMap
    sm: SocMap
    adg: ADG
    memsys: MemSys

    def cycles(self, kernel: Kernel, mapping: Mapping, dataflow: str, tile: dict | None) -> int:
        return predict_layer(self.hm, self.sm, self.adg, kernel, mapping, dataflow, tile, self.memsys)["cycles"]
