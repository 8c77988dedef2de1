"""Mapspaces over a memory hierarchy and the searches that walk them, ask/tell.

:class:`Mapspace` (seed 002) gives the per-dim factor choices of every level and the
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
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import permutations, product
from math import ceil, factorial, prod
from typing import Iterator

from lego_build.ir.mapping import Schedule
from lego_build.ir.workload import Dim, Kernel

from .mapspace import imperfect_allowed
from .model import Evaluation, Model, dim_tiling
from .factors import divisors, useful
from .rtml import order_trie

SEARCHES = ("rtml", "random", "exhaustive")


@dataclass(frozen=True)
class Rules:
    """What the hardware fixes: spatial unrolling, per-level orders, innermost dims."""

    axes: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # dims allowed per array axis
    spatial: tuple[tuple[tuple[str, int], ...], ...] | None = None  # a fixed unrolling
    order: tuple[tuple[int, tuple[str, ...]], ...] = ()  # level -> fixed relative order of its loops
    innermost: tuple[tuple[int, frozenset], ...] = ()  # level -> dims that must be innermost there
    unit: tuple[int, ...] = ()  # levels with no loops of their own (all factors 1)
    max_spatial: int = 8  # unrolling candidates kept (best utilisation first)
    required: tuple[str, ...] = ()  # dims the unrolling must include (e.g. row stationary: kh, oh)


class Mapspace:
    def __init__(self, model: Model, space: str = "pfm", rules: Rules = Rules()):
        self.m, self.space, self.rules = model, space, rules
        self.h = model.h
        self.n_levels = len(self.h.levels)
        self.dims = model.dims
        self.bound = model.bound
        self.top = self.n_levels - 1
        # a fixed (hardware) unrolling runs a partial last tile whatever the space: the space governs the rest
        self.effective = {"pfm": "ruby-s", "ruby-t": "ruby"}.get(space, space) if rules.spatial else space

    # ------------------------------------------------------------------ spatial
    def spatial_options(self) -> list[tuple[tuple[tuple[str, int], ...], ...]]:
        if self.rules.spatial is not None:
            return [self.rules.spatial]
        imperfect = imperfect_allowed(self.space, "spatial")
        per_axis = []
        for axis, size in enumerate((self.h.rows, self.h.cols)):
            names = [d for d in self.rules.axes[axis] if self.bound.get(d, 1) > 1]
            opts = [()]
            for d in names:
                opts = [o + ((d, f),) for o in opts for f in (1, *useful(self.bound[d], imperfect))
                        if f <= size and prod(p for _, p in o) * f <= size]
            per_axis.append([tuple((d, f) for d, f in o if f > 1) for o in opts])
        combos = self._combos(per_axis, imperfect)
        ranked = sorted(combos, key=lambda sp: (-combos[sp], sp))[: self.rules.max_spatial]
        if imperfect:  # the perfect unrollings are in the space too: keep the best of them as well
            perfect = self._combos(per_axis, False)
            ranked += [sp for sp in sorted(perfect, key=lambda sp: (-perfect[sp], sp))[: self.rules.max_spatial]
                       if sp not in ranked]
        return ranked

    def _combos(self, per_axis, imperfect: bool) -> dict:
        combos = {}
        for r in per_axis[0]:
            for c in per_axis[1]:
                sp = (r, c)
                per_dim: dict[str, int] = {}
                for d, f in (*r, *c):
                    per_dim[d] = per_dim.get(d, 1) * f
                if any(f > self.bound[d] for d, f in per_dim.items()):
                    continue
                if not imperfect and any(self.bound[d] % f for d, f in per_dim.items()):
                    continue
                if any(self.bound.get(d, 1) > 1 and d not in per_dim for d in self.rules.required):
                    continue
                eff = prod(self.bound[d] / (ceil(self.bound[d] / f) * f) for d, f in per_dim.items())
                combos[sp] = prod(per_dim.values()) * eff / self.h.pes
        return combos

    # ------------------------------------------------------------------ temporal factors
    def chain_ok(self, dim: str, spatial: dict[str, tuple[int, int]], tiles: tuple[int, ...]) -> bool:
        """Is dim's tiling (levels inner -> outer given so far, the rest on top) in the space?"""
        s = Schedule(tuple(((dim, spatial[dim][a]),) if spatial.get(dim, (1, 1))[a] > 1 else () for a in (0, 1)),
                     ((dim, tiles),), ())
        tiling = dim_tiling(self.bound[dim], self.m.factors(s, dim), self.m.kinds)
        return tiling.size == self.bound[dim] and tiling.in_space(self.effective)

    def level_options(self, dim: str, level: int, inner: tuple[int, ...], sp: dict[str, tuple[int, int]]) -> tuple[int, ...]:
        """Factors of ``dim`` at temporal ``level`` given the factors of the levels inside it."""
        if level in self.rules.unit:
            return (1,)
        spatial = prod(sp.get(dim, (1, 1)))
        if level < self.h.fanout:  # inside a PE: tiles of the PE's share of the dim
            D, below = ceil(self.bound[dim] / spatial), prod(inner)
        else:
            D, below = self.bound[dim], prod(inner) * spatial
        imperfect = self.effective != "pfm"
        out = sorted({1} | {ceil(e / below) for e in useful(D, imperfect) if e >= below})
        return tuple(p for p in out if self.chain_ok(dim, sp, inner + (p,)))

    def orders(self, level: int, moving: tuple[str, ...], pruned: bool, log=None) -> list[tuple[str, ...]]:
        """Loop orders (outer -> inner) of the dims that iterate at ``level``; ``log(reason)`` gets each rejection."""
        fixed = dict(self.rules.order).get(level)
        inner = dict(self.rules.innermost).get(level, frozenset())
        name = self.h.levels[level].name
        if fixed is not None:
            if log and len(moving) > 1:
                log(f"{name}: the array's temporal dataflow fixes the loop order {fixed}")
            return [tuple(d for d in fixed if d in moving) + tuple(d for d in moving if d not in fixed)]
        if pruned:
            k = self.m.kernel
            sub = Kernel(k.name, tuple(Dim(d.name, 2 if d.name in moving else 1) for d in k.dims), k.tensors)
            trie = order_trie(sub)
            if log:
                for rej in trie.rejected:
                    log(f"{name}: orders ending {'/'.join(rej.prefix)} pruned by {rej.rule}: {rej.reason}")
            cands = [tuple(d for d in o if d in moving) for o in trie.orders]
        else:
            cands = list(permutations(moving))
        kept = []
        for o in dict.fromkeys(cands):
            reason = self.order_reason(level, o)
            if reason and log:
                log(f"order {'/'.join(o)}: {reason}")
            elif not reason:
                kept.append(o)
        cands = kept
        if not cands and inner:  # the trie kept none that obeys the hardware: put the rule's dims inside
            cands = [tuple(d for d in moving if d not in inner) + tuple(d for d in moving if d in inner)]
        return cands

    def order_reason(self, level: int, order: tuple[str, ...]) -> str:
        inner = dict(self.rules.innermost).get(level, frozenset())
        seen = False
        for d in order:
            if d in inner:
                seen = True
            elif seen:
                name = self.h.levels[level].name
                return (f"{name}: loop {d} inside a reduction loop; the FU accumulates in place, so the "
                        "reduction loops are innermost")
        return ""

    def schedule(self, spatial, tiles: dict[str, tuple[int, ...]], orders: dict[int, tuple[str, ...]]) -> Schedule:
        return Schedule(spatial, tuple((d, tiles[d]) for d in self.dims),
                        tuple(orders.get(i, ()) for i in range(self.n_levels)))

    def moving(self, s: Schedule, level: int) -> tuple[str, ...]:
        """Dims whose loop at ``level`` iterates more than once under ``s``."""
        j = self.m.t_pos[level]
        out = []
        for d in self.dims:
            it = dim_tiling(self.bound[d], self.m.factors(s, d), self.m.kinds).iterations()
            if it[j] > (it[j - 1] if j else 1):
                out.append(d)
        return tuple(out)


def pad(tiles: dict[str, tuple[int, ...]], n: int) -> dict[str, tuple[int, ...]]:
    """Factors of the levels not chosen yet are 1 (the outermost level takes the rest)."""
    return {d: t + (1,) * (n - len(t)) for d, t in tiles.items()}


def per_dim_spatial(spatial) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = {}
    for axis, entries in enumerate(spatial):
        for d, f in entries:
            out.setdefault(d, [1, 1])[axis] *= f
    return {d: (a, b) for d, (a, b) in out.items()}


# ---------------------------------------------------------------------- searches
@dataclass
class Search:
    space: Mapspace
    objective: str = "energy"
    best: tuple[Schedule, Evaluation] | None = None
    log: list[dict] = field(default_factory=list)
    smallest: dict[str, tuple[int, int]] = field(default_factory=dict)  # level -> (smallest need, capacity), bytes

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
        if self.best is None or score < self.best[1].objective(self.objective):
            self.best = (s, ev)
            return True
        return False

    def reject(self, reason: str) -> None:
        self.log.append({"status": "rejected", "reason": reason})

    def evaluate(self, s: Schedule) -> Evaluation:
        for level, order in enumerate(s.orders):
            if reason := self.space.order_reason(level, order):
                return Evaluation(False, reason)
        return self.space.m.evaluate(s)

    def run(self) -> tuple[Schedule, Evaluation] | None:
        while (s := self.ask()) is not None:
            self.tell(s, self.evaluate(s))
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
    beam: int = 4
    tile_cap: int = 2000  # lattice nodes visited per level before the maximal-tile scan stops

    def __post_init__(self):
        self._it = self._walk()
        self.skipped = 0

    def ask(self) -> Schedule | None:
        return next(self._it, None)

    def _bound(self, spatial) -> float:
        """Lower bound of the objective for an unrolling: MACs + compulsory DRAM; its compute cycles."""
        m, h = self.space.m, self.space.h
        dram = h.levels[-1]
        energy = m.kernel.macs * h.mac_pj + sum(
            t.size * (m.final_bits if t.role == "out" else t.bits) / dram.width_bits * (dram.write_pj if t.role == "out" else dram.read_pj)
            for t in m.kernel.tensors)
        sp = per_dim_spatial(spatial)
        cycles = prod(ceil(m.bound[d] / prod(sp.get(d, (1, 1)))) for d in m.dims)
        return {"energy": energy, "latency": float(cycles), "edp": energy * cycles}[self.objective]

    def _maximal(self, level: int, spatial, tiles: dict[str, tuple[int, ...]], sp) -> list[dict[str, tuple[int, ...]]]:
        """Maximal fitting factor choices at ``level`` (Obs. 4) on the useful-factor lattice."""
        ms = self.space
        opts = [ms.level_options(d, level, tiles[d], sp) for d in ms.dims]
        idx0 = tuple(0 for _ in opts)
        if any(not o for o in opts):
            return []

        def make(idx) -> dict[str, tuple[int, ...]]:
            return {d: tiles[d] + (o[i],) for d, o, i in zip(ms.dims, opts, idx)}

        memo: dict[tuple[int, ...], bool] = {}

        def fits(idx) -> bool:
            if idx not in memo:
                memo[idx] = ms.m.overflow(ms.schedule(spatial, pad(make(idx), ms.top), {})) is None
            return memo[idx]

        if not fits(idx0):  # not even the smallest tile fits: record why (and the size it needs)
            smallest = ms.schedule(spatial, pad(make(idx0), ms.top), {})
            self.tell(smallest, ms.m.overflow(smallest))
            return []
        seen, out, stack, visited = {idx0}, [], [idx0], 0
        while stack and visited < self.tile_cap:
            idx = stack.pop()
            visited += 1
            grown = False
            for j, o in enumerate(opts):
                if idx[j] + 1 < len(o):
                    nxt = idx[:j] + (idx[j] + 1,) + idx[j + 1:]
                    if fits(nxt):
                        grown = True
                        if nxt not in seen:
                            seen.add(nxt)
                            stack.append(nxt)
            if not grown:
                out.append(make(idx))
        return out or [make(idx0)]

    def _walk(self) -> Iterator[Schedule]:
        ms = self.space
        for spatial in ms.spatial_options():
            if self.best is not None and self._bound(spatial) >= self.best[1].objective(self.objective):
                self.skipped += 1
                self.reject(f"unrolling {spatial}: its lower bound cannot beat the best found (§3.2.9)")
                continue
            sp = per_dim_spatial(spatial)
            beam: list[tuple[dict, dict]] = [({d: () for d in ms.dims}, {})]
            for level in range(ms.top):
                scored = []
                for tiles, orders in beam:
                    for cand in self._maximal(level, spatial, tiles, sp):
                        base = ms.schedule(spatial, pad(cand, ms.top), orders)
                        for order in ms.orders(level, ms.moving(base, level), True, self.reject) or [()]:
                            o = {**orders, level: order}
                            s = ms.schedule(spatial, pad(cand, ms.top), o)
                            yield s
                            last = self.log[-1]
                            if last["status"] == "valid":
                                scored.append((last[self.objective], len(scored), cand, o))
                scored.sort(key=lambda x: (x[0], x[1]))
                beam = [(c, o) for _, _, c, o in scored[: self.beam]]
                if not beam:
                    break
            for tiles, orders in beam:
                base = ms.schedule(spatial, tiles, orders)
                for order in ms.orders(ms.top, ms.moving(base, ms.top), True, self.reject) or [()]:
                    yield ms.schedule(spatial, tiles, {**orders, ms.top: order})


def make_search(name: str, space: Mapspace, objective: str, seed: int = 0, patience: int = 300) -> Search:
    if name == "exhaustive":
        return Exhaustive(space, objective)
    if name == "random":
        return RandomSearch(space, objective, patience=patience, seed=seed)
    if name == "rtml":
        return Rtml(space, objective)
    raise ValueError(f"unknown search {name!r}; searches: {', '.join(SEARCHES)}")
