"""Direct interconnections from reuse: seed 004 eq. 4.1-4.2.

A tensor ``D`` can be passed from FU ``s`` to ``s + Δs`` when both use the same
element, ``M_{I->D} M_{S->I} Δs = 0``, the link is short (``|Δs|_inf <= d_S``) and it
does not go back in time: ``Δt_bias = Δs · c >= 0`` (eq. 3.7). The link then
carries a delay of ``Δt_bias`` cycles.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from lego_build.ir.workload import Kernel, TensorAccess


@dataclass(frozen=True, slots=True)
class LinkVector:
    ds: tuple[int, ...]
    delay: int  # Δt_bias = Δs · c


@dataclass(frozen=True, slots=True)
class Rejected:
    ds: tuple[int, ...]
    reason: str


def spatial_matrix(kernel: Kernel, spatial: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """``M_{S->I}`` (n_I x n_S) with a single 1 per column at the unrolled dim."""
    cols = [kernel.dim_index(d) for d in spatial]
    return tuple(tuple(1 if cols[j] == i else 0 for j in range(len(spatial))) for i in range(len(kernel.dims)))


def direct_links(
    tensor: TensorAccess, m_s: tuple[tuple[int, ...], ...], c: tuple[int, ...], d_s: int
) -> tuple[tuple[LinkVector, ...], tuple[Rejected, ...]]:
    """Solve eq. 4.1 by enumeration over the box ``|Δs|_inf <= d_S``; return links and rejections."""
    n_s = len(c)
    m_ds = [[sum(row[k] * m_s[k][j] for k in range(len(row))) for j in range(n_s)] for row in tensor.matrix]
    found, rejected = [], []
    for ds in product(range(-d_s, d_s + 1), repeat=n_s):
        if not any(ds):
            continue
        if any(sum(r[j] * ds[j] for j in range(n_s)) for r in m_ds):
            continue
        delay = sum(a * b for a, b in zip(ds, c))
        if delay < 0:
            rejected.append(Rejected(ds, f"Δt_bias = Δs·c = {delay} < 0: data would travel back in time"))
            continue
        found.append(LinkVector(ds, delay))
    return tuple(found), tuple(rejected)
