"""RTML pruned mapper (seed 000, AFRL-RY-WP-TR-2023-0021, §3.2.3-3.2.7): loop orders and footprints.

* :func:`order_trie` (§3.2.3-3.2.6): the trie of loop orders built innermost-first,
  with a reason recorded for every order it prunes. A node fixes the next-innermost
  loop and carries the reuse it offers; a tensor keeps being reused while every loop
  inside is one of its *full*-reuse (non-indexing) dims (Obs. 1). A *partial*-reuse dim (sliding window,
  from :mod:`lego_build.analysis.reuse`) adds reuse but ends the tensor's chain: the
  paper prunes ``xxPR`` because ``R`` indexes the ifmap. Rules: **R1** a child that
  adds no reuse is never generated (unless no child adds any: then the node is a
  leaf and its outer loops are free, Obs. 2); **R2** a subtree whose best possible
  reuse is a subset of (or equal to) the reuse of a kept order is never generated,
  and a kept order later found strictly dominated is dropped. Reuse is compared as
  sets of ``(tensor, dim, kind)``, so ``xxRK`` and ``xxPK`` (ifmap partial reuse via
  different dims) both survive, as in Fig. 8. Dims of bound 1 carry no loop: they
  are ignored and placed outermost (conv2d's ``g`` with ``groups=1``; ``n`` at batch 1).
* :func:`tensor_footprint` (§3.2.7, eq. 2): the words of a tensor a tile touches,
  sliding windows included (``P_L1 + R_L1 - 1``); :mod:`lego_build.mapping.model`
  sizes its tiles with it.

The product's mapper, :class:`lego_build.mapping.searches.Rtml`, gets the trie through
:mod:`lego_build.mapping.mapspace` and the footprints through
:mod:`lego_build.mapping.model`. ``benchmarks/rtml_levels.py`` holds the paper's
per-piece formulation of the rest: maximal tiles, spatial unrolling, and the
level-by-level search with its early stop. It also holds the pruning figures that
formulation reproduces.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import factorial, gcd, prod
from typing import Iterable, Sequence

from lego_build.analysis.reuse import reuse_table
from lego_build.ir.workload import Kernel, TensorAccess

Order = tuple[str, ...]  # loop dims, outer -> inner


# ---------------------------------------------------------------- loop-order trie (§3.2.3-3.2.6)

@dataclass(frozen=True, slots=True)
class Reuse:
    """``tensor`` is reused across the loop over ``dim`` (``kind`` full or partial)."""

    tensor: str
    dim: str
    kind: str


@dataclass(frozen=True, slots=True)
class OrderCandidate:
    """A surviving trie leaf. ``suffix`` are the fixed inner loops (outer -> inner);
    ``free`` the outer loops whose order does not matter (Obs. 2); ``order`` one full
    order (ignored dims, then ``free`` in kernel order, then ``suffix``)."""

    order: Order
    suffix: Order
    free: Order
    reuse: tuple[Reuse, ...]

    @property
    def label(self) -> str:
        return _label(self.suffix, len(self.free))


@dataclass(frozen=True, slots=True)
class Rejected:
    """A pruned trie prefix (inner loops fixed, outer -> inner), the rule, why, and
    how many full orders it stands for."""

    prefix: Order
    rule: str
    reason: str
    orders: int


@dataclass(frozen=True, slots=True)
class OrderTrie:
    kernel: str
    dims: Order  # dims that carry a loop (bound > 1)
    ignored: Order  # bound-1 dims
    candidates: tuple[OrderCandidate, ...]
    rejected: tuple[Rejected, ...]
    nodes: int  # trie nodes generated (root excluded)
    late: int  # kept leaves dropped by R2 after they were generated (0: no pruned node was generated)

    @property
    def space(self) -> int:
        return factorial(len(self.dims))

    @property
    def orders(self) -> tuple[Order, ...]:
        return tuple(c.order for c in self.candidates)


def _label(suffix: Sequence[str], free: int) -> str:
    return " ".join(["x"] * free + list(suffix))


def _describe(sig: Iterable[tuple[str, str, str]]) -> str:
    by: dict[str, list[str]] = {}
    for t, d, kind in sorted(sig):
        by.setdefault(t, []).append(d if kind == "full" else f"{d}(partial)")
    return "; ".join(f"{t} via {','.join(ds)}" for t, ds in by.items()) or "nothing"


def order_trie(kernel: Kernel) -> OrderTrie:
    """Build the pruned loop-order trie of ``kernel`` (seed 000 §3.2.5-3.2.6)."""
    table = reuse_table(kernel)
    dims = tuple(d.name for d in kernel.dims if d.bound > 1)
    ignored = tuple(d.name for d in kernel.dims if d.bound == 1)
    tensors = tuple(t.name for t in kernel.tensors)
    n = len(dims)
    kept: list[tuple[frozenset, tuple[str, ...]]] = []  # (signature, suffix inner-first)
    rejected: list[Rejected] = []
    nodes = late = 0

    def outer_first(inner_first: Sequence[str]) -> Order:
        return tuple(reversed(inner_first))

    def optimistic(sig: frozenset, alive: frozenset, remaining: Sequence[str]) -> frozenset:
        extra = {(t, d, table[t][d]) for t in alive for d in remaining if table[t][d] != "none"}
        return sig | extra

    def visit(suffix: tuple[str, ...], sig: frozenset, alive: frozenset) -> None:
        nonlocal nodes
        remaining = [d for d in dims if d not in suffix]
        children, dead = [], []
        for d in remaining:
            gained = frozenset((t, d, table[t][d]) for t in alive if table[t][d] != "none")
            if gained:
                children.append((d, gained, frozenset(t for t in alive if table[t][d] == "full")))
            else:
                dead.append(d)
        if not children:  # leaf: no outer loop can add reuse, their order is free (Obs. 2)
            leaf(suffix, sig)
            return
        below = factorial(len(remaining) - 1)
        for d in dead:  # R1
            rejected.append(Rejected(
                outer_first((*suffix, d)), "R1",
                f"{d} adds no reuse: it indexes every tensor still reused ({', '.join(sorted(alive))}), "
                "so the loops outside it carry none either (Obs. 1/2)", below))
        children.sort(key=lambda c: (-len(c[1]), dims.index(c[0])))
        for d, gained, child_alive in children:
            child = (*suffix, d)
            child_sig = sig | gained
            bound = optimistic(child_sig, child_alive, [r for r in remaining if r != d])
            dom = next((k for k in kept if k[0] >= bound), None)
            if dom is not None:  # R2 before generating the subtree
                how = ("(i) the same reuse through the same dims" if dom[0] == bound else
                       f"(ii) the same reuse plus {_describe(dom[0] - bound)}")
                rejected.append(Rejected(
                    outer_first(child), "R2",
                    f"at best reuses {_describe(bound)}; {_label(outer_first(dom[1]), n - len(dom[1]))} "
                    f"already offers {how}", below))
                continue
            nodes += 1
            visit(child, child_sig, child_alive)

    def leaf(suffix: tuple[str, ...], sig: frozenset) -> None:
        nonlocal late
        for k in [k for k in kept if k[0] < sig]:  # R2 after the fact: strictly dominated
            kept.remove(k)
            late += 1
            rejected.append(Rejected(
                outer_first(k[1]), "R2",
                f"reuses {_describe(k[0])}; {_label(outer_first(suffix), n - len(suffix))} reuses that plus "
                f"{_describe(sig - k[0])}", factorial(n - len(k[1]))))
        kept.append((sig, suffix))

    visit((), frozenset(), frozenset(tensors))
    visit = None  # a recursive closure refers to itself: a reference cycle the map stage would keep (gcpause)
    candidates = []
    for sig, suffix in kept:
        inner = outer_first(suffix)
        free = tuple(d for d in dims if d not in suffix)
        if len(free) > 1:
            rejected.append(Rejected(
                inner, "Obs2", f"the outer loops {', '.join(free)} carry no reuse, so their other "
                f"{factorial(len(free)) - 1} orders equal the kept one", factorial(len(free)) - 1))
        reuse = tuple(Reuse(t, d, k) for t, d, k in sorted(sig, key=lambda r: (r[0], suffix.index(r[1]))))
        candidates.append(OrderCandidate((*ignored, *free, *inner), inner, free, reuse))
    return OrderTrie(kernel.name, dims, ignored, tuple(candidates), tuple(rejected), nodes, late)


# ---------------------------------------------------------------- footprints (§3.2.7)

def _window(terms: tuple[tuple[int, int, float], ...]) -> float | None:
    """Distinct values of a two-term row ``c1*i1 + c2*i2`` whose reduced coefficients include a 1
    (``ca * a + b``: windows of ``b`` consecutive values every ``ca``), else None. ``terms``:
    ``(c, full extent, extent counted)``; the full extents decide whether windows overlap, the
    counted ones (the full ones, or a Ruby grid's averages) give ``ca * (a - 1) + b`` or ``a * b``."""
    (c1, f1, n1), (c2, f2, n2) = terms
    g = gcd(c1, c2)
    c1, c2 = c1 // g, c2 // g
    for (ca, na), (cb, fb, nb) in (((c1, n1), (c2, f2, n2)), ((c2, n2), (c1, f1, n1))):
        if cb == 1:
            return ca * (na - 1) + nb if fb >= ca else na * nb
    return None


@lru_cache(maxsize=None)
def _row_distinct(terms: tuple[tuple[int, int], ...]) -> int:
    """Distinct values of ``sum c*i`` over ``0 <= i < extent`` for the (c, extent) terms."""
    terms = tuple(sorted((abs(c), e) for c, e in terms if c and e > 1))
    if not terms:
        return 1
    if len(terms) == 1:
        return terms[0][1]
    if len(terms) == 2 and (n := _window(tuple((c, e, e) for c, e in terms))) is not None:
        return int(n)
    values = {0}
    for c, e in terms:
        values = {v + c * i for v in values for i in range(e)}
    return len(values)


def average_row_distinct(terms: tuple[tuple[int, int, float], ...]) -> float:
    """:func:`_row_distinct` averaged over a Ruby tile grid: ``(c, full extent, average extent)``
    per term. A one-dim row counts its average extent, and a window row (:func:`_window`) its
    count at the average extents: both are affine in each extent, so over a grid of independent
    extents their average is the count at the averages (the halo of every partial tile counted:
    seed 002's remainders). Other rows scale the full tile's count by the average/full ratio of
    each term."""
    live = tuple(sorted((abs(c), f, a) for c, f, a in terms if c and f > 1))
    if len(live) == 1:
        return live[0][2]
    if len(live) == 2 and (n := _window(live)) is not None:
        return n
    return _row_distinct(tuple((c, f) for c, f, _ in live)) * prod(a / f for _, f, a in live)


@lru_cache(maxsize=None)
def row_terms(tensor: TensorAccess) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per data row of ``tensor``, its ``(dim index, coefficient)`` terms."""
    return tuple(tuple((i, c) for i, c in enumerate(row) if c) for row in tensor.matrix)


def row_footprint(rows: tuple[tuple[tuple[int, int], ...], ...], sizes: Sequence[int]) -> int:
    """:func:`tensor_footprint` from the tensor's :func:`row_terms` (a cost model keeps them)."""
    return prod(_row_distinct(tuple((c, sizes[i]) for i, c in row)) for row in rows)


@lru_cache(maxsize=1 << 18)
def _tensor_footprint(tensor: TensorAccess, sizes: tuple[int, ...]) -> int:
    return row_footprint(row_terms(tensor), sizes)


def average_footprint(tensor: TensorAccess, full: Sequence[int], average: Sequence[float]) -> float:
    """:func:`tensor_footprint` averaged over the tiles of a Ruby tiling whose tiles have extents
    ``full`` and, on average, ``average`` (kernel dim order): row by row,
    :func:`average_row_distinct`."""
    return prod(average_row_distinct(tuple((c, full[i], average[i]) for i, c in row)) for row in row_terms(tensor))


def tensor_footprint(tensor: TensorAccess, sizes: Sequence[int]) -> int:
    """Words of ``tensor`` touched by a tile of ``sizes`` (kernel dim order): the product
    over data rows of the distinct values each affine row takes, so a window row
    ``oh + kh`` gives ``P_L1 + R_L1 - 1`` (eq. 2) and a stride-2 row without overlap
    gives no holes. Exact when rows use disjoint dims (all kernels in
    :mod:`lego_build.analysis.kernels`); padding positions are counted."""
    return _tensor_footprint(tensor, tuple(sizes))
