"""The mapspace of one layer on one memory hierarchy: what the hardware fixes (:class:`Rules`)
and the choices left (:class:`Mapspace`: spatial unrollings, per-level tile factors whose
chains stay in the PFM / Ruby space, loop orders), which the searches of
:mod:`lego_build.mapping.searches` walk (seed 002 §3, seed 000 §3)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations
from math import ceil, prod

from lego_build.ir.mapping import Schedule
from lego_build.ir.workload import Dim, Kernel
from lego_build.mapping.factors import useful
from lego_build.mapping.model import Model
from lego_build.mapping.rtml import order_trie
from lego_build.mapping.tiling import imperfect_allowed


def per_dim_spatial(spatial) -> dict[str, tuple[int, int]]:
    """An unrolling's factor of each dim on the rows and on the columns."""
    out: dict[str, list[int]] = {}
    for axis, entries in enumerate(spatial):
        for d, f in entries:
            out.setdefault(d, [1, 1])[axis] *= f
    return {d: (a, b) for d, (a, b) in out.items()}


@lru_cache(maxsize=256)
def _trie(kernel: Kernel):
    """:func:`order_trie`, pure: a layer's dataflows ask it again for the same moving dims."""
    return order_trie(kernel)


def mirror(spatial, swap: dict[str, str]):
    """``spatial`` with its dims renamed by ``swap``."""
    return tuple(tuple((swap.get(d, d), f) for d, f in axis) for axis in spatial)


def _unordered(spatial) -> tuple[frozenset, ...]:
    return tuple(frozenset(axis) for axis in spatial)


def symmetries(kernel: Kernel, rules: "Rules") -> tuple[dict[str, str], ...]:
    """Renamings of ``kernel``'s dims (disjoint swaps of two dims of the same bound) that map the
    layer and ``rules`` onto themselves: every tensor keeps its data rows (a row's dims and
    coefficients, dims of bound 1 aside, its extent and padding; the rows' order is immaterial,
    a footprint is their product), each array axis and the required, fixed-order and innermost
    dims stay what they were.
    A square convolution has one: ``kh<->kw`` with ``oh<->ow``. The cost model counts through the
    tensors' rows and never by a dim's name, so a schedule and its renaming cost the same."""
    bound = {d.name: d.bound for d in kernel.dims}
    names = [d.name for d in kernel.dims if d.bound > 1]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if bound[a] == bound[b]]

    def rows(t, swap) -> Counter:
        return Counter((frozenset((swap.get(kernel.dims[i].name, kernel.dims[i].name), c)
                                  for i, c in enumerate(row) if c and kernel.dims[i].bound > 1), n, b)
                       for row, n, b in zip(t.matrix, t.shape, t.bias))

    def kept(swap) -> bool:
        def same(dims) -> bool:
            return {swap.get(d, d) for d in dims} == set(dims)
        return (all(rows(t, swap) == rows(t, {}) for t in kernel.tensors)
                and all(same(axis) for axis in rules.axes) and same(rules.required)
                and all(tuple(swap.get(d, d) for d in order) == order for _, order in rules.order)
                and all(same(dims) for _, dims in rules.innermost))

    out = []
    for n in range(1, len(pairs) + 1):
        for combo in combinations(pairs, n):
            if len({d for pair in combo for d in pair}) == 2 * n:
                swap = {**dict(combo), **{b: a for a, b in combo}}
                if kept(swap):
                    out.append(swap)
    return tuple(out)


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
        self._chains: dict[tuple, bool] = {}
        self._orders: dict[tuple, tuple] = {}
        self._options: dict[tuple, tuple[int, ...]] = {}
        self._unroll: tuple[list, list] | None = None
        self._moving: dict[tuple, tuple[str, ...]] = {}
        self._innermost = dict(rules.innermost)  # level -> dims that must be innermost there

    # ------------------------------------------------------------------ spatial
    def remainder_reason(self, dataflow: str = "") -> str:
        """Why the hardware's fixed unrolling is outside this space ('' if it is not).

        Seed 002 §III: PFM (and Ruby-T) factor every spatial level perfectly, so a dim larger
        than the array's unrolling of it must be a multiple of it; a smaller one fills part of
        the axis (``P = R = D``). The generated array runs the partial last spatial tile either
        way: that tile is Ruby-S's (and Ruby's), not PFM's.
        """
        if self.rules.spatial is None or imperfect_allowed(self.space, "spatial"):
            return ""
        for d, (rows, cols) in per_dim_spatial(self.rules.spatial).items():
            D, f = self.bound.get(d, 1), rows * cols
            if D > f and D % f:
                return (f"mapper.mapspace={self.space}: {d} = {D} is not a multiple of the {f} the array unrolls "
                        f"{'under dataflow ' + dataflow + ' ' if dataflow else ''}(its partial last tile is in "
                        "Ruby-S's space: mapper=ruby_s)")
        return ""

    def spatial_options(self) -> list[tuple[tuple[tuple[str, int], ...], ...]]:
        """The unrollings to search, best utilisation first, each once up to the layer's
        :func:`symmetries` (:meth:`mirrored` lists those left out)."""
        return list(self._unrollings()[0])

    def mirrored(self) -> list[tuple[tuple, tuple, dict[str, str]]]:
        """``(unrolling, twin, swap)``: an unrolling left out because ``swap`` maps it onto ``twin``,
        an earlier one, which costs the same."""
        return self._unrollings()[1]

    def _unrollings(self) -> tuple[list, list]:
        if self._unroll is None:
            ranked, kept, mirrored = self._ranked(), {}, []
            swaps = symmetries(self.m.kernel, self.rules) if len(ranked) > 1 else ()
            for sp in ranked:
                twin = next(((kept[img], swap) for swap in swaps
                             if (img := _unordered(mirror(sp, swap))) in kept), None)
                if twin is None:
                    kept[_unordered(sp)] = sp
                else:
                    mirrored.append((sp, *twin))
            self._unroll = (list(kept.values()), mirrored)
        return self._unroll

    def _ranked(self) -> list[tuple[tuple[tuple[str, int], ...], ...]]:
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
        """Is dim's tiling (levels inner -> outer given so far, the rest on top) in the space?
        (Memoised per dim, its unrolling and its tiles: every lattice step of a search asks.)"""
        key = (dim, spatial.get(dim, (1, 1)), tiles)
        if (ok := self._chains.get(key)) is None:
            ok = self._chains[key] = self._chain_ok(dim, spatial, tiles)
        return ok

    def _chain_ok(self, dim: str, spatial: dict[str, tuple[int, int]], tiles: tuple[int, ...]) -> bool:
        tiling = self.m.dim_tiling(dim, spatial.get(dim, (1, 1)), tiles).tiling
        return tiling.size == self.bound[dim] and tiling.in_space(self.space)

    def level_options(self, dim: str, level: int, inner: tuple[int, ...],
                      sp: dict[str, tuple[int, int]]) -> tuple[int, ...]:
        """Factors of ``dim`` at temporal ``level`` given the factors of the levels inside it
        (memoised: a search asks again for every partial schedule of its beam)."""
        key = (dim, level, inner, sp.get(dim, (1, 1)))
        if (out := self._options.get(key)) is None:
            out = self._options[key] = self._level_options(dim, level, inner, sp)
        return out

    def _level_options(self, dim: str, level: int, inner: tuple[int, ...], sp) -> tuple[int, ...]:
        if level in self.rules.unit:
            return (1,)
        spatial = prod(sp.get(dim, (1, 1)))
        if level < self.h.fanout:  # inside a PE: tiles of the PE's share of the dim
            D, below = ceil(self.bound[dim] / spatial), prod(inner)
        else:
            D, below = self.bound[dim], prod(inner) * spatial
        imperfect = self.space != "pfm"
        out = sorted({1} | {ceil(e / below) for e in useful(D, imperfect) if e >= below})
        return tuple(p for p in out if self.chain_ok(dim, sp, inner + (p,)))

    def orders(self, level: int, moving: tuple[str, ...], pruned: bool, log=None) -> list[tuple[str, ...]]:
        """Loop orders (outer -> inner) of the dims that iterate at ``level``; ``log(reason)`` gets each
        rejection. The same (level, moving dims) recur across a search's tilings: memoised, with the
        rejections replayed to ``log``."""
        key = (level, moving, pruned)
        if (memo := self._orders.get(key)) is None:
            reasons: list[str] = []
            memo = self._orders[key] = (self._orders_of(level, moving, pruned, reasons.append), reasons)
        if log:
            for reason in memo[1]:
                log(reason)
        return list(memo[0])

    def _orders_of(self, level: int, moving: tuple[str, ...], pruned: bool, log) -> list[tuple[str, ...]]:
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
            trie = _trie(sub)
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
        if (inner := self._innermost.get(level)) is None:
            return ""
        seen = False
        for d in order:
            if d in inner:
                seen = True
            elif seen:
                name = self.h.levels[level].name
                where = ("the FU accumulates in place" if level == min(dict(self.rules.innermost)) else
                         "an output tile accumulates on chip until its last reduction tile")
                return f"{name}: loop {d} inside a reduction loop; {where}, so the reduction loops are innermost"
        return ""

    def schedule(self, spatial, tiles: dict[str, tuple[int, ...]], orders: dict[int, tuple[str, ...]]) -> Schedule:
        return Schedule(spatial, tuple((d, tiles[d]) for d in self.dims),
                        tuple(orders.get(i, ()) for i in range(self.n_levels)))

    def reordered(self, s: Schedule, orders: dict[int, tuple[str, ...]]) -> Schedule:
        """``s`` with the loop orders ``orders`` (level -> order; the others none)."""
        return Schedule(s.spatial, s.tiles, tuple(orders.get(i, ()) for i in range(self.n_levels)))

    def moving(self, s: Schedule, level: int) -> tuple[str, ...]:
        """Dims whose loop at ``level`` iterates more than once under ``s`` (its tiles decide:
        memoised, the schedules of a beam share them)."""
        key = (s.spatial, s.tiles, level)
        if (out := self._moving.get(key)) is None:
            out = self._moving[key] = self._moving_of(s, level)
        return out

    def _moving_of(self, s: Schedule, level: int) -> tuple[str, ...]:
        j = self.m.t_pos[level]
        tilings = self.m.dim_tilings(s)
        out = []
        for d in self.dims:
            it = tilings[d].derived()[0]  # (iterations per position)
            if it[j] > (it[j - 1] if j else 1):
                out.append(d)
        return tuple(out)
