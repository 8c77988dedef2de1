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
  those spatial loops. Without window forwarding (``Hierarchy.window_forwarding``) PEs
  share only identical blocks: the child's footprint times the spatial trips of the dims
  the tensor depends on. Every word entering or leaving a PE costs one hop.
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

from math import ceil, prod

from lego_build.ir.mapping import Schedule
from lego_build.ir.memory import Hierarchy
from lego_build.ir.workload import Kernel, TensorAccess
from lego_build.mapping.grid import MAC, DimTiling, Evaluation, Grid, dim_tiling, in_order, positions, role
from lego_build.mapping.rtml import average_footprint, row_footprint, row_terms
from lego_build.mapping.tiling import Tiling


class Model:
    """Evaluates schedules of one kernel on one hierarchy (precomputes what does not depend on them)."""

    def __init__(self, kernel: Kernel, h: Hierarchy, operand_bits: int | None = None, tile_overhead: int = 0,
                 period: int = 1):
        self.kernel, self.h, self.tile_overhead = kernel, h, tile_overhead
        # shared output lanes (lego_build.ir.outshare): an accumulation at the controller level (the
        # array's fan-out level) takes at least ``period`` cycles, a shorter one holding its first step
        self.period = period
        self.reduction = tuple(kernel.dims[d].name for d in kernel.reduction_dims)
        # memos (a search asks the same questions of many schedules)
        self._dim: dict[tuple, DimTiling] = {}  # dim_tiling(): per (dim, its spatial factors, its tiles)
        self._grids: dict[tuple, Grid] = {}  # _grid(): per (spatial, tiles)
        self._spatial: dict[tuple, str] = {}  # check_spatial(): per unrolling
        self._levels: dict[tuple, Evaluation | None] = {}  # level_overflow(): per (level, tile extents)
        self._footprints: dict[tuple, float] = {}  # _words(): per (tensor, block extents)
        self._reaches: dict[tuple, tuple] = {}  # _reach(): per loops that iterate at each position
        self._axes: dict[tuple, dict[str, tuple[int, int]]] = {}  # dim_tilings(): per unrolling
        self.pos = positions(h)
        self.kinds = tuple(k for k, _ in self.pos)
        self.t_pos = {lv: i for i, (k, lv) in enumerate(self.pos) if k == "T"}
        self.s_pos = tuple(i for i, (k, _) in enumerate(self.pos) if k == "S")
        self.t_positions = tuple(i for i, (k, _) in enumerate(self.pos) if k == "T")
        self.dims = tuple(d.name for d in kernel.dims)
        # a block's positions: those >= start, plus (spatial) the array's above it
        self._inside = {(start, spatial): tuple(range(start, len(self.pos))) + tuple(
            j for j in self.s_pos if spatial and j < start) for start in range(len(self.pos) + 1)
            for spatial in (False, True)}
        self.bound = {d.name: d.bound for d in kernel.dims}
        self.macs = kernel.macs
        self.roles = {t.name: role(kernel, t) for t in kernel.tensors}
        self._tensors = {t.name: t for t in kernel.tensors}
        self._rows = {t.name: row_terms(t) for t in kernel.tensors}  # footprints: rtml.row_footprint
        self._depends = {t.name: tuple(i for i in range(len(kernel.dims)) if t.depends_on(i)) for t in kernel.tensors}
        self._whole: dict[tuple, int] = {}  # _footprint(): per (tensor, extents of its dims)
        # per memory level: the dims (kernel indices) whose extents change what its tiles need
        self.level_dims = tuple(frozenset(i for t in kernel.tensors if self.roles[t.name] in lv.roles
                                          for i in self._depends[t.name]) for lv in h.levels)
        self.level_index = tuple(tuple(sorted(dims)) for dims in self.level_dims)  # (the same, as a tuple)
        self.rel = {t.name: frozenset(d.name for i, d in enumerate(kernel.dims) if t.depends_on(i))
                    for t in kernel.tensors}
        self.final_bits = operand_bits or max(t.bits for t in kernel.inputs)
        top = len(h.levels) - 1
        self.holders = {t.name: tuple(i for i, lv in enumerate(h.levels) if self.roles[t.name] in lv.roles or i == top)
                        for t in kernel.tensors}
        # per tensor: (tensor, output?, dims it depends on, its chain steps (child, parent, the child's
        # first position, skip loops that do not index it?, spatial loops in between?)), MAC first
        fan, n = h.fanout, len(self.pos)
        self._chains = tuple(
            (t, t.role == "out", self.rel[t.name], tuple(
                (child, parent, n if child == MAC else self.t_pos[child],
                 child != MAC or (h.operand_reuse and t.role != "out"), child < fan <= parent)
                for child, parent in zip((MAC,) + self.holders[t.name], self.holders[t.name])))
            for t in kernel.tensors)

    # ------------------------------------------------------------------ structure
    def dim_tiling(self, d: str, spatial: tuple[int, int], tiles: tuple[int, ...]) -> DimTiling:
        """Dim ``d``'s Ruby tiling with ``spatial`` (rows, cols) and temporal ``tiles`` (inner ->
        outer; the missing ones 1). A search asks the same dim's factors for many schedules:
        memoised per model."""
        key = (d, spatial, tiles)
        if (out := self._dim.get(key)) is None:
            f = tuple(spatial[lv] if kind == "S" else tiles[lv] if lv < len(tiles) else 1 for kind, lv in self.pos)
            out = self._dim[key] = DimTiling(dim_tiling(self.bound[d], f, self.kinds))
        return out

    def tilings(self, s: Schedule) -> dict[str, Tiling]:
        """Each dim's Ruby tiling under ``s`` (:meth:`dim_tiling`)."""
        return {d: t.tiling for d, t in self.dim_tilings(s).items()}

    def dim_tilings(self, s: Schedule) -> dict[str, DimTiling]:
        """Each dim's :class:`DimTiling` under ``s`` (memoised per dim, its unrolling and tiles)."""
        if (axes := self._axes.get(s.spatial)) is None:
            per: dict[str, list[int]] = {}
            for a, entries in enumerate(s.spatial[:2]):
                for d, p in entries:
                    per.setdefault(d, [1, 1])[a] *= p
            axes = self._axes[s.spatial] = {d: tuple(per.get(d, (1, 1))) for d in self.dims}
        tiles = dict(s.tiles)
        return {d: self.dim_tiling(d, axes[d], tiles.get(d, ())) for d in self.dims}

    def _grid(self, s: Schedule) -> Grid:
        """:class:`Grid` of ``s``'s spatial unrolling and tiles (kept per model)."""
        key = (s.spatial, s.tiles)
        if (g := self._grids.get(key)) is None:
            dims = self.dim_tilings(s)
            derived = {d: t.derived() for d, t in dims.items()}  # (iterations, trips, steps)
            trip = {d: x[1] for d, x in derived.items()}
            # the dims that iterate at each position: a temporal one's in dims order, an axis' as it lists them
            movers: list[list[str]] = [[] for _ in self.pos]
            for d in self.dims:
                for j in dims[d].moving(self.t_positions):
                    movers[j].append(d)
            for a, j in enumerate(self.s_pos):
                if a < len(s.spatial):
                    movers[j] = [d for d, _ in s.spatial[a] if trip[d][j] != 1.0]
            g = self._grids[key] = Grid(
                dims=dims, trip=trip, overflow=False,
                movers=tuple(map(tuple, movers)),
                fanout=prod(trip[d][j] for d in self.dims for j in self.s_pos),
                tiles=prod(derived[d][0][0] for d in self.dims), steps=prod(derived[d][2] for d in self.dims),
                tilings=tuple(sorted((d, t.tiling) for d, t in dims.items())), blocks={}, nests={}, reach=(),
                runs={})
            if (reach := self._reaches.get(g.movers)) is None:
                reach = self._reaches[g.movers] = self._reach(g.movers)
            g.reach = reach
        return g

    def _reach(self, movers: tuple[tuple[str, ...], ...]) -> tuple[tuple[int, int, tuple[frozenset, ...]], ...]:
        """Per temporal level with two or more loops: the dims of each tensor whose stationarity scan
        (:meth:`evaluate`: the innermost loops above a child block that do not index the tensor are
        skipped) gets there, i.e. no loop between the child's block and the level indexes it."""
        reached: dict[int, list[frozenset]] = {}
        for _, _, rel, steps in self._chains:
            for _, _, start, skip, _ in steps:
                if not skip:
                    continue
                for j in range(start - 1, -1, -1):  # outwards from the block, up to the first level that indexes it
                    if self.kinds[j] == "T":
                        if len(movers[j]) > 1 and rel not in (rels := reached.setdefault(j, [])):
                            rels.append(rel)
                        if any(d in rel for d in movers[j]):
                            break
        return tuple((self.pos[j][1], j, tuple(rels)) for j, rels in sorted(reached.items()) if rels)

    def order_key(self, g: Grid, s: Schedule) -> tuple:
        """What of ``s``'s loop orders the counts see: per level that a tensor's stationarity scan
        reaches (:meth:`_reach`), the innermost run of loops that do not index it (None: all of the
        level's loops, and the scan goes on above). Two orders with the same key give the same
        counts: a search's orders of a tiling differ mostly where no tensor can stay (e.g. the
        innermost scratchpad's, when the MAC reads every operand), evaluated once (``Grid.nests``)."""
        key = []
        for lv, j, rels in g.reach:
            order = s.orders[lv] if lv < len(s.orders) else ()
            if (runs := g.runs.get((lv, order))) is None:
                movers = g.movers[j]
                seq = in_order(movers, order)
                runs = []
                for rel in rels:
                    n = 0
                    while n < len(seq) and seq[-1 - n] not in rel:
                        n += 1
                    runs.append(frozenset(seq[len(seq) - n:]) if n < len(seq) else None)
                runs = g.runs[(lv, order)] = tuple(runs)
            key.append(runs)
        return tuple(key)

    def check_spatial(self, s: Schedule) -> str:
        if (reason := self._spatial.get(s.spatial)) is None:
            reason = self._spatial[s.spatial] = self._check_spatial(s)
        return reason

    def _check_spatial(self, s: Schedule) -> str:
        for axis, (name, size) in enumerate((("rows", self.h.rows), ("cols", self.h.cols))):
            used = prod(p for _, p in s.spatial[axis]) if axis < len(s.spatial) else 1
            if used > size:
                return f"spatial unrolling uses {used} {name} > {size}"
        return ""

    def evaluate(self, s: Schedule, capacity: bool = True) -> Evaluation:
        """Energy, accesses and cycles of ``s``; a tile that overflows its level rejects it, unless
        ``capacity`` is False (a search's estimate of a partial schedule whose outer tiles are not
        chosen yet: :meth:`lego_build.mapping.searches.Rtml._walk`)."""
        h = self.h
        if reason := self.check_spatial(s):
            return Evaluation(False, reason)
        g = self._grid(s)
        if capacity:
            if (over := g.overflow) is False:
                over = g.overflow = self.overflow(s, g.dims)
            if over is not None:
                return over
        if (same := g.nests.get(nest := self.order_key(g, s))) is not None:
            return same  # another order of the same counts
        dims, blocks, trip = g.dims, g.blocks, g.trip
        # ---- loops, outer -> inner: (dim, spatial?, average trips); cut[j]: loops above position j.
        # A loop of one trip changes no count below (x 1.0, and a stationary block stays so): left out.
        loops, cut = [], []
        for j, (kind, lv) in enumerate(self.pos):
            cut.append(len(loops))
            movers = g.movers[j]
            if kind == "T" and len(movers) > 1 and lv < len(s.orders):
                movers = in_order(movers, s.orders[lv])
            loops += [(d, kind == "S", trip[d][j]) for d in movers]
        cut.append(len(loops))
        acc: dict[tuple[int, str], list[float]] = {}
        network: dict[str, float] = {}
        fanout = g.fanout  # average active PEs per step

        def footprint(t: TensorAccess, start: int, spatial: bool = False) -> float:
            if (words := blocks.get(wkey := (t.name, start, spatial))) is None:
                if (key := (start, spatial)) not in blocks:
                    inside = self._inside[key]
                    blocks[key] = tuple([dims[d].extent(key, inside) for d in self.dims])
                words = blocks[wkey] = self._words(t, blocks[key])
            return words

        def shared(t: TensorAccess, rel: frozenset, start: int) -> float:
            """Without forwarding: every PE's fill of its own block, multicast where equal."""
            if (words := blocks.get(key := (t.name, start, None))) is None:
                words = blocks[key] = footprint(t, start) * prod(trip[d][j] for j in self.s_pos if j < start
                                                                 for d in self.dims if d in rel)  # (fixed order)
            return words

        # (words into the child's blocks, distinct words at the parent) per chain step: the child's
        # block times the trips of the loops outside it, the innermost ones that do not index the
        # tensor skipped (stationarity), spatial ones always counted
        # (``outer[n]``: the trips of loops[:n] multiplied; a scan multiplies the spatial loops of the
        # run it skips, then all from the first loop that indexes the tensor outwards)
        outer = [1.0]
        for _, _, tr in loops:
            outer.append(outer[-1] * tr)
        for t, out, rel, steps_of in self._chains:
            tname = t.name
            for child, parent, start, skip, between in steps_of:
                n, mult = cut[start], 1.0
                if skip:
                    while n:
                        d, spatial, tr = loops[n - 1]
                        if spatial:
                            mult *= tr
                        elif d in rel:  # (every loop here iterates: trips > 1)
                            break
                        n -= 1
                mult *= outer[n]
                fills = footprint(t, start) * mult
                if between:
                    widen = footprint(t, start, True) if h.window_forwarding else shared(t, rel, start)
                    distinct = widen * mult / fanout
                    network[tname] = network.get(tname, 0.0) + fills
                else:
                    distinct = fills
                if out:
                    reload = max(0.0, distinct - t.size)
                    cur = acc.setdefault((parent, tname), [0.0, 0.0])
                    cur[0] += reload
                    cur[1] += distinct
                    if child != MAC:
                        cur = acc.setdefault((child, tname), [0.0, 0.0])
                        cur[0] += fills
                        cur[1] += reload
                else:
                    acc.setdefault((parent, tname), [0.0, 0.0])[0] += distinct
                    if child != MAC:
                        acc.setdefault((child, tname), [0.0, 0.0])[1] += fills
        # ---- energy
        macs = self.macs
        breakdown = [("mac", "mac", macs * h.mac_pj)]
        accesses = []
        traffic = [0.0] * len(h.levels)
        for (m, tname), (reads, writes) in sorted(acc.items()):
            pj, bits = self.price(m, tname, reads, writes)
            breakdown.append((h.levels[m].name, self.roles[tname], pj))
            accesses.append((h.levels[m].name, self.roles[tname], reads, writes))
            traffic[m] += bits
        for tname, words in sorted(network.items()):
            breakdown.append(("network", self.roles[tname], words * self._tensors[tname].bits / 16 * h.hop_pj))
        # ---- latency
        steps = self.held_steps(g)
        compute = steps + g.tiles * self.tile_overhead
        cycles, level_cycles = self.roofline(compute, traffic)
        g.nests[nest] = Evaluation(
            valid=True, energy_pj=sum(pj for *_, pj in breakdown), breakdown=tuple(breakdown),
            accesses=tuple(accesses), compute_cycles=compute, level_cycles=tuple(level_cycles), cycles=cycles,
            utilization=macs / (steps * h.pes), tilings=g.tilings,
        )
        return g.nests[nest]

    def held_steps(self, g: Grid) -> int:
        """The cycles the array steps through ``g``'s tiles: its steps, each accumulation shorter than
        :attr:`period` held that long (:meth:`lego_build.ir.host.HostMap.held`). Per reduction dim the
        controller level runs ``k`` tiles of ``P`` trips and a last of ``R`` (Ruby, seed 002), so the
        tiles' accumulations come in at most ``2**dims`` lengths, each ``count`` times."""
        if self.period <= 1:
            return g.steps
        j, tilings = self.t_pos[self.h.fanout], dict(g.tilings)
        kinds, rest = [(1, 1)], g.steps  # (accumulations' count, their steps) per length
        for d in self.reduction:
            k, p, r = tilings[d].schedule()[j]
            rest //= k * p + r
            kinds = [(c * n, t * x) for c, t in kinds for n, x in ((k, p), (1, r)) if n]
        return rest * sum(c * max(t, self.period) for c, t in kinds)

    def price(self, m: int, tname: str, reads: float, writes: float) -> tuple[float, float]:
        """(pJ, bits moved) of ``reads`` and ``writes`` of tensor ``tname``'s words at level ``m``: a
        per-PE register file moves one word per access, a shared memory packs words into its port;
        DRAM takes an output's first write of each element at the operand width."""
        lv, t = self.h.levels[m], self._tensors[tname]
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

    def overflow(self, s: Schedule, dims: dict[str, DimTiling] | None = None) -> Evaluation | None:
        """The rejection of a schedule whose tiles do not fit (None when they all fit). The answer
        depends on the spatial unrolling and the tiles only (not the loop orders): each memory
        level's tile extents are its tilings' ``inward`` extents at the level's position, and each
        level's answer is kept (:meth:`level_overflow`). ``dims``: ``s``'s tilings when the caller has them."""
        if reason := self.check_spatial(s):
            return Evaluation(False, reason)
        dims = self.dim_tilings(s) if dims is None else dims
        names = self.dims
        for m in range(len(self.h.levels) - 1):
            j = self.t_pos[m]
            over = self.level_overflow_of(m, tuple([dims[names[i]].inward[j] for i in self.level_index[m]]))
            if over is not None:
                return over
        return None

    @property
    def level_memo(self) -> dict[tuple, Evaluation | None]:
        """:meth:`level_overflow`'s answers so far, by ``(m, extents of the dims in level_index[m])``
        (a search's inner loop reads it)."""
        return self._levels

    def level_overflow(self, m: int, sizes: tuple[int, ...]) -> Evaluation | None:
        """The rejection of a tile of extents ``sizes`` at memory level ``m`` (None when it fits;
        memoised on the extents of the dims its tensors depend on: no other changes the answer)."""
        if (key := (m, tuple([sizes[i] for i in self.level_index[m]]))) not in self._levels:
            self._levels[key] = self._level_rejection(m, sizes)
        return self._levels[key]

    def level_overflow_of(self, m: int, sizes: tuple[int, ...]) -> Evaluation | None:
        """:meth:`level_overflow` of a tile given by the extents of ``level_index[m]``'s dims alone."""
        if (key := (m, sizes)) not in self._levels:
            full = [1] * len(self.dims)
            for i, n in zip(self.level_index[m], sizes):
                full[i] = n
            self._levels[key] = self._level_rejection(m, tuple(full))
        return self._levels[key]

    def _level_rejection(self, m: int, sizes: tuple[int, ...]) -> Evaluation | None:
        lv = self.h.levels[m]
        used: dict[str, int] = {}
        for t in self.kernel.tensors:
            r = self.roles[t.name]
            if r in lv.roles:
                used[r] = used.get(r, 0) + ceil(self._footprint(t.name, sizes) * t.bits / 8)
        checks = ([(f"{lv.name} ({r})", used[r], lv.capacity(r) or 0) for r in used] if lv.partition
                  else [(lv.name, sum(used.values()), lv.size_bytes)] if used and lv.size_bytes is not None else [])
        for name, need, cap in checks:
            if need > cap:
                return Evaluation(False, f"{name}: the tile needs {need} B > {cap} B", need=(name, need, cap))
        return None

    def _footprint(self, tname: str, sizes: tuple[int, ...]) -> int:
        """:func:`~lego_build.mapping.rtml.tensor_footprint` of a tile of ``sizes``, memoised on the
        extents of the dims the tensor depends on."""
        key = (tname, tuple(sizes[i] for i in self._depends[tname]))
        if (words := self._whole.get(key)) is None:
            words = self._whole[key] = row_footprint(self._rows[tname], sizes)
        return words

    def _words(self, t: TensorAccess, extents: tuple[tuple[int, float], ...]) -> float:
        """Average footprint of ``t``'s block of ``extents`` (full, average) per dim (memoised on the
        extents of the dims it depends on: its rows see no other)."""
        key = (t.name, tuple([extents[i] for i in self._depends[t.name]]))
        if (words := self._footprints.get(key)) is None:
            if all(f == a for f, a in extents):
                words = self._footprint(t.name, tuple(f for f, _ in extents))
            else:
                words = average_footprint(t, [f for f, _ in extents], [a for _, a in extents])
            self._footprints[key] = words
        return words
