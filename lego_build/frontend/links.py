"""Candidate interconnections of one tensor under one dataflow: seed 004 eq. 4.1-4.4.

For every FU pair within ``|Δs|_inf <= d_S`` (physical coordinates; the virtual
difference ``Δv`` carries replication) with ``Δt_bias = Δs·c >= 0``:

* **direct** (eq. 4.1-4.2) when ``M_{I->D} M_{S->I} Δv = 0``: both FUs use the same
  element at the same time step; the wire delays it by ``Δt_bias``.
* **delay** (eq. 4.3-4.4) otherwise, when ``M_{I->D} M_{T->I} t = -M_{I->D} M_{S->I} Δv``
  has an integer solution ``t`` that lies in the future (its eq. 3.5 scalar ``w > 0``,
  i.e. lexicographically positive), fits the loop bounds and has
  ``prod_{t_i != 0} |t_i| <= d_T``: the destination uses the element ``w`` cycles
  later, so a FIFO of depth ``w`` carries it. With a fixed temporal dataflow ``w`` is
  the minimum solution; without one the paper's ``T = I`` reading applies (one loop
  per dim, dims in IR order) and the FIFO depth is programmable.

Delay links are searched for input tensors only: an output's partial sums are
reduced in place or along direct links.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, product
from math import prod

import numpy as np

from lego_build.ir.adg import Link
from lego_build.ir.dataflow import Coord, Dataflow
from lego_build.ir.workload import Kernel, TensorAccess


@dataclass(frozen=True, slots=True)
class DelaySolution:
    ds: Coord  # physical Δs
    t: tuple[int, ...]  # temporal displacement (eq. 4.3 unknowns), over the loops of ``loops``
    w: int  # eq. 3.5 scalar of t: FIFO depth in cycles


def temporal_loops(kernel: Kernel, df: Dataflow) -> tuple[tuple[str, int, int], ...]:
    """``(dim, trips, stride)`` per temporal loop, outer to inner (``T = I`` when not fixed).

    A dim's innermost level steps over its spatial extent; each level out steps over
    the levels inside it; the open level takes the trips the layer's bound leaves.
    """
    loops = df.temporal or tuple((d.name, 0) for d in kernel.dims)
    bounds = {d.name: d.bound for d in kernel.dims}
    stride = {d.name: df.extent(d.name) for d in kernel.dims}
    out = []
    for dim, trips in reversed(loops):
        n = trips or -(-bounds[dim] // stride[dim])
        out.append((dim, n, stride[dim]))
        stride[dim] *= n
    return tuple(reversed(out))


@lru_cache(maxsize=64)
def _t_vectors(trips: tuple[int, ...], d_t: int, max_nonzero: int = 3) -> np.ndarray:
    """Integer vectors with ``|t_i| < trips_i`` and ``prod |t_i| <= d_T`` over non-zeros."""
    rows = []
    n = len(trips)
    for k in range(1, max_nonzero + 1):
        for pos in combinations(range(n), k):
            ranges = [[v for v in range(-min(trips[p] - 1, d_t), min(trips[p] - 1, d_t) + 1) if v] for p in pos]
            for values in product(*ranges):
                if prod(abs(v) for v in values) <= d_t:
                    t = [0] * n
                    for p, v in zip(pos, values):
                        t[p] = v
                    rows.append(t)
    return np.array(rows, dtype=np.int64).reshape(-1, n)


def _matrix(tensor: TensorAccess) -> np.ndarray:
    return np.array(tensor.matrix, dtype=np.int64)


@lru_cache(maxsize=64)
def virtual_coords(df: Dataflow) -> np.ndarray:
    """Every FU's virtual coordinates (eq. 3.2), indexed by its physical coordinates."""
    fus = list(product(*(range(n) for n in df.shape)))
    return np.array([df.to_virtual(fu) for fu in fus], dtype=np.int64).reshape(*df.shape, -1)


@lru_cache(maxsize=1024)
def first_indirect(matrix, df: Dataflow, d_s: int, pairs: tuple[tuple[Coord, Coord], ...]) -> int:
    """The index of the first FU pair ``(src, dst)`` that is not one of :func:`candidate_links`'
    direct links (eq. 4.1-4.2) of a tensor with access ``matrix`` under ``df``; -1 if all are.
    The same test on the given pairs only, without enumerating the array's; memoised, since
    every layer of a stride asks it again for each dataflow's links."""
    if not pairs:
        return -1
    ends = np.array(pairs, dtype=np.int64)  # (pair, src/dst, axis)
    ds = ends[:, 1] - ends[:, 0]
    virt = virtual_coords(df)
    dv = virt[tuple(ends[:, 1].T)] - virt[tuple(ends[:, 0].T)]
    reuse = np.array(matrix, dtype=np.int64) @ np.array(df.m_s(), dtype=np.int64)
    bias = np.array([df.t_bias(tuple(d)) for d in ds.tolist()], dtype=np.int64)  # eq. 3.6
    ok = ds.any(axis=1) & (np.abs(ds).max(axis=1) <= d_s) & (bias >= 0) & ~(dv @ reuse.T).any(axis=1)
    return -1 if ok.all() else int(np.argmin(ok))


def candidate_links(kernel: Kernel, df: Dataflow, tensor: str, d_s: int, d_t: int,
                    with_delay: bool = True) -> tuple[tuple[Link, ...], tuple[DelaySolution, ...]]:
    """All direct and delay candidates of ``tensor`` (links) and the delay solutions found."""
    if tuple(d.name for d in kernel.dims) != tuple(df.dims):
        raise ValueError(f"kernel {kernel.name} has dims {', '.join(d.name for d in kernel.dims)} but dataflow "
                         f"{df.name} unrolls {', '.join(df.dims)}: lower the kernel to the array's family first "
                         "(lego_build.analysis.lowering.reference_kernel, as the graph stage does)")
    access = kernel.tensor(tensor)
    m_d = _matrix(access)
    m_s = np.array(df.m_s(), dtype=np.int64)
    loops = temporal_loops(kernel, df)
    trips = tuple(tr for _, tr, _ in loops)
    dim_index = {d.name: i for i, d in enumerate(kernel.dims)}
    m_t = np.zeros((len(kernel.dims), len(loops)), dtype=np.int64)
    for col, (dim, _, stride) in enumerate(loops):
        m_t[dim_index[dim], col] = stride
    radix = np.array([prod(trips[i + 1:]) for i in range(len(trips))], dtype=np.int64)
    wanted = with_delay and access.role == "in" and d_t > 0
    tv = _t_vectors(trips, d_t) if wanted else np.zeros((0, len(trips)), np.int64)
    reach = (m_d @ m_t) @ tv.T if len(tv) else np.zeros((m_d.shape[0], 0), np.int64)
    scalar = tv @ radix if len(tv) else np.zeros(0, np.int64)

    solved: dict[tuple[int, ...], DelaySolution | None] = {}
    links, solutions = [], {}
    rows, cols = df.shape
    virt = {(r, c): np.array(df.to_virtual((r, c)), dtype=np.int64) for r in range(rows) for c in range(cols)}
    for src in virt:
        for ds in product(range(-d_s, d_s + 1), repeat=2):
            dst = (src[0] + ds[0], src[1] + ds[1])
            if not any(ds) or dst not in virt:
                continue
            bias = sum(a * b for a, b in zip(ds, df.control_flow))
            if bias < 0:
                continue
            rhs = m_d @ (m_s @ (virt[dst] - virt[src]))
            if not rhs.any():
                links.append(Link(src, dst, bias))
                continue
            key = tuple(int(v) for v in rhs)
            if key not in solved:
                solved[key] = None
                if len(tv):
                    hit = np.all(reach == -rhs[:, None], axis=0) & (scalar > 0)
                    if hit.any():
                        best = int(np.argmin(np.where(hit, scalar, np.iinfo(np.int64).max)))
                        solved[key] = DelaySolution(ds, tuple(int(v) for v in tv[best]), int(scalar[best]))
            sol = solved[key]
            if sol is not None:
                solutions.setdefault((ds, sol.t), DelaySolution(ds, sol.t, sol.w))
                shift = tuple(int(v) for v in m_t @ np.array(sol.t, dtype=np.int64))
                links.append(Link(src, dst, bias + sol.w, "delay", sol.w, shift=shift))
    return tuple(links), tuple(solutions.values())
