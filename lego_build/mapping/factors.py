"""Tile extents a mapspace offers for one dim (pure Python, cheap to import)."""
from __future__ import annotations

from functools import lru_cache
from math import isqrt


@lru_cache(maxsize=None)
def divisors(n: int) -> tuple[int, ...]:
    """The divisors of ``n`` in increasing order, found in O(sqrt n) steps."""
    small = [d for d in range(1, isqrt(n) + 1) if n % d == 0]
    return tuple(small + [n // d for d in reversed(small) if d * d != n])


@lru_cache(maxsize=None)
def useful(D: int, imperfect: bool) -> tuple[int, ...]:
    """Tile extents worth offering: divisors, plus ``ceil(D / k)`` when remainders are allowed.

    The distinct ``ceil(D / k)``, ``1 <= k <= D``, are those of ``k <= sqrt(D)`` and every
    ``v <= sqrt(D) + 1`` (``v`` is reached by ``k = ceil(D / v)`` once ``v (v - 1) <= D``),
    so the set costs O(sqrt D), not O(D) (``workload.M=1000000000`` took minutes)."""
    vals = set(divisors(D))
    if imperfect:
        r = isqrt(D)
        vals |= {-(-D // k) for k in range(1, r + 1)}
        vals |= {v for v in range(1, r + 2) if v <= D and -(-D // -(-D // v)) == v}
    return tuple(sorted(vals))
