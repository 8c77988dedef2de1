"""Per-dimension tiling mapspaces: perfect factorization (PFM) and Ruby's imperfect ones (seed 002).

One loop bound ``D`` is tiled over a logical hierarchy of levels, listed outer -> inner,
each ``spatial`` (a parFor; ``bound`` = fanout) or ``temporal`` (a for; ``bound`` = capacity
of the tile that level's memory holds, ``None`` = unbounded).  Level ``i`` gets a pair
``(P_i, R_i)``, ``1 <= R_i <= P_i``.

Reading of seed 002 eq. (5), ``L_n = L_{n+1} P_n + R_n - 1`` with ``L_{top+1} = 0`` and
``D = L_0 + 1`` (paper index n: 0 = innermost).  With ``T_n = L_n + 1`` (total iterations of
level n over the whole run, remainders included)::

    T_n = (T_{n+1} - 1) * P_n + R_n,   T_{top+1} = 1,   T_0 = D.

So every parent iteration except the *globally last* one runs ``P_n`` iterations of level n
and the globally last runs ``R_n`` (the remainder applies once, on the final iteration of all
enclosing loops).  Fig. 5: DRAM (1,1), GLB (17,17), PEs (6,4) -> T = 1, 17, 100.
``R_n = P_n`` everywhere is eq. (1), ``D = prod P_n`` (PFM).  When ``T_{n+1} = 1`` the only
parent iteration is the last, ``P_n`` is never executed and is canonicalised to ``R_n``, so
distinct tilings are distinct loop nests (in particular the top level is always ``P = R``).

Spaces: ``pfm`` (R = P everywhere), ``ruby`` (remainders at every level), ``ruby-s``
(remainders at spatial levels only), ``ruby-t`` (temporal only).  Every space respects the
bounds: spatial ``P <= fanout``; temporal ``prod(P_k, k = this level .. innermost) <= capacity``
(the largest tile the memory holds, spatial factors inside it included).

Table I of seed 002 (rank-1 tensor, 2 memory levels, fanout 9; ``table1_levels``: outer
temporal, spatial <= 9, inner temporal tile <= 1024), counted as distinct executable tilings:

=========  ===========================  ===========================
space      this module (D = 3 .. 4096)  paper
=========  ===========================  ===========================
PFM        3, 22, 24, 52, 43            3, 22, 24, 52, 43
Ruby-S     4, 42, 57, 119, 93           7, 50, 61, 117, 83
Ruby-T     5, 146, 228, 2297, 2903      7, 157, 247, 2392, 10040
Ruby       6, 232, 366, 3711, 7716      11, 414, 690, 5713, 30612
=========  ===========================  ===========================

The PFM row is reproduced exactly. The Ruby rows are not: the paper does not give its
enumeration rules, and its counts are larger than the number of distinct tilings even
at D = 3, where only 6 distinct Ruby tilings exist within the bounds (the paper's counts
appear to include factors that never execute, such as a remainder below a level whose
parent runs once). This module counts each executable loop nest once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Iterator, Union

from lego_build.ir.mapping import MAPSPACES

LevelSpec = Union["Level", tuple[str, Union[int, None]]]
SPACES = tuple(MAPSPACES)
KINDS = ("spatial", "temporal")

# Seed 002 Table I as printed (dimension sizes 3, 64, 100, 1000, 4096).
TABLE1_SIZES = (3, 64, 100, 1000, 4096)
TABLE1_PAPER = MappingProxyType({
    "pfm": (3, 22, 24, 52, 43),
    "ruby-s": (7, 50, 61, 117, 83),
    "ruby-t": (7, 157, 247, 2392, 10040),
    "ruby": (11, 414, 690, 5713, 30612),
})


@dataclass(frozen=True, slots=True)
class Level:
    """One logical level: ``spatial`` (bound = fanout) or ``temporal`` (bound = tile capacity)."""

    kind: str
    bound: int | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"level kind must be one of {KINDS}, got {self.kind!r}")
        if self.bound is not None and self.bound < 1:
            raise ValueError(f"level bound must be >= 1 or None, got {self.bound}")


def as_levels(levels: Iterable[LevelSpec]) -> tuple[Level, ...]:
    """Accept ``Level`` objects or ``(kind, bound)`` pairs, outer -> inner."""
    out = tuple(lv if isinstance(lv, Level) else Level(*lv) for lv in levels)
    if not out:
        raise ValueError("at least one level is needed")
    return out


def imperfect_allowed(space: str, kind: str) -> bool:
    """May a level of this kind carry a remainder ``R < P`` in ``space``?"""
    if space not in SPACES:
        raise ValueError(f"space must be one of {SPACES}, got {space!r}")
    return kind in MAPSPACES[space]


@dataclass(frozen=True, slots=True)
class Tiling:
    """Per-level ``(P, R)`` outer -> inner; ``T_n = (T_{n+1} - 1) P_n + R_n`` (seed 002 eq. 5)."""

    levels: tuple[Level, ...]
    factors: tuple[tuple[int, int], ...]

    def __post_init__(self):
        if len(self.levels) != len(self.factors):
            raise ValueError("one (P, R) pair per level")

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(lv.kind for lv in self.levels)

    def iterations(self) -> tuple[int, ...]:
        """``T_n`` per level: total iterations of the level over the run, remainders included."""
        out, t = [], 1
        for p, r in self.factors:
            t = (t - 1) * p + r
            out.append(t)
        return tuple(out)

    def schedule(self) -> tuple[tuple[int, int, int], ...]:
        """Per level ``(k, P, R)``: ``k`` parent iterations run ``P`` iterations, the last runs ``R``."""
        parents = (1,) + self.iterations()[:-1]
        return tuple((t - 1, p, r) for t, (p, r) in zip(parents, self.factors))

    @property
    def size(self) -> int:
        """The reconstructed loop bound: ``L_0 + 1`` in eq. (5), no padding."""
        return self.iterations()[-1]

    @property
    def is_perfect(self) -> bool:
        return all(p == r for p, r in self.factors)

    def imperfect_levels(self) -> tuple[int, ...]:
        return tuple(i for i, (p, r) in enumerate(self.factors) if r != p)

    def tile(self, level: int) -> int:
        """Largest tile (elements) under one iteration of the level above: ``prod P_k, k >= level``."""
        return math.prod(p for p, _ in self.factors[level:])

    def is_canonical(self) -> bool:
        """``1 <= R <= P``, and ``P == R`` wherever the parent runs a single iteration."""
        parents = (1,) + self.iterations()[:-1]
        return all(1 <= r <= p and (t > 1 or p == r) for t, (p, r) in zip(parents, self.factors))

    def respects_bounds(self) -> bool:
        for i, (lv, (p, _)) in enumerate(zip(self.levels, self.factors)):
            if lv.bound is None:
                continue
            if lv.kind == "spatial" and p > lv.bound:
                return False
            if lv.kind == "temporal" and self.tile(i) > lv.bound:
                return False
        return True

    def is_valid(self, D: int) -> bool:
        """Exact cover of ``D`` (no padding), canonical, within every bound."""
        return self.size == D and self.is_canonical() and self.respects_bounds()

    def in_space(self, space: str) -> bool:
        return all(p == r or imperfect_allowed(space, lv.kind) for lv, (p, r) in zip(self.levels, self.factors))

    def utilization(self, level: int) -> float:
        """Average active fanout / fanout of a spatial level (fanout = its bound, else ``P``)."""
        lv = self.levels[level]
        if lv.kind != "spatial":
            raise ValueError(f"level {level} is {lv.kind}, not spatial")
        parents = 1 if level == 0 else self.iterations()[level - 1]
        width = lv.bound if lv.bound is not None else self.factors[level][0]
        return self.iterations()[level] / (parents * width)

    def cycles(self) -> int:
        """Time steps when each innermost iteration costs 1: temporal levels add, spatial run in parallel.

        A non-last iteration of level n takes ``full``; the globally last takes ``last``.
        Temporal: ``full = P f', last = (R-1) f' + l'``; spatial: ``full = f'``,
        ``last = f' if R > 1 else l'``.  Fig. 5 (D = 100 on 6 PEs): 17; best PFM: 20.
        """
        full = last = 1
        for lv, (p, r) in reversed(tuple(zip(self.levels, self.factors))):
            if lv.kind == "temporal":
                full, last = p * full, (r - 1) * full + last
            else:
                last = full if r > 1 else last
        return last


def enumerate_tilings(D: int, levels: Iterable[LevelSpec], space: str = "ruby") -> Iterator[Tiling]:
    """All valid canonical tilings of ``D`` over ``levels`` (outer -> inner) in ``space``.

    Yields in lexicographic order of ``factors``.  Branches are pruned on ``T_n <= D``, the
    fanouts and the capacity budget; the innermost level is solved directly from
    ``(T - 1) P + R = D``.
    """
    if D < 1:
        raise ValueError(f"D must be >= 1, got {D}")
    lvls = as_levels(levels)
    m = len(lvls)
    imperfect = tuple(imperfect_allowed(space, lv.kind) for lv in lvls)
    perfect_tail = tuple(not any(imperfect[i:]) for i in range(m))

    def walk(i: int, t: int, budget: int | None, acc: tuple) -> Iterator[Tiling]:
        lv = lvls[i]
        pmax = D if t == 1 else (D - 1) // (t - 1)
        if lv.bound is not None:
            if lv.kind == "spatial":
                pmax = min(pmax, lv.bound)
            else:
                budget = lv.bound if budget is None else min(budget, lv.bound)
        if budget is not None:
            pmax = min(pmax, budget)
        if i == m - 1:
            if t == 1:
                pairs = [(D, D)] if D <= pmax else []
            elif imperfect[i]:
                pairs = [(p, D - (t - 1) * p) for p in range(-(-D // t), pmax + 1)]
            else:
                pairs = [(D // t, D // t)] if D % t == 0 and D // t <= pmax else []
            for pair in pairs:
                yield Tiling(lvls, acc + (pair,))
            return
        for p in range(1, pmax + 1):
            nb = None if budget is None else budget // p
            if t == 1 or not imperfect[i]:
                nt = t * p
                if nt > D:
                    break
                if perfect_tail[i + 1] and D % nt:
                    continue
                yield from walk(i + 1, nt, nb, acc + ((p, p),))
                continue
            for r in range(1, p + 1):
                nt = (t - 1) * p + r
                if nt > D:
                    break
                yield from walk(i + 1, nt, nb, acc + ((p, r),))

    yield from walk(0, 1, None, ())


def count_tilings(D: int, levels: Iterable[LevelSpec], space: str = "ruby") -> int:
    return sum(1 for _ in enumerate_tilings(D, levels, space))


def best_tiling(D: int, levels: Iterable[LevelSpec], space: str = "ruby") -> Tiling:
    """Fewest ``cycles``; ties broken by enumeration (lexicographic) order."""
    return min(enumerate_tilings(D, levels, space), key=Tiling.cycles)


def table1_levels(fanout: int = 9, capacity: int | None = 1024) -> tuple[Level, ...]:
    """Seed 002 Table I: outer temporal (DRAM), spatial fanout, inner temporal (per-PE 1 KiB)."""
    return (Level("temporal"), Level("spatial", fanout), Level("temporal", capacity))


def table1_count(D: int, space: str, fanout: int = 9, capacity: int | None = 1024) -> int:
    """Count the distinct Table I tilings of ``D`` in ``space`` (seed 002, Table I)."""
    return count_tilings(D, table1_levels(fanout, capacity), space)
