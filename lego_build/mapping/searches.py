"""The searches that walk a mapspace, ask/tell.

:class:`~lego_build.mapping.mapspace.Mapspace` (seed 002) gives the per-dim factor choices of every level and the
loop orders: ``pfm`` keeps every level perfect, ``ruby-s`` lets the array axes run a
partial last tile, ``ruby-t`` the temporal levels, ``ruby`` both. A factor is
offered when the tile it makes is *useful*: a divisor of the bound, or (imperfect
spaces) the smallest tile giving a trip count, ``ceil(D / k)``. On a generated array
the spatial unrolling is the dataflow's (its extent; a layer smaller than it leaves
FUs idle, which is Ruby-S: a partial last tile) and the controller level has the
hardware's loop-order rules.

Searches share ``ask() -> Schedule | None`` and ``tell(schedule, evaluation)``; each
keeps ``best`` and ``log`` (one entry per candidate: valid with its score, or rejected
with the reason):

* :class:`Exhaustive`: every combination (refused above ``limit`` candidates).
* :class:`RandomSearch`: Timeloop's random sampling; stops after ``patience``
  consecutive valid candidates that do not improve the best.
* :class:`Rtml` (seed 000 §3.2): unrolling candidates by utilisation, then level by
  level inner-first: the maximal tiles that fit the level (Obs. 4) x the trie's loop
  orders (R1/R2), keeping a beam of the best partial schedules (outer levels take
  the rest); a spatial candidate whose lower bound (MAC energy + compulsory DRAM
  traffic, and its compute cycles) cannot beat the best is skipped (§3.2.9).
* ``placed`` (:class:`Rtml` with ``placements``): RTML whose level candidates are, besides
  the maximal tiles, each maximal tile with one loop over a dim the level's tensors do not
  depend on left to the levels above (see :meth:`Rtml._placements`).
"""
from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from itertools import product
from math import ceil, factorial, prod
from typing import Callable, Iterator

from lego_build.config.schema import MapperConf
from lego_build.ir.mapping import Schedule, score
from lego_build.mapping.grid import Evaluation
from lego_build.mapping.mapspace import Mapspace, per_dim_spatial
from lego_build.runtime import stop
from lego_build.runtime.registry import Registry


def pad(tiles: dict[str, tuple[int, ...]], n: int) -> dict[str, tuple[int, ...]]:
    """Factors of the levels not chosen yet are 1 (the outermost level takes the rest)."""
    return {d: t + (1,) * (n - len(t)) for d, t in tiles.items()}


# ---------------------------------------------------------------------- searches
@dataclass
class Search:
    space: Mapspace
    objective: str = "energy"
    best: tuple[Schedule, Evaluation] | None = None
    log: list[dict] = field(default_factory=list)
    smallest: dict[str, tuple[int, int]] = field(default_factory=dict)  # level -> (smallest need, capacity), bytes
    keep: int = 0  # valid candidates kept besides the best: the lowest energy ones and the fewest-cycle ones
    kept: dict[str, list] = field(default_factory=dict)
    target: float | None = None  # stop once the best's objective is at most this (mapper.gap over the bound)
    evaluations: int | None = None  # stop after this many evaluated candidates (mapper.budget)
    stopped: str = ""  # why the search ended before its own end

    def tell(self, s: Schedule, ev: Evaluation) -> bool:
        """Record a candidate; True when it improves the best."""
        if not ev.valid:
            self.log.append({"status": "rejected", "reason": ev.reason})
            if ev.need is not None:
                name, need, cap = ev.need
                self.smallest[name] = min(self.smallest.get(name, (need, cap)), (need, cap))
            return False
        score = ev.objective(self.objective)
        self.log.append({"status": "valid", self.objective: score})
        if self.keep:
            for key, value in (("energy", ev.energy_pj), ("cycles", ev.cycles)):
                pool = self.kept.setdefault(key, [])
                pool.append((value, len(self.log), s, ev))
                pool.sort(key=lambda x: (x[0], x[1]))
                del pool[self.keep:]
        if self.best is None or self._better(ev, self.best[1]):
            self.best = (s, ev)
            return True
        return False

    def _better(self, ev: Evaluation, best: Evaluation) -> bool:
        """A lower objective; on a tie (within 1e-9, float sums in another order) fewer cycles,
        or for the latency objective less energy. Energy does not see the per-tile overhead,
        so without the tie-break a depthwise layer kept a one-step tile (14.9 M cycles)."""
        a, b = ev.objective(self.objective), best.objective(self.objective)
        if abs(a - b) > 1e-9 * max(abs(a), abs(b)):
            return a < b
        other = (lambda e: e.energy_pj) if self.objective == "latency" else (lambda e: e.cycles)
        return other(ev) < other(best)

    def candidates(self) -> list[tuple[Schedule, Evaluation]]:
        """The best and the kept candidates (each once), for a finer model to rank."""
        out = [self.best] if self.best else []
        for pool in self.kept.values():
            out += [(s, ev) for _, _, s, ev in pool]
        return list({id(s): (s, ev) for s, ev in out}.values())

    def reject(self, reason: str) -> None:
        self.log.append({"status": "rejected", "reason": reason})

    def reject_mirrored(self) -> None:
        """Log the unrollings the mapspace leaves out as mirror images of searched ones."""
        for spatial, twin, swap in self.space.mirrored():
            pairs = ", ".join(f"{a}<->{b}" for a, b in swap.items() if a < b)
            self.reject(f"unrolling {spatial}: the mirror image of {twin} ({pairs}: the layer and the array's "
                        "rules are symmetric), the same costs")

    def evaluate(self, s: Schedule) -> Evaluation:
        for level, order in enumerate(s.orders):
            if reason := self.space.order_reason(level, order):
                return Evaluation(False, reason)
        return self.space.m.evaluate(s)

    def run(self) -> tuple[Schedule, Evaluation] | None:
        """Ask and tell until the search ends, ``evaluations`` are spent or its best reaches ``target``."""
        evaluated = 0
        while (s := self.ask()) is not None:
            self.tell(s, self.evaluate(s))
            evaluated += 1
            if self.evaluations is not None and evaluated >= self.evaluations:
                self.stopped = f"mapper.budget: {evaluated} candidates evaluated"
            elif (self.target is not None and self.best is not None
                  and self.best[1].objective(self.objective) <= self.target):
                self.stopped = f"mapper.gap: the best is within the tolerance of the lower bound after {evaluated}"
            elif self.best is not None and stop.requested():
                self.stopped = f"interrupted (Ctrl-C): the best of {evaluated} candidates kept"
            if self.stopped:
                break
        return self.best

    def ask(self) -> Schedule | None:  # pragma: no cover - interface
        raise NotImplementedError


def _full_options(ms: Mapspace, dim: str, sp) -> list[tuple[int, ...]]:
    """Every in-space factor tuple of ``dim`` over the temporal levels inner -> outer (top excluded)."""
    out = [()]
    for level in range(ms.top):
        out = [t + (p,) for t in out for p in ms.level_options(dim, level, t, sp)]
    return out


@dataclass
class Exhaustive(Search):
    limit: int = 200_000

    def __post_init__(self):
        self._it = self._walk()

    def size(self) -> int:
        """Candidates in the space, counted up to just past ``limit``."""
        ms, total = self.space, 0
        for spatial in ms.spatial_options():
            sp = per_dim_spatial(spatial)
            opts = [_full_options(ms, d, sp) for d in ms.dims]
            if total + prod(len(o) for o in opts) > self.limit:
                return total + prod(len(o) for o in opts)
            for combo in product(*opts):
                base = ms.schedule(spatial, dict(zip(ms.dims, combo)), {})
                total += prod(factorial(len(ms.moving(base, lv))) for lv in range(ms.n_levels))
                if total > self.limit:
                    return total
        return total

    def _walk(self) -> Iterator[Schedule]:
        ms = self.space
        if self.limit and (n := self.size()) > self.limit:
            self.reject(f"exhaustive mapspace has about {n:.3g} candidates > {self.limit}: "
                        "use mapper.search=rtml or random")
            return
        self.reject_mirrored()
        for spatial in ms.spatial_options():
            sp = per_dim_spatial(spatial)
            opts = [_full_options(ms, d, sp) for d in ms.dims]
            for combo in product(*opts):
                tiles = dict(zip(ms.dims, combo))
                base = ms.schedule(spatial, tiles, {})
                level_orders = [ms.orders(lv, ms.moving(base, lv), pruned=False) or [()] for lv in range(ms.n_levels)]
                for orders in product(*level_orders):
                    yield ms.schedule(spatial, tiles, dict(enumerate(orders)))

    def ask(self) -> Schedule | None:
        return next(self._it, None)


@dataclass
class RandomSearch(Search):
    patience: int = 300
    seed: int = 0
    max_samples: int = 20_000

    def __post_init__(self):
        self._rng = random.Random(self.seed)
        self._spatial = self.space.spatial_options()
        self._opts: dict = {}
        self._stale = self._samples = 0

    def ask(self) -> Schedule | None:
        if self._stale >= self.patience or self._samples >= self.max_samples or not self._spatial:
            return None
        self._samples += 1
        ms, rng = self.space, self._rng
        spatial = rng.choice(self._spatial)
        sp = per_dim_spatial(spatial)
        tiles = {}
        for d in ms.dims:
            key = (d, sp.get(d))
            if key not in self._opts:
                self._opts[key] = _full_options(ms, d, sp)
            if not self._opts[key]:
                return ms.schedule(spatial, {x: () for x in ms.dims}, {})
            tiles[d] = rng.choice(self._opts[key])
        base = ms.schedule(spatial, tiles, {})
        orders = {}
        for lv in range(ms.n_levels):
            moving = list(ms.moving(base, lv))
            fixed = ms.orders(lv, tuple(moving), pruned=True) if dict(ms.rules.order).get(lv) else None
            if fixed:
                orders[lv] = fixed[0]
            else:
                rng.shuffle(moving)
                orders[lv] = tuple(moving)
        return ms.schedule(spatial, tiles, orders)

    def tell(self, s: Schedule, ev: Evaluation) -> bool:
        improved = super().tell(s, ev)
        if ev.valid:
            self._stale = 0 if improved else self._stale + 1
        return improved


@dataclass
class Rtml(Search):
    beam: int = 8  # partial schedules entering the outermost on-chip level (:meth:`_walk`)
    tile_cap: int = 2000  # lattice nodes visited per level before the maximal-tile scan stops
    placements: bool = False  # also offer the maximal tiles with a loop left outside (search=placed)

    def __post_init__(self):
        self._it = self._walk()
        self.skipped = 0
        self._maximals: dict[tuple, tuple[list, tuple | None]] = {}

    def ask(self) -> Schedule | None:
        return next(self._it, None)

    def _bound(self, spatial) -> float:
        """Lower bound of the objective for an unrolling: MACs + compulsory DRAM; its compute cycles."""
        m, h = self.space.m, self.space.h
        dram = h.levels[-1]
        energy = m.kernel.macs * h.mac_pj + sum(
            t.size * (m.final_bits if t.role == "out" else t.bits) / dram.width_bits
            * (dram.write_pj if t.role == "out" else dram.read_pj)
            for t in m.kernel.tensors)
        sp = per_dim_spatial(spatial)
        cycles = prod(ceil(m.bound[d] / prod(sp.get(d, (1, 1)))) for d in m.dims)
        return score(self.objective, energy, cycles)

    def _maximal(self, level: int, spatial, tiles: dict[str, tuple[int, ...]], sp) -> list[tuple[dict, tuple]]:
        """Maximal fitting factor choices at ``level`` (Obs. 4) on the useful-factor lattice, each with
        its tiles as a schedule holds them (:func:`pad`, in the space's dims order). They
        depend on the tiles inside it, not on the loop orders: the beam's entries that differ only
        in orders share them (memoised, the rejection of a level that nothing fits told again)."""
        key = (level, spatial, tuple(tiles[d] for d in self.space.dims))
        if (memo := self._maximals.get(key)) is None:
            told: list = []
            found = self._lattice(level, spatial, tiles, sp, told.append)
            if self.placements:
                found += self._placements(level, tiles, sp, found)
            ms = self.space  # each with its tiles padded to every level, as a schedule holds them
            found = [(c, tuple((d, c[d] + (1,) * (ms.top - len(c[d]))) for d in ms.dims)) for c in found]
            memo = self._maximals[key] = (found, *told[:1])
        if len(memo) > 1:
            self.tell(*memo[1])
        return memo[0]

    def _placements(self, level: int, tiles: dict[str, tuple[int, ...]], sp, maximal: list[dict]) -> list[dict]:
        """Each maximal choice with one loop over a dim that ``level``'s tensors do not depend on
        left to the levels above (its factor here 1), new choices only.

        Obs. 4 (seed 000) grows every loop into the innermost level it fits, which is right for
        one tensor per level; a loop a level's tile does not change with adds no reuse there,
        while it enlarges the tiles above it, and the per-PE scratchpads of different tensors
        keep their tiles independently. E.g. on Eyeriss's scratchpads, a maximal psum tile
        grows the reduction loop the weight scratchpad could give to output channels, whose
        loop keeps the ifmap scratchpad's words across it: ResNet-18's layer2.0.conv2 on
        AccelForge's unrolling (c4, r3 | p14) costs 572.4 uJ by maximal tiles, 430.9 uJ so
        (AccelForge 1.0.467's own model prices that mapping at 431.6 uJ, its mapper's best at
        492.0 uJ: its scratchpads nest in one order)."""
        ms = self.space
        free = [d for j, d in enumerate(ms.dims) if j not in ms.m.level_dims[level]]
        seen = {tuple(c[d] for d in ms.dims) for c in maximal}
        out = []
        for choice in maximal:
            for d in free:
                if choice[d][-1] != 1 and ms.level_options(d, level, tiles[d], sp)[:1] == (1,):
                    variant = {**choice, d: choice[d][:-1] + (1,)}
                    if (key := tuple(variant[x] for x in ms.dims)) not in seen:
                        seen.add(key)
                        out.append(variant)
        return out

    def _lattice(self, level: int, spatial, tiles: dict[str, tuple[int, ...]], sp, rejected) -> list[dict]:
        """:meth:`_maximal`'s walk: the fitting factor choices grown dim by dim until no dim can grow;
        ``rejected((schedule, evaluation))`` gets the smallest choice when even that does not fit."""
        ms = self.space
        opts = [ms.level_options(d, level, tiles[d], sp) for d in ms.dims]
        idx0 = tuple(0 for _ in opts)
        if any(not o for o in opts):
            return []

        def make(idx) -> dict[str, tuple[int, ...]]:
            return {d: tiles[d] + (o[i],) for d, o, i in zip(ms.dims, opts, idx)}

        memo: dict[tuple[int, ...], bool] = {}
        # each dim's full extents inward of each position per option (as ms.m.overflow would tile the
        # padded schedule)
        full = [[ms.m.dim_tiling(d, sp.get(d, (1, 1)), tiles[d] + (p,) + (1,) * (ms.top - len(tiles[d]) - 1)).inward
                 for p in o] for d, o in zip(ms.dims, opts)]
        unrolled = not ms.m.check_spatial(ms.schedule(spatial, pad(make(idx0), ms.top), {}))
        # the factors at ``level`` change the tiles of this memory level and those above it (DRAM
        # unbounded); those inside hold the beam entry's tiles, which fit: per level, the tile extent
        # per option of each dim its tensors depend on (no other changes its fit: Model.level_overflow)
        extents = [(m, ms.m.level_index[m], [[f[ms.m.t_pos[m]] for f in full[j]] for j in ms.m.level_index[m]])
                   for m in range(level, ms.top)]
        checked, check = ms.m.level_memo, ms.m.level_overflow_of

        def fits(idx, levels=extents) -> bool:
            if (ok := memo.get(idx)) is None:
                ok = unrolled
                for m, dims, ext in levels:
                    sizes = (m, tuple([e[idx[j]] for e, j in zip(ext, dims)]))
                    if (over := checked.get(sizes, False)) is False:
                        over = check(*sizes)
                    if over is not None:
                        ok = False
                        break
                memo[idx] = ok
            return ok

        # a choice grown from a fitting one in dim j can overflow only the levels whose tiles depend on j
        grown_in = [[(m, dims, ext) for m, dims, ext in extents if j in ms.m.level_dims[m]] for j in range(len(opts))]
        if not fits(idx0):  # not even the smallest tile fits: record why (and the size it needs)
            smallest = ms.schedule(spatial, pad(make(idx0), ms.top), {})
            rejected((smallest, ms.m.overflow(smallest)))
            return []
        seen, out, stack, visited = {idx0}, [], [idx0], 0
        while stack and visited < self.tile_cap:
            idx = stack.pop()
            visited += 1
            grown = False
            for j, o in enumerate(opts):
                if idx[j] + 1 < len(o):
                    nxt = idx[:j] + (idx[j] + 1,) + idx[j + 1:]
                    if fits(nxt, grown_in[j]):
                        grown = True
                        if nxt not in seen:
                            seen.add(nxt)
                            stack.append(nxt)
            if not grown:
                out.append(make(idx))
        return out or [make(idx0)]

    @property
    def inner_beam(self) -> int:
        """Partial schedules kept at the levels inside the one below the outermost on-chip level:
        ``beam // 2``, at least 2 (:meth:`_walk`)."""
        return max(2, self.beam // 2)

    def _ahead(self, spatial, cand: dict[str, tuple[int, ...]], extent: dict[str, int]) -> Schedule:
        """``cand`` (the tiles up to a level) with the rest of each dim one level out: what that level
        would hold if it held everything (its trips ``ceil(D / inner)``), DRAM none."""
        ms = self.space
        return Schedule(spatial, tuple((d, cand[d] + (ceil(ms.m.bound[d] / (prod(cand[d]) * extent[d])),)
                                        + (1,) * (ms.top - len(cand[d]) - 1)) for d in ms.dims), ())

    def _ahead_score(self, spatial, cand, extent, level: int, orders: dict, level_orders: list) -> tuple | None:
        """(score, orders) of the tile choice ``cand`` at ``level`` with the rest one level out
        (:meth:`_ahead`, capacity aside): its best order at ``level``, then the outer level's best.
        The two are chosen one after the other, not in pairs: a tensor's refills depend on one of the
        two orders only (its stationarity scan stops in ``level``'s loops or passes them all), so
        the energy is a sum of a term of each and the best pair is the pair of bests."""
        ms = self.space
        rest = self._ahead(spatial, cand, extent)
        outer = ms.orders(level + 1, ms.moving(rest, level + 1), True) or [()]

        def value(inner, up):
            ev = ms.m.evaluate(ms.reordered(rest, {**orders, level: inner, level + 1: up}), capacity=False)
            return ev.objective(self.objective) if ev.valid else None

        best = None
        for inner in level_orders:
            if (v := value(inner, outer[0])) is not None and (best is None or v < best[0]):
                best = (v, inner)
        if best is None:
            return None
        for up in outer[1:]:
            if (v := value(best[1], up)) is not None and v < best[0]:
                best = (v, best[1])
        return best[0], {**orders, level: best[1]}

    def _walk(self) -> Iterator[Schedule]:
        """Level by level inner-first (seed 000 §3.2): each level's maximal tiles x loop orders, a beam
        of the best kept. Scores and widths:

        * **One entry per tile choice.** A level's loop order changes only the refills of the
          levels inside it (a tensor's stationarity scan stops at the first loop that indexes it,
          or passes a level none of whose loops do, whatever their order), so a tile choice's
          best order is the best for every completion: its other orders are dropped and the beam
          holds distinct tiles (16 entries used to be 5-6 tile choices).
        * **The level below the outermost on-chip one is scored as if that level held the rest**
          (its capacity aside, at its best loop order), not as if DRAM did. Its choices decide
          which per-PE tiles the shared buffer serves (on Eyeriss: the weight scratchpad's, under
          the GLB), and DRAM's prices make a poor judge of that: on ResNet-18's layer1.0.conv1
          (eyeriss_ruby's khic_ohoc, AccelForge's accounting), the partial schedule that leads to
          the best mapping ranked 31st of 1067 at the weight scratchpad with the rest at DRAM.
          The other inner levels are scored with the rest at DRAM (their choices are schedules
          asked and told like any other) and keep :attr:`inner_beam` entries; ``beam`` enter
          the outermost on-chip level.
        * **No cut after the outermost on-chip level.** Each of its tile choices gets every DRAM
          loop order: full schedules are scored, not partial ones.
        """
        ms = self.space
        self.reject_mirrored()
        for spatial in ms.spatial_options():
            if self.best is not None and self._bound(spatial) >= self.best[1].objective(self.objective):
                self.skipped += 1
                self.reject(f"unrolling {spatial}: its lower bound cannot beat the best found (§3.2.9)")
                continue
            sp = per_dim_spatial(spatial)
            extent = {d: prod(sp.get(d, (1, 1))) for d in ms.dims}
            beam: list[tuple[dict, dict]] = [({d: () for d in ms.dims}, {})]
            for level in range(ms.top):
                ahead = level == ms.top - 2
                scored: dict[tuple, tuple] = {}  # tile choice -> (score, first seen, choice, orders): its best order

                def offer(padded, value, cand, o, scored=scored):
                    if (had := scored.get(padded)) is None or value < had[0]:
                        scored[padded] = (value, had[1] if had else len(scored), cand, o)
                for tiles, orders in beam:
                    for cand, padded in self._maximal(level, spatial, tiles, sp):
                        base = ms.reordered(Schedule(spatial, padded, ()), orders)
                        level_orders = ms.orders(level, ms.moving(base, level), True, self.reject) or [()]
                        if ahead:
                            if (found := self._ahead_score(spatial, cand, extent, level, orders, level_orders)):
                                offer(padded, found[0], cand, found[1])
                            continue
                        for order in level_orders:
                            o = {**orders, level: order}
                            yield ms.reordered(base, o)
                            last = self.log[-1]
                            if last["status"] == "valid":
                                offer(padded, last[self.objective], cand, o)
                # (score, then the order first seen: unique, so the tuples never compare further)
                keep = len(scored) if level == ms.top - 1 else self.beam if ahead else self.inner_beam
                beam = [(c, o) for _, _, c, o in heapq.nsmallest(keep, scored.values())]
                if not beam:
                    break
            for tiles, orders in beam:
                base = ms.schedule(spatial, tiles, orders)
                for order in ms.orders(ms.top, ms.moving(base, ms.top), True, self.reject) or [()]:
                    yield ms.schedule(spatial, tiles, {**orders, ms.top: order})


@dataclass(frozen=True)
class SearchKind:
    """A ``mapper.search``: ``make(space, mapper)`` returns the ask/tell :class:`Search` of one
    layer's mapspace (``mapper`` is the typed :class:`~lego_build.config.schema.MapperConf`);
    ``network(entries, lowered_of, arch, mapper)``, if given, runs once the layers are mapped and
    its result lands in ``mapping.json``'s totals under the search's name (TSO's slicing)."""

    name: str
    make: Callable[[Mapspace, MapperConf], Search]
    network: Callable[..., dict] | None = None


RTML = SearchKind("rtml", lambda space, m: Rtml(space, m.objective, beam=m.beam))
PLACED = SearchKind("placed", lambda space, m: Rtml(space, m.objective, beam=m.beam, placements=True))
RANDOM = SearchKind("random", lambda space, m: RandomSearch(space, m.objective, patience=m.patience, seed=m.seed))
EXHAUSTIVE = SearchKind("exhaustive", lambda space, m: Exhaustive(space, m.objective))

#: every ``mapper.search``: a new one is a module defining a :class:`SearchKind` and one line here
#: (or, outside lego_build, an entry point in the group ``lego_build.searches``)
SEARCHES: Registry[SearchKind] = Registry("lego_build.searches", "mapper.search", {
    "rtml": "lego_build.mapping.searches:RTML",
    "placed": "lego_build.mapping.searches:PLACED",
    "random": "lego_build.mapping.searches:RANDOM",
    "exhaustive": "lego_build.mapping.searches:EXHAUSTIVE",
    "tso": "lego_build.mapping.stage:TSO",
})


def make_search(name: str, space: Mapspace, objective: str, seed: int = 0, patience: int = 300) -> Search:
    """The search ``name`` of the registry on ``space`` (a layer's search, without a network step)."""
    return SEARCHES.get(name).make(space, MapperConf(objective=objective, seed=seed, patience=patience))
