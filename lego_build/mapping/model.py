"""Interstellar analytical cost model (seed 001 ch. 5) with Ruby remainders (seed 002 eq. 5).

A :class:`Schedule` places every kernel dim on a chain of logical levels, outer ->
inner: a temporal level per shared memory (DRAM first), the two array axes (spatial),
then a temporal level per per-PE memory. Each level gets a factor ``P``; the outermost
factor is derived (``ceil``). Remainders follow the *ceil rule*: every level runs full
tiles and then one partial tile, which is split the same way below. That gives the
Ruby tiling ``(P_n, R_n)`` of :mod:`.mapspace` with ``R_n = ceil(rest / tile_{n+1})``;
other remainder choices cover the same extent with the same or more iterations, so
this reading keeps the useful part of Ruby's space. Which levels may end up imperfect
is the mapspace's rule (PFM none, Ruby-S spatial, Ruby-T temporal).

Counting (eq. 5.4-5.6, stated per element in the thesis, here multiplied out):

* A *block* is the tile of a tensor that a memory level (or a MAC, the pseudo-level
  below everything) holds: its extent per dim is the product of the trips of the
  positions inside it. With remainders a trip is the average ``T_k / T_{k-1}``, so
  a dim's extents telescope to ``D / (number of blocks)`` exactly.
* Words moved into a child block from its parent (the next level above that holds the
  tensor; bypassed levels are skipped) = block footprint x the trips of the loops
  outside it, where the innermost loops that do not index the tensor are skipped
  (the block stays resident: stationarity) and spatial loops always count (one copy
  per PE). A MAC skips nothing, except that with ``operand_reuse`` its operand register
  keeps an input word across the innermost loops that do not index it.
* The parent serves that with *distinct* words: spatial loops between parent and
  child multicast an input (and sliding-window halos overlap) or reduce an output in
  the array network, so the parent's count is the footprint of the block widened by
  those spatial loops. Every word entering or leaving a PE costs one hop.
* Outputs: the parent is written once per distinct drained word and read back for
  every drained word after the first of each element (partial sums); the first
  write of an output to DRAM is at the operand width (post-processing), later
  partial-sum traffic at ``acc`` width.
* Energy = MACs x e_MAC + sum of accesses x e_level + hops x e_hop x bits / 16. A per-PE
  register file is accessed word by word (``ceil(bits / width)`` accesses per word); a
  shared memory packs words into its port (``bits / width`` accesses per word).
* Latency (§5.2 roofline): compute steps (temporal levels add, spatial run in parallel,
  a remainder shortens the globally last iteration), plus ``tile_overhead`` per
  iteration of the outermost level (a generated array's controller restarts per tile:
  one start cycle and the pipeline latency), against each level's traffic over its
  bandwidth; double-buffered levels overlap compute, others add to it.
* Remainder tiles count a tensor's footprint at the average extents, row by row
  (:func:`lego_build.mapping.rtml.average_footprint`): exact over the tile grid for plain
  and window rows, every partial tile's halo included, so no mapping moves less than the
  words it touches.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import ceil, prod

from lego_build.ir.mapping import Schedule, score
from lego_build.ir.memory import Hierarchy
from lego_build.ir.workload import Kernel, TensorAccess
from lego_build.mapping.rtml import average_footprint, tensor_footprint
from lego_build.mapping.tiling import Level, Tiling

MAC = -1  # the pseudo-level below every memory


def role(kernel: Kernel, tensor: TensorAccess) -> str:
    if tensor.role == "out":
        return "output"
    return "input" if tensor is kernel.inputs[0] else "weight"


def positions(h: Hierarchy) -> tuple[tuple[str, int], ...]:
    """Logical levels outer -> inner: ``("T", memory level)`` or ``("S", array axis)``."""
    top, f = len(h.levels) - 1, h.fanout
    return (tuple(("T", i) for i in range(top, f - 1, -1)) + (("S", 0), ("S", 1))
            + tuple(("T", i) for i in range(f - 1, -1, -1)))


@lru_cache(maxsize=1 << 16)
def dim_tiling(D: int, factors: tuple[int, ...], kinds: tuple[str, ...]) -> Tiling:
    """The ceil-rule Ruby tiling of ``D``: ``factors`` outer -> inner (the first is derived).
    Pure and asked again for the same factors by every search step: memoised."""
    inner = [prod(factors[k + 1:]) for k in range(len(factors))]
    top = ceil(D / inner[0])
    pairs, rest = [(top, top)], D - (top - 1) * inner[0]
    for k in range(1, len(factors)):
        r = ceil(rest / inner[k])
        pairs.append((factors[k], r))
        rest -= (r - 1) * inner[k]
    parents = 1
    for k, (p, r) in enumerate(pairs):  # canonical: a level whose parent runs once has P = R
        if parents == 1:
            pairs[k] = (r, r)
        parents = (parents - 1) * pairs[k][0] + pairs[k][1]
    return Tiling(tuple(Level("spatial" if kd == "S" else "temporal") for kd in kinds), tuple(pairs))


@dataclass(frozen=True, slots=True)
class Evaluation:
    valid: bool
    reason: str = ""
    need: tuple[str, int, int] | None = None  # (level, bytes needed, bytes available) when a tile overflows
    energy_pj: float = 0.0
    breakdown: tuple[tuple[str, str, float], ...] = ()  # (level | "mac" | "network", role, pJ)
    accesses: tuple[tuple[str, str, float, float], ...] = ()  # (level, role, reads, writes) in words
    compute_cycles: int = 0
    level_cycles: tuple[tuple[str, float], ...] = ()
    cycles: int = 0
    utilization: float = 0.0
    tilings: tuple[tuple[str, Tiling], ...] = ()

    def objective(self, name: str) -> float:
        return score(name, self.energy_pj, self.cycles)

    def by_level(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for level, _, pj in self.breakdown:
            out[level] = out.get(level, 0.0) + pj
        return out

    def by_role(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for _, r, pj in self.breakdown:
            out[r] = out.get(r, 0.0) + pj
        return out


class Model:
    """Evaluates schedules of one kernel on one hierarchy (precomputes what does not depend on them)."""

    def __init__(self, kernel: Kernel, h: Hierarchy, operand_bits: int | None = None, tile_overhead: int = 0):
        self.kernel, self.h, self.tile_overhead = kernel, h, tile_overhead
        self._fits: dict[tuple, Evaluation | None] = {}  # overflow() per (spatial, tiles)
        self.pos = positions(h)
        self.kinds = tuple(k for k, _ in self.pos)
        self.t_pos = {lv: i for i, (k, lv) in enumerate(self.pos) if k == "T"}
        self.s_pos = tuple(i for i, (k, _) in enumerate(self.pos) if k == "S")
        self.dims = tuple(d.name for d in kernel.dims)
        self.bound = {d.name: d.bound for d in kernel.dims}
        self.roles = {t.name: role(kernel, t) for t in kernel.tensors}
        self.rel = {t.name: frozenset(d.name for i, d in enumerate(kernel.dims) if t.depends_on(i))
                    for t in kernel.tensors}
        self.final_bits = operand_bits or max(t.bits for t in kernel.inputs)
        top = len(h.levels) - 1
        self.holders = {t.name: tuple(i for i, lv in enumerate(h.levels) if self.roles[t.name] in lv.roles or i == top)
                        for t in kernel.tensors}

    # ------------------------------------------------------------------ structure
    def factors(self, s: Schedule, dim: str) -> tuple[int, ...]:
        tiles = next((t for d, t in reversed(s.tiles) if d == dim), ())  # as dict(s.tiles).get(dim, ())
        axis = [prod(p for d, p in ax if d == dim) for ax in s.spatial] + [1, 1]
        return tuple(axis[lv] if kind == "S" else tiles[lv] if lv < len(tiles) else 1 for kind, lv in self.pos)

    def check_spatial(self, s: Schedule) -> str:
        for axis, (name, size) in enumerate((("rows", self.h.rows), ("cols", self.h.cols))):
            used = prod(p for _, p in s.spatial[axis]) if axis < len(s.spatial) else 1
            if used > size:
                return f"spatial unrolling uses {used} {name} > {size}"
        return ""

    def evaluate(self, s: Schedule) -> Evaluation:
        k, h = self.kernel, self.h
        if reason := self.check_spatial(s):
            return Evaluation(False, reason)
        tilings = {d: dim_tiling(self.bound[d], self.factors(s, d), self.kinds) for d in self.dims}
        full = {d: tuple(p for p, _ in tilings[d].factors) for d in self.dims}
        iters = {d: tilings[d].iterations() for d in self.dims}
        trip = {d: tuple(iters[d][j] / (iters[d][j - 1] if j else 1) for j in range(len(self.pos)))
                for d in self.dims}
        if (over := self.overflow(s, full)) is not None:
            return over
        # ---- loops, outer -> inner: (dim, position, spatial?)
        order = {lv: tuple(o) for lv, o in enumerate(s.orders)}
        loops = []
        for j, (kind, lv) in enumerate(self.pos):
            if kind == "S":
                loops += [(d, j, True) for d, _ in (s.spatial[lv] if lv < len(s.spatial) else ())]
            else:
                names = order.get(lv, self.dims)
                loops += [(d, j, False) for d in (*names, *(x for x in self.dims if x not in names))]
        macs = k.macs
        acc: dict[tuple[int, str], list[float]] = {}
        network: dict[str, float] = {}

        outputs = {t.name for t in k.tensors if t.role == "out"}
        fanout = prod(trip[d][j] for d in self.dims for j in self.s_pos)  # average active PEs per step
        blocks: dict[tuple[int, bool], tuple] = {}

        def count(tname: str, child: int, parent: int) -> tuple[float, float, bool]:
            """(words into the child's blocks, distinct words at the parent, spatial in between)."""
            rel = self.rel[tname]
            start = len(self.pos) if child == MAC else self.t_pos[child]
            region = [lp for lp in loops if lp[1] < start]
            skip, mult = child != MAC or (self.h.operand_reuse and tname not in outputs), 1.0
            for d, j, spatial in reversed(region):
                t = trip[d][j]
                if spatial:
                    mult *= t
                elif skip and (d not in rel or t <= 1.0):
                    continue
                else:
                    skip = False
                    mult *= t
            between = child < h.fanout <= parent
            fills = self._words(k.tensor(tname), start, full, trip, blocks) * mult
            if not between:
                return fills, fills, False
            widen = self._words(k.tensor(tname), start, full, trip, blocks, spatial=True)
            return fills, widen * mult / fanout, True

        def add(m: int, tname: str, reads: float, writes: float) -> None:
            cur = acc.setdefault((m, tname), [0.0, 0.0])
            cur[0] += reads
            cur[1] += writes

        for t in k.tensors:
            chain = (MAC,) + self.holders[t.name]
            out = t.role == "out"
            for child, parent in zip(chain, chain[1:]):
                fills, distinct, between = count(t.name, child, parent)
                if between:
                    network[t.name] = network.get(t.name, 0.0) + fills
                if out:
                    reload = max(0.0, distinct - t.size)
                    add(parent, t.name, reload, distinct)
                    if child != MAC:
                        add(child, t.name, fills, reload)
                else:
                    add(parent, t.name, distinct, 0.0)
                    if child != MAC:
                        add(child, t.name, 0.0, fills)
        # ---- energy
        breakdown = [("mac", "mac", macs * h.mac_pj)]
        accesses = []
        traffic = [0.0] * len(h.levels)
        for (m, tname), (reads, writes) in sorted(acc.items()):
            pj, bits = self.price(m, tname, reads, writes)
            breakdown.append((h.levels[m].name, self.roles[tname], pj))
            accesses.append((h.levels[m].name, self.roles[tname], reads, writes))
            traffic[m] += bits
        for tname, words in sorted(network.items()):
            breakdown.append(("network", self.roles[tname], words * k.tensor(tname).bits / 16 * h.hop_pj))
        # ---- latency
        tiles = prod(iters[d][0] for d in self.dims)  # iterations of the outermost level: one controller run each
        steps = prod(tilings[d].cycles() for d in self.dims)
        compute = steps + tiles * self.tile_overhead
        cycles, level_cycles = self.roofline(compute, traffic)
        return Evaluation(
            valid=True, energy_pj=sum(pj for *_, pj in breakdown), breakdown=tuple(breakdown),
            accesses=tuple(accesses), compute_cycles=compute, level_cycles=tuple(level_cycles), cycles=cycles,
            utilization=macs / (steps * h.pes), tilings=tuple(sorted(tilings.items())),
        )

    def price(self, m: int, tname: str, reads: float, writes: float) -> tuple[float, float]:
        """(pJ, bits moved) of ``reads`` and ``writes`` of tensor ``tname``'s words at level ``m``: a
        per-PE register file moves one word per access, a shared memory packs words into its port;
        DRAM takes an output's first write of each element at the operand width."""
        lv, t = self.h.levels[m], self.kernel.tensor(tname)
        r_bits, w_bits = reads * t.bits, writes * t.bits
        if m == len(self.h.levels) - 1 and t.role == "out":
            w_bits = min(writes, t.size) * self.final_bits + max(0.0, writes - t.size) * t.bits
        if lv.per_pe:
            pj = (reads * lv.read_pj + writes * lv.write_pj) * ceil(t.bits / lv.width_bits)
        else:
            pj = (r_bits * lv.read_pj + w_bits * lv.write_pj) / lv.width_bits
        return pj, r_bits + w_bits

    def roofline(self, compute: float, traffic: list[float]) -> tuple[int, list[tuple[str, float]]]:
        """Cycles of ``compute`` steps against each level's ``traffic`` (bits) over its bandwidth
        (§5.2): double-buffered levels overlap compute, the others add to it; and per level."""
        h = self.h
        level_cycles, overlap, serial = [], float(compute), 0.0
        for m, lv in enumerate(h.levels):
            if lv.bandwidth_bits is None:
                continue
            c = traffic[m] / (lv.bandwidth_bits * (h.pes if lv.per_pe else 1))
            level_cycles.append((lv.name, c))
            if lv.double_buffered:
                overlap = max(overlap, c)
            else:
                serial += c
        return ceil(overlap + serial), level_cycles

    def overflow(self, s: Schedule, full: dict[str, tuple[int, ...]] | None = None) -> Evaluation | None:
        """The rejection of a schedule whose tiles do not fit (None when they all fit). The answer
        depends on the spatial unrolling and the tiles only (not the loop orders): kept per model.
        ``full`` is the schedule's per-dimension factors when the caller has them."""
        key = (s.spatial, s.tiles)
        if key not in self._fits:
            if reason := self.check_spatial(s):
                self._fits[key] = Evaluation(False, reason)
            else:
                self._fits[key] = self._overflow(full or {
                    d: tuple(p for p, _ in dim_tiling(self.bound[d], self.factors(s, d), self.kinds).factors)
                    for d in self.dims})
        return self._fits[key]

    def _overflow(self, full) -> Evaluation | None:
        k, h = self.kernel, self.h
        for m, lv in enumerate(h.levels[:-1]):
            inside = range(self.t_pos[m], len(self.pos))
            used: dict[str, int] = {}
            sizes: list[int] | None = None  # the level's tile extent per dimension (the same for every tensor)
            for t in k.tensors:
                r = self.roles[t.name]
                if r not in lv.roles:
                    continue
                if sizes is None:
                    sizes = [prod(full[d][j] for j in inside) for d in self.dims]
                used[r] = used.get(r, 0) + ceil(tensor_footprint(t, sizes) * t.bits / 8)
            checks = ([(f"{lv.name} ({r})", used[r], lv.capacity(r) or 0) for r in used] if lv.partition
                      else [(lv.name, sum(used.values()), lv.size_bytes)] if used and lv.size_bytes is not None else [])
            for name, need, cap in checks:
                if need > cap:
                    return Evaluation(False, f"{name}: the tile needs {need} B > {cap} B", need=(name, need, cap))
        return None

    def _words(self, t: TensorAccess, start: int, full, trip, memo: dict, spatial: bool = False) -> float:
        """Average footprint of ``t``'s block made of positions ``>= start`` (plus the spatial ones).
        ``memo`` (one per schedule) keeps the block's extents per ``(start, spatial)``: they do not
        depend on the tensor."""
        key = (start, spatial)
        if key not in memo:
            inside = [j for j in range(start, len(self.pos))]
            if spatial:
                inside += [j for j in self.s_pos if j < start]
            memo[key] = tuple((prod(full[d][j] for j in inside), prod(trip[d][j] for j in inside))
                              for d in self.dims)
        extents = memo[key]
        if all(f == a for f, a in extents):
            return tensor_footprint(t, [f for f, _ in extents])
        return average_footprint(t, [f for f, _ in extents], [a for _, a in extents])
