"""Reuse table of a kernel (seed 000 Table 1, seed 001 Table 3.1).

For tensor ``T`` and iteration dim ``d``: *full* reuse when ``T`` does not depend on
``d`` (column ``d`` of ``M_{I->D}`` is zero); *partial* reuse when ``d`` shares a data
row with another moving dim ``e`` and the two can cancel, i.e. ``c_d Δd + c_e Δe = 0``
has a solution inside the bounds (a sliding window such as ``ih = s*oh + kh`` with
``s < KH``); *none* otherwise. So a 1x1 stride-2 conv has no window reuse, and a
grouped channel index ``IC*g + ic`` (``ic < IC``) never repeats.
"""
from __future__ import annotations

from math import gcd

from lego_build.ir.workload import Kernel, TensorAccess


def _pair_repeats(cd: int, bd: int, ce: int, be: int) -> bool:
    """Is there ``Δd != 0`` with ``cd*Δd + ce*Δe = 0``, ``|Δd| < bd`` and ``|Δe| < be``?"""
    g = gcd(cd, ce)
    return abs(ce) // g < bd and abs(cd) // g < be


def reuse_kind(tensor: TensorAccess, dim: int, bounds: tuple[int, ...]) -> str:
    rows = [row for row in tensor.matrix if row[dim] != 0]
    if not rows:
        return "full"
    for row in rows:
        for other, coef in enumerate(row):
            if other != dim and coef != 0 and bounds[other] > 1 and _pair_repeats(row[dim], bounds[dim], coef,
                                                                                  bounds[other]):
                return "partial"
    return "none"


def reuse_table(kernel: Kernel) -> dict[str, dict[str, str]]:
    bounds = tuple(d.bound for d in kernel.dims)
    return {t.name: {d.name: reuse_kind(t, i, bounds) for i, d in enumerate(kernel.dims)} for t in kernel.tensors}
