"""RTML level-by-level search of seed 000, kept outside the product to reproduce the paper's figures
(``benchmarks/rtml_levels.py`` prints and records them).

Seed 000 (AFRL-RY-WP-TR-2023-0021, "A TensorFlow to Real-Time Machine Learning (RTML)
Compiler", §3.2.3-3.2.10) describes its mapper one piece at a time. This module keeps
that formulation and its pruning counts. The product's mapper is
:class:`lego_build.mapping.searches.Rtml`. It shares only the loop-order trie and the
tile footprints of :mod:`lego_build.mapping.rtml`. Only ``benchmarks/rtml_levels.py`` and
``tests/test_benchmarks_rtml_levels.py`` use the code below. Each piece records a reason
for every candidate it rejects:

* :func:`loop_orders` (§3.2.3-3.2.6): the full loop orders that survive the trie
  (:func:`lego_build.mapping.rtml.order_trie`).
* :func:`maximal_tiles` / :func:`tile_search` (§3.2.7, Obs. 4): a search tree over the
  divisor lattice rooted at the all-ones tile. A child raises one dim to the *next
  divisor* of its bound. A fitting node with a fitting child is pruned, so the survivors
  are the maximal fitting tiles.
* :func:`unroll_candidates` (§3.2.8, Obs. 5): spatial unrollings on a rows x cols
  array. It prunes three kinds: unrollings of the reuse dims of the temporally reused
  operand (unless the array cannot reach the utilisation threshold otherwise);
  unrollings with a factor that can still be raised one divisor step (more broadcast,
  fewer L2 trips); and unrollings below the utilisation threshold.
* :func:`search_levels` (§3.2.9-3.2.10): the level-by-level tile search with the
  "alpha-beta variant". L1 tiles are visited in ascending L1-cost order. A tile is
  rejected, with all the rest, once ``L1-cost + sum of ideal outer-level costs``
  reaches the best so far. The search runs inner level first, as §3.2.10 does, so the
  ideal bound of the outer levels is one constant and the sorted scan may stop early.
  Costs are per level, ``cost(level, tile, order)``, because the paper's bound adds an
  actual L1-cost to an ideal L2-cost. :class:`AccessModel` is the access-count model of
  eqs. (2)-(5).

Limits: Obs. 4 is exact within one level (enlarging a tile never adds fills in
:class:`AccessModel`). Tiles nest, though (an L1 tile divides its L2 tile), so a
non-maximal L1 tile can win overall; the tests show one such layer.

Assumptions (seed 000 gives neither): :data:`ENERGY`, the per-word fill energies, and
the workloads the percentages are measured on. For the level search these are array
layers of six built-in networks with bounds shrunk to <= 12 (:func:`real_layers`), so
that the exhaustive search they are compared with stays small.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from math import inf, prod
from typing import Callable, Iterable, Mapping, Sequence

from lego_build.analysis.kernels import conv2d
from lego_build.analysis.networks import network
from lego_build.ir.workload import Dim, Kernel, TensorAccess
from lego_build.mapping.factors import divisors
from lego_build.mapping.rtml import (
    Order,
    OrderCandidate,
    _row_distinct,
    _tensor_footprint,
    order_trie,
    row_terms,
    tensor_footprint,
)

TileKey = tuple[tuple[str, int], ...]  # (dim, size) in kernel dim order

ENERGY = (6.0, 200.0)  # assumed per-word fill energy from L2 and from DRAM (Eyeriss-like ratios; seed 000 gives none)


# ---------------------------------------------------------------- workloads

def conv1d(K: int, P: int, C: int, R: int) -> Kernel:
    """The running example, eq. (1): ``ofmap[k,p] += ifmap[c,p+r] * weight[c,k,r]``."""
    d = ["k", "p", "c", "r"]

    def row(**kw):
        return tuple(kw.get(x, 0) for x in d)

    return Kernel("conv1d", (Dim("k", K), Dim("p", P), Dim("c", C), Dim("r", R)), (
        TensorAccess("ifmap", "in", (C, P + R - 1), (row(c=1), row(p=1, r=1)), (0, 0), 8),
        TensorAccess("weight", "in", (C, K, R), (row(c=1), row(k=1), row(r=1)), (0, 0, 0), 8),
        TensorAccess("ofmap", "out", (K, P), (row(k=1), row(p=1)), (0, 0), 32)))


def shrink(kernel: Kernel, limit: int) -> Kernel:
    """Same kernel, each bound divided by its smallest prime factor (a prime p by 2,
    rounding up) until <= limit."""
    dims = []
    for d in kernel.dims:
        b = d.bound
        while b > limit:
            q = next(q for q in range(2, b + 1) if b % q == 0)
            b = b // q if q < b else (b + 1) // 2
        dims.append(Dim(d.name, b))
    return dataclasses.replace(kernel, dims=tuple(dims))


def real_layers(limit: int, count: int = 20) -> list[tuple[str, Kernel]]:
    """Array layers of built-in networks, shrunk, distinct as mapping problems (bounds + index maps)."""
    out: dict[tuple, tuple[str, Kernel]] = {}
    for net in ("lenet", "resnet18", "alexnet", "vgg16", "squeezenet", "mobilenetv2"):
        for layer in network(net):
            if layer.on_array:
                k = shrink(layer.kernel, limit)
                live = [i for i, d in enumerate(k.dims) if d.bound > 1]
                maps = tuple(tuple(tuple(row[i] for i in live) for row in t.matrix) for t in k.tensors)
                out.setdefault((k.dims, maps), (f"{net}.{layer.name}", k))
    return list(out.values())[:count]


RESNET_L1 = conv2d(1, 64, 64, 56, 56, 3, 3, 1, 1)  # ResNet-18 layer1 3x3 conv
BATCHED_CONV = conv2d(4, 64, 64, 56, 56, 3, 3, 1, 1)  # §3.2.6: n, oc, ic, oh, ow, kh, kw (g = 1 carries no loop)


# ---------------------------------------------------------------- loop orders (§3.2.3-3.2.6)

def loop_orders(kernel: Kernel) -> tuple[Order, ...]:
    """Outer -> inner loop orders (every kernel dim) that survive the trie pruning."""
    return order_trie(kernel).orders


# ---------------------------------------------------------------- footprints and maximal tiles (§3.2.7)

def _sizes(kernel: Kernel, tile: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(tile.get(d.name, 1) for d in kernel.dims)


def footprint(kernel: Kernel, tile: Mapping[str, int]) -> int:
    """Words of all tensors in a tile (dims missing from ``tile`` have size 1)."""
    sizes = _sizes(kernel, tile)
    return sum(tensor_footprint(t, sizes) for t in kernel.tensors)


@dataclass(frozen=True, slots=True)
class TileSearch:
    maximal: tuple[TileKey, ...]
    rejected: tuple[tuple[TileKey, str], ...]  # every generated non-maximal or over-capacity tile
    fitting: int  # all fitting tiles on the lattice (maximal included)


def tile_search(kernel: Kernel, capacity: int, dims: Iterable[str] | None = None,
                base: Mapping[str, int] | None = None, log: bool = True) -> TileSearch:
    """Maximal fitting tiles (Obs. 4) over the lattice ``base_d * f``, ``f | bound_d / base_d``.

    ``dims`` may grow (default: every dim of bound > 1); the others stay at ``base``
    (default 1). One lattice step raises one dim to its next divisor. Every lattice
    point is generated at most once (children raise dims at or after the last raised).
    ``log=False`` skips the per-tile reasons (``rejected`` is then empty).
    """
    base = dict(base or {})
    names = [d.name for d in kernel.dims]
    grow = set(dims) if dims is not None else {d.name for d in kernel.dims if d.bound > 1}
    steps = []
    for d in kernel.dims:
        b = base.get(d.name, 1)
        if d.bound % b:
            raise ValueError(f"base size {b} of {d.name} does not divide {d.bound}")
        steps.append(tuple(b * f for f in divisors(d.bound // b)) if d.name in grow else (b,))
    key = lambda idx: tuple((n, steps[i][j]) for i, (n, j) in enumerate(zip(names, idx)))  # noqa: E731

    rows = [row for t in kernel.tensors for row in row_terms(t)]
    per_tensor = [len(t.matrix) for t in kernel.tensors]

    @lru_cache(maxsize=None)
    def fp(idx: tuple[int, ...]) -> int:
        sizes = [steps[i][j] for i, j in enumerate(idx)]
        words = [_row_distinct(tuple((c, sizes[i]) for i, c in row)) for row in rows]
        total, at = 0, 0
        for n in per_tensor:
            total += prod(words[at:at + n])
            at += n
        return total

    root = (0,) * len(names)
    maximal, rejected, fitting = [], [], 0
    if fp(root) > capacity:
        return TileSearch((), ((key(root), f"footprint {fp(root)} > capacity {capacity}"),), 0)
    stack = [(root, 0)]
    while stack:
        idx, first = stack.pop()
        fitting += 1
        grows = None
        for i in range(len(names)):
            if idx[i] + 1 >= len(steps[i]):
                continue
            child = idx[:i] + (idx[i] + 1,) + idx[i + 1:]
            fits = fp(child) <= capacity
            if fits and grows is None:
                grows = (names[i], steps[i][idx[i] + 1], fp(child))
            if i >= first:
                if fits:
                    stack.append((child, i))
                elif log:  # from its canonical parent only, so each over-capacity point once
                    rejected.append((key(child), f"footprint {fp(child)} > capacity {capacity}"))
        if grows is None:
            maximal.append(key(idx))
        elif log:
            rejected.append((key(idx), f"Obs. 4: raising {grows[0]} to {grows[1]} still fits "
                                       f"({grows[2]} <= {capacity})"))
    return TileSearch(tuple(sorted(maximal)), tuple(rejected), fitting)


def maximal_tiles(kernel: Kernel, capacity: int, dims: Iterable[str] | None = None,
                  base: Mapping[str, int] | None = None) -> list[dict[str, int]]:
    """The maximal tiles of one memory level of ``capacity`` words (seed 000 §3.2.7)."""
    return [dict(t) for t in tile_search(kernel, capacity, dims, base).maximal]


# ---------------------------------------------------------------- spatial unrolling (§3.2.8)

@dataclass(frozen=True, slots=True)
class Unroll:
    rows: tuple[tuple[str, int], ...]  # (dim, factor > 1) on the row axis
    cols: tuple[tuple[str, int], ...]
    pes: int
    utilization: float


@dataclass(frozen=True, slots=True)
class UnrollSearch:
    kept: tuple[Unroll, ...]
    total: int  # every unrolling of the allowed dims that fits the array
    pruned: tuple[tuple[str, int], ...]  # (reason, count)
    avoided: Order  # dims Obs. 5 kept off the array
    obs5_waived: bool
    rejected: tuple[tuple[Unroll, str], ...] = ()  # per candidate, only with ``log=True``

    @property
    def fraction_pruned(self) -> float:
        return 1 - len(self.kept) / self.total


def _axis_choices(dims: Sequence[str], extents: Mapping[str, int], size: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []

    def rec(i: int, acc: tuple[int, ...], used: int) -> None:
        if i == len(dims):
            out.append(acc)
            return
        for f in divisors(extents[dims[i]]):
            if used * f > size:
                break
            rec(i + 1, acc + (f,), used * f)

    rec(0, (), 1)
    return out


@lru_cache(maxsize=64)
def _unroll_space(rows: int, cols: int, row_dims: Order, col_dims: Order,
                  ext: tuple[tuple[str, int], ...]) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Every (row factors, col factors) whose per-dim products divide the extents."""
    extents = dict(ext)
    shared = [(i, col_dims.index(d)) for i, d in enumerate(row_dims) if d in col_dims]
    return tuple((r, c) for r in _axis_choices(row_dims, extents, rows) for c in _axis_choices(col_dims, extents, cols)
                 if all(extents[row_dims[i]] % (r[i] * c[j]) == 0 for i, j in shared))


def temporal_reuse_dims(candidate: OrderCandidate) -> Order:
    """Obs. 5 input: the full-reuse dims of the operands a loop order keeps in the PE
    buffers between tiles (partial, sliding-window reuse is left unrollable)."""
    return tuple(dict.fromkeys(r.dim for r in candidate.reuse if r.kind == "full"))


def unroll_candidates(kernel: Kernel, rows: int, cols: int, row_dims: Sequence[str] | None = None,
                      col_dims: Sequence[str] | None = None, tile: Mapping[str, int] | None = None,
                      avoid: Iterable[str] = (), threshold: float = 0.5, log: bool = False) -> UnrollSearch:
    """Spatial unrollings of the L2 extents ``bound / tile`` on a rows x cols array.

    A candidate gives each allowed dim a factor per axis; the factors of one dim over
    both axes divide its extent and each axis' product fits the axis. Pruned, first
    matching reason: (1) Obs. 5, unrolls a dim of ``avoid`` -- waived when no other
    candidate reaches ``threshold`` utilisation; (2) a factor can be raised to the
    next divisor and still fit (strictly more broadcast and fewer L2 trips, eqs. 6-8);
    (3) utilisation below ``threshold`` (lowered to the best reachable if nothing
    reaches it).
    """
    active = [d.name for d in kernel.dims if d.bound > 1]
    row_dims = [d for d in (row_dims if row_dims is not None else active) if d in active]
    col_dims = [d for d in (col_dims if col_dims is not None else active) if d in active]
    tile = tile or {}
    ext = {d.name: d.bound // tile.get(d.name, 1) for d in kernel.dims}
    avoid = tuple(d for d in dict.fromkeys(avoid) if d in set(row_dims) | set(col_dims))
    space = _unroll_space(rows, cols, tuple(row_dims), tuple(col_dims), tuple(sorted(ext.items())))
    pes = rows * cols

    def uses_avoided(r: Sequence[int], c: Sequence[int]) -> bool:
        return any(x > 1 and d in avoid for d, x in (*zip(row_dims, r), *zip(col_dims, c)))

    def util(r: Sequence[int], c: Sequence[int]) -> float:
        return prod(r) * prod(c) / pes

    restricted = [rc for rc in space if not uses_avoided(*rc)]
    waived = bool(avoid) and max(util(*rc) for rc in restricted) < threshold
    pool = space if waived else restricted
    allowed_avoid = set() if waived else set(avoid)

    def can_grow(r: tuple[int, ...], c: tuple[int, ...]) -> bool:
        for axis, (opts, names) in enumerate(((r, row_dims), (c, col_dims))):
            used = prod(opts)
            for i, (d, x) in enumerate(zip(names, opts)):
                if d in allowed_avoid:
                    continue
                other = prod(f for n, f in (*zip(row_dims, r), *zip(col_dims, c)) if n == d) // x
                nxt = next((f for f in divisors(ext[d] // other) if f > x), None)
                if nxt is not None and used // x * nxt <= (rows if axis == 0 else cols):
                    return True
        return False

    maximal = [rc for rc in pool if not can_grow(*rc)]
    floor = min(threshold, max(util(*rc) for rc in maximal))
    kept = [rc for rc in maximal if util(*rc) >= floor]
    reasons = (
        f"Obs. 5: unrolls {','.join(avoid)}, reuse dims of an operand held in the PE buffers",
        "a factor can be raised to the next divisor and still fit the array",
        f"utilisation below {floor:.2f}",
    )
    counts = (len(space) - len(pool), len(pool) - len(maximal), len(maximal) - len(kept))

    def as_unroll(r: tuple[int, ...], c: tuple[int, ...]) -> Unroll:
        return Unroll(tuple((d, x) for d, x in zip(row_dims, r) if x > 1),
                      tuple((d, x) for d, x in zip(col_dims, c) if x > 1), prod(r) * prod(c), util(r, c))

    rejected: list[tuple[Unroll, str]] = []
    if log:
        in_pool, is_max, is_kept = set(pool), set(maximal), set(kept)
        for rc in space:
            if rc not in is_kept:
                why = reasons[0] if rc not in in_pool else reasons[1] if rc not in is_max else reasons[2]
                rejected.append((as_unroll(*rc), why))
    return UnrollSearch(tuple(as_unroll(*rc) for rc in kept), len(space),
                        tuple((k, v) for k, v in zip(reasons, counts) if v), avoid, waived, tuple(rejected))


# ---------------------------------------------------------------- level-by-level search (§3.2.9-3.2.10)

@dataclass(frozen=True, slots=True)
class AccessModel:
    """Per-level access-count energy (eqs. 2-5 generalised to any order and level).

    Level ``i`` (0 = L1) holds a tile ``t``; its inter-tile loops traverse the whole
    problem in ``order`` (the paper's eqs. use ``X_L2 = X / X_L1``). Fills of tensor
    ``T`` = ``footprint_T(t)`` x the trips of every loop outside ``T``'s reuse chain:
    walking inner -> outer, one-trip loops are transparent and full-reuse
    (non-indexing) loops are skipped until the first loop that indexes ``T``
    (Obs. 1). Partial (halo) reuse between tiles is not credited, as in eq. (2).
    ``cost(level) = fills x energy[level]`` (the per-word energy of the level that
    supplies the fills); ``lower_bound(level)`` is the "ideal" of §3.2.10: every
    loop that does not index a tensor reuses it, minimised over all tiles.
    """

    kernel: Kernel
    energy: tuple[float, ...]

    def fills(self, tile: Mapping[str, int], order: Order) -> dict[str, int]:
        k = self.kernel
        sizes = _sizes(k, tile)
        trips = {d.name: d.bound // s for d, s in zip(k.dims, sizes)}
        total = prod(trips.values())
        out = {}
        for t, indexes in _indexing(k):
            reused = 1
            for dim in reversed(order):
                if dim in indexes and trips[dim] > 1:
                    break
                reused *= trips[dim]
            out[t.name] = _tensor_footprint(t, sizes) * (total // reused)
        return out

    def cost(self, level: int, tile: Mapping[str, int], order: Order) -> float:
        return self.energy[level] * sum(self.fills(tile, order).values())

    def lower_bound(self, level: int) -> float:
        return self.energy[level] * _ideal_fills(self.kernel)


@lru_cache(maxsize=None)
def _indexing(kernel: Kernel) -> tuple[tuple[TensorAccess, frozenset], ...]:
    """Each tensor with the dims that index it."""
    return tuple((t, frozenset(d.name for i, d in enumerate(kernel.dims) if t.depends_on(i))) for t in kernel.tensors)


@lru_cache(maxsize=None)
def _ideal_fills(kernel: Kernel) -> int:
    """min over divisor tiles of sum_T footprint_T(t) x trips of the dims indexing T,
    taken per data row (rows use disjoint dims)."""
    bounds = [d.bound for d in kernel.dims]
    total = 0
    for t in kernel.tensors:
        per_row = []
        for row in t.matrix:
            idx = [i for i, c in enumerate(row) if c]
            per_row.append(min(
                _row_distinct(tuple((row[i], s) for i, s in zip(idx, choice)))
                * prod(bounds[i] // s for i, s in zip(idx, choice))
                for choice in product(*(divisors(bounds[i]) for i in idx))))
        total += prod(per_row)
    return total


@dataclass(frozen=True, slots=True)
class LevelMapping:
    tiles: tuple[TileKey, ...]  # L1, L2, ...
    orders: tuple[Order, ...]  # inter-tile order per level
    costs: tuple[float, ...]

    @property
    def total(self) -> float:
        return sum(self.costs)


@dataclass(frozen=True, slots=True)
class LevelSearch:
    best: LevelMapping | None
    evaluated: tuple[int, ...]  # tiles whose cost was computed, per level
    searched: tuple[int, ...]  # tiles expanded (L1) or accepted as best-so-far candidates, per level
    cost_calls: int
    pruned: tuple[tuple[int, TileKey, str], ...]  # (level, tile, reason)


def search_levels(kernel: Kernel, capacities: Sequence[int],
                  cost: Callable[[int, Mapping[str, int], Order], float],
                  lower_bound: Callable[[int], float], orders: Sequence[Order] | None = None,
                  early_stop: bool = True) -> LevelSearch:
    """Level-by-level tile search, inner level first (seed 000 §3.2.9-3.2.10).

    Level ``i`` candidates are the maximal tiles of ``capacities[i]`` that are
    multiples of the chosen level ``i-1`` tile; each is paired with its cheapest
    order from ``orders`` (default: the trie's). Candidates are visited in ascending
    cost; with ``early_stop`` a candidate and all after it are rejected once
    ``cost so far + sum of lower_bound(j) for the outer levels j`` reaches the best
    total (the paper's L2-ideal bound). ``lower_bound(j)`` must not exceed
    ``cost(j, t, o)`` for any tile and order. ``early_stop=False`` is the exhaustive
    search over the same candidates.
    """
    orders = tuple(orders) if orders is not None else loop_orders(kernel)
    levels = len(capacities)
    bounds = [lower_bound(j) for j in range(levels)]
    outer_lb = [sum(bounds[j + 1:]) for j in range(levels)]
    evaluated = [0] * levels
    searched = [0] * levels
    pruned: list[tuple[int, TileKey, str]] = []
    calls = 0
    best: list[LevelMapping | None] = [None]

    def best_order(level: int, tile: dict[str, int]) -> tuple[float, Order]:
        nonlocal calls
        calls += len(orders)
        return min((cost(level, tile, o), o) for o in orders)

    def descend(level: int, base: Mapping[str, int], tiles: tuple, chosen: tuple, costs: tuple) -> None:
        cands = []
        for t in tile_search(kernel, capacities[level], base=base, log=False).maximal:
            evaluated[level] += 1
            c, o = best_order(level, dict(t))
            cands.append((c, t, o))
        cands.sort()
        for i, (c, t, o) in enumerate(cands):
            so_far = sum(costs) + c
            incumbent = best[0].total if best[0] is not None else inf
            if early_stop and so_far + outer_lb[level] >= incumbent:
                for _, rest, _ in cands[i:]:
                    pruned.append((level, rest, f"lower bound {so_far + outer_lb[level]:.6g} (cost so far + "
                                                f"ideal outer levels) >= best {incumbent:.6g}; later tiles cost more"))
                return
            searched[level] += 1
            if level + 1 == levels:
                if so_far < incumbent:
                    best[0] = LevelMapping((*tiles, t), (*chosen, o), (*costs, c))
            else:
                descend(level + 1, dict(t), (*tiles, t), (*chosen, o), (*costs, c))

    descend(0, {}, (), (), ())
    return LevelSearch(best[0], tuple(evaluated), tuple(searched), calls, tuple(pruned))
