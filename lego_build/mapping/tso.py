"""Tensor Slicing Optimization on a multicore NPU (seed 003, Algorithms 1-4, eqs. 1-9).

A conv (``N`` input maps of ``H x L``, ``M`` filters of ``N x KH x KW``, stride ``S``,
output ``R x C``; grouped convs: ``N`` is the channels per group) is split over the
clusters by a *partition* (Algorithm 2), then every cluster's filters are dealt to its
cores tile by tile under a *schedule* (Algorithm 3). The search (Algorithm 1) tries every
partition, schedule and tile ``(T_R, T_C, T_N)``, with ``T_M`` the most filters that fit
(``GetFilters``), and keeps the fastest. It is vectorised over the tile grid with numpy;
each rejected tile is counted under its reason.

Partitions (``#TLE`` clusters): ``KS`` splits the filters ``TLE_W = ceil(M / #TLE)``,
``KS&OFM`` filters and output rows in two halves each, ``OFM`` the output rows
``TLE_R = ceil(R / #TLE)``.

Readings (the paper prints eqs. 3-5 without the per-core factors):

* eq. 1-2: ``T_H = (T_R - 1) S + KH``, ``T_L = (T_C - 1) S + KW`` (clipped to the map);
  the three tiles must fit MB0 (inputs), MB1 (weights), MB2 (outputs).
* An input tile is loaded once per cluster and multicast to its cores; weight and output
  tiles are per core, so they are moved once per core. With ``nR, nC, nN`` tiles of rows,
  columns and channels in a cluster and ``nM = ceil(TLE_W / (T_M #TLT))`` filter rounds
  per core, the transfers per cluster are (loops outer -> inner):
  IS ``r, c, n, m``: inputs ``nR nC nN``, weights ``#TLT nR nC nN nM``, outputs
  ``#TLT nR nC nM (2 nN - 1)`` (partial sums leave and come back when ``nM > 1``, else
  ``#TLT nR nC``); OS ``r, c, m, n``: inputs ``nR nC nM nN``, weights ``#TLT nR nC nM nN``,
  outputs ``#TLT nR nC nM``; WS ``m, n, r, c``: weights ``#TLT nM nN`` (each loaded once;
  whole filters when ``T_N = N``, eq. 5), inputs ``nR nC nM nN``, outputs
  ``#TLT nR nC nM (2 nN - 1)``.
* Equal times (frequent under the burst-oblivious model, which sees bytes only) go to the
  tile with the fewest DMA transfers.
* eq. 7-8: a core computes ``T_N T_M ceil(T_R T_C KH KW / #MACs)`` cycles per tile and
  ``nR nC nN nM`` tiles (edge tiles counted as full, as eq. 8's ceilings do); the cores
  run in parallel.
* eq. 6, 9: ``T = T_MAC + T_DRAM`` (no overlap; ``overlap`` takes the max), DRAM shared:
  ``T_DRAM`` sums every cluster's transfers, each ``bytes / BW + bursts x CAS``
  (:mod:`.dram`; the burst-oblivious mode drops the burst term when *choosing* tiles, and
  its choice is then timed with bursts, as the paper measured it on the board).
* Grouped convs: a tile of ``T_M`` filters reads the input channels of the
  ``ceil(T_M / filters per group)`` groups it spans (depthwise: ``T_M`` channels).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil

import numpy as np

from lego_build.ir.workload import Kernel
from lego_build.mapping.dram import bursts, transfer_ns

PARTITIONS = ("KS", "KS&OFM", "OFM")
SCHEDULES = ("IS", "OS", "WS")


@dataclass(frozen=True, slots=True)
class Conv:
    """One conv layer in seed 003's notation (N = input channels per group)."""

    name: str
    N: int
    M: int
    H: int
    L: int
    KH: int
    KW: int
    S: int
    R: int
    C: int
    groups: int = 1

    @property
    def macs(self) -> int:
        return self.M * self.N * self.R * self.C * self.KH * self.KW

    @staticmethod
    def from_kernel(name: str, k: Kernel) -> "Conv":
        """A conv2d-family kernel (fc/matmul lowered to 1x1 convs) as a TSO conv (batch folded into rows)."""
        if k.name != "conv2d":
            raise ValueError(f"{name}: TSO slices conv2d-family layers, got {k.name}")
        b = {d.name: d.bound for d in k.dims}
        x = k.tensor("X")
        rows = x.matrix[2]  # ih = sh*oh + dh*kh - pt
        cols = x.matrix[3]
        sh, dh = rows[k.dim_index("oh")], rows[k.dim_index("kh")]
        sw, dw = cols[k.dim_index("ow")], cols[k.dim_index("kw")]
        return Conv(name, N=b["ic"], M=b["oc"] * b["g"], H=x.shape[2] * b["n"], L=x.shape[3],
                    KH=(b["kh"] - 1) * dh + 1, KW=(b["kw"] - 1) * dw + 1, S=max(sh, sw),
                    R=b["oh"] * b["n"], C=b["ow"], groups=b["g"])


@dataclass(frozen=True, slots=True)
class NPU:
    """``arch.multicore`` as plain numbers."""

    tles: int
    tlts: int
    mb_in: int
    mb_w: int
    mb_out: int
    macs: int  # per core per cycle at element_bits
    elem_bytes: int
    clock_ghz: float
    burst_bytes: int
    burst_ns: float
    bandwidth_gbps: float
    overlap: bool = False

    @staticmethod
    def from_conf(mc) -> "NPU":
        return NPU(mc.clusters, mc.cores, mc.spad_in_bytes, mc.spad_w_bytes, mc.spad_out_bytes,
                   mc.datapath_bits // mc.element_bits, mc.element_bits // 8, mc.clock_ghz, mc.burst_bytes,
                   mc.burst_ns, mc.bandwidth_gbps, mc.overlap)


def tle_slicing(conv: Conv, partition: str, tles: int) -> tuple[int, int]:
    """Algorithm 2: filters and output rows of one cluster, ``(TLE_W, TLE_R)``."""
    if partition == "KS":
        return ceil(conv.M / tles), conv.R
    if partition == "KS&OFM":
        half = max(1, tles // 2)
        return ceil(conv.M / half), ceil(conv.R / half)
    if partition == "OFM":
        return conv.M, ceil(conv.R / tles)
    raise ValueError(f"unknown partition {partition!r}; partitions: {', '.join(PARTITIONS)}")


@dataclass(frozen=True, slots=True)
class Choice:
    partition: str
    schedule: str
    T_M: int
    T_N: int
    T_R: int
    T_C: int
    T_H: int
    T_L: int
    mac_ns: float
    dram_ns: float  # under the model the choice was made with
    dram_burst_ns: float  # with bursts (what the board measures)
    bursts: tuple[int, int, int]  # per tile: input, weight, output
    transfers: tuple[int, int, int]  # tiles moved over all clusters: input, weight, output
    total_bursts: int

    def time_ns(self, overlap: bool = False, burst_model: bool = True) -> float:
        dram = self.dram_burst_ns if burst_model else self.dram_ns
        return max(self.mac_ns, dram) if overlap else self.mac_ns + dram

    def to_json(self, overlap: bool = False) -> dict:
        return {
            "partition": self.partition, "schedule": self.schedule,
            "tile": {"T_M": self.T_M, "T_N": self.T_N, "T_R": self.T_R, "T_C": self.T_C, "T_H": self.T_H,
                     "T_L": self.T_L},
            "bursts_per_tile": dict(zip(("input", "weight", "output"), self.bursts)),
            "transfers": dict(zip(("input", "weight", "output"), self.transfers)),
            "bursts": self.total_bursts,
            "mac_us": round(self.mac_ns / 1000, 6),
            "dram_us": round(self.dram_burst_ns / 1000, 6),
            "time_us": round(self.time_ns(overlap) / 1000, 6),
        }


@dataclass
class Result:
    conv: Conv
    best: Choice | None
    valid: int
    rejected: dict[str, int]


def _grid(conv: Conv, tle_r: int):
    tr, tc, tn = np.meshgrid(np.arange(1, tle_r + 1), np.arange(1, conv.C + 1), np.arange(1, conv.N + 1),
                             indexing="ij")
    return tr.ravel(), tc.ravel(), tn.ravel()


def explore(conv: Conv, npu: NPU, burst: bool = True, partitions=PARTITIONS, schedules=SCHEDULES) -> Result:
    """Algorithm 1 over the given partitions and schedules; the fastest under the chosen DRAM model."""
    eb = npu.elem_bytes
    mpg = conv.M // conv.groups  # filters per group
    best, best_t, valid = None, np.inf, 0
    rejected: dict[str, int] = {}

    def reject(reason: str, count: int) -> None:
        if count:
            rejected[reason] = rejected.get(reason, 0) + int(count)

    for p in partitions:
        tle_w, tle_r = tle_slicing(conv, p, npu.tles)
        tr, tc, tn = _grid(conv, tle_r)
        th = np.minimum((tr - 1) * conv.S + conv.KH, conv.H)
        tl = np.minimum((tc - 1) * conv.S + conv.KW, conv.L)
        per_core = ceil(tle_w / npu.tlts)
        tm = np.full(tr.shape, per_core)
        tm = np.minimum(tm, npu.mb_w // (tn * conv.KH * conv.KW * eb))  # eq. 2, MB1
        tm = np.minimum(tm, npu.mb_out // (tr * tc * eb))  # eq. 2, MB2
        if conv.groups > 1:  # the input tile grows with the groups the filters span
            tm = np.minimum(tm, (npu.mb_in // (tn * th * tl * eb)) * mpg)
        spans = np.ceil(tm / mpg).astype(np.int64) if conv.groups > 1 else np.ones_like(tm)
        in_ch = tn * np.maximum(spans, 1)
        in_bytes = in_ch * th * tl * eb
        ok_in = in_bytes <= npu.mb_in
        ok_m = tm >= 1
        reject("MB0 (inputs) overflows: T_N x T_H x T_L too large", np.sum(~ok_in))
        reject("MB1/MB2: not even one filter's weights or outputs fit", np.sum(ok_in & ~ok_m))
        ok = ok_in & ok_m
        if not ok.any():
            continue
        tr, tc, tn, th, tl, tm, in_ch, in_bytes = (a[ok] for a in (tr, tc, tn, th, tl, tm, in_ch, in_bytes))
        nR = np.ceil(tle_r / tr)
        nC = np.ceil(conv.C / tc)
        nN = np.ceil(conv.N / tn)
        nM = np.ceil(tle_w / (tm * npu.tlts))
        tile_cycles = tn * tm * np.ceil(tr * tc * conv.KH * conv.KW / npu.macs)
        mac_ns = nR * nC * nN * nM * tile_cycles / npu.clock_ghz
        in_shape = (conv.N * conv.groups, conv.H, conv.L)
        b_in = bursts(in_shape, (in_ch, th, tl), eb, npu.burst_bytes)
        w_bytes = tm * tn * conv.KH * conv.KW * eb
        # weights M x N x KH x KW: a tile with every channel is one run per filter group, else one per filter
        b_w = np.where(tn >= conv.N, np.ceil(w_bytes / npu.burst_bytes),
                       tm * np.ceil(tn * conv.KH * conv.KW * eb / npu.burst_bytes))
        tro, tco = np.minimum(tr, tle_r), np.minimum(tc, conv.C)
        out_bytes = tm * tro * tco * eb
        b_out = bursts((conv.M, conv.R, conv.C), (tm, tro, tco), eb, npu.burst_bytes)
        for q in schedules:
            if q == "IS":
                a_in = nR * nC * nN
                a_w = npu.tlts * nR * nC * nN * nM
                a_out = npu.tlts * nR * nC * nM * np.where(nM > 1, 2 * nN - 1, 1)
            elif q == "OS":
                a_in = nR * nC * nM * nN
                a_w = npu.tlts * nR * nC * nM * nN
                a_out = npu.tlts * nR * nC * nM
            else:
                a_in = nR * nC * nM * nN
                a_w = npu.tlts * nM * nN
                a_out = npu.tlts * nR * nC * nM * (2 * nN - 1)
            a_in, a_w, a_out = (a * npu.tles for a in (a_in, a_w, a_out))
            nbytes = a_in * in_bytes + a_w * w_bytes + a_out * out_bytes
            nb = a_in * b_in + a_w * b_w + a_out * b_out
            dram_b = transfer_ns(nbytes, nb, npu.bandwidth_gbps, npu.burst_ns, True)
            dram_model = dram_b if burst else transfer_ns(nbytes, nb, npu.bandwidth_gbps, npu.burst_ns, False)
            t = np.maximum(mac_ns, dram_model) if npu.overlap else mac_ns + dram_model
            valid += int(t.size)
            # ties (common under the burst-oblivious model): the fewest DMA transfers, then the grid order
            near = np.flatnonzero(t <= t.min() * (1 + 1e-9))
            i = int(near[np.argmin((a_in + a_w + a_out)[near])])
            if t[i] < best_t * (1 - 1e-12):
                best_t = float(t[i])
                best = Choice(p, q, int(tm[i]), int(tn[i]), int(tr[i]), int(tc[i]), int(th[i]), int(tl[i]),
                              float(mac_ns[i]), float(dram_model[i]), float(dram_b[i]),
                              (int(b_in[i]), int(b_w[i]), int(b_out[i])),
                              (int(a_in[i]), int(a_w[i]), int(a_out[i])), int(nb[i]))
    return Result(conv, best, valid, rejected)


def _explore_job(args):
    conv, npu, burst, partitions, schedules = args
    return explore(conv, npu, burst, partitions, schedules)


def explore_all(convs: list[Conv], npu: NPU, burst: bool = True, partitions=PARTITIONS, schedules=SCHEDULES,
                jobs: int = 1, progress=None) -> list[Result]:
    """Every conv independently (identical shapes once), over ``jobs`` processes when > 1."""
    distinct: dict[tuple, Conv] = {}
    for c in convs:
        distinct.setdefault(_shape(c), c)
    work = [(c, npu, burst, tuple(partitions), tuple(schedules)) for c in distinct.values()]
    if jobs > 1 and len(work) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = []
            for r in pool.map(_explore_job, work, chunksize=max(1, len(work) // (4 * jobs))):
                results.append(r)
                if progress:
                    progress(r.conv.name)
    else:
        results = []
        for w in work:
            results.append(_explore_job(w))
            if progress:
                progress(w[0].name)
    by_shape = {_shape(r.conv): r for r in results}
    return [Result(c, by_shape[_shape(c)].best, by_shape[_shape(c)].valid, by_shape[_shape(c)].rejected)
            for c in convs]


def _shape(c: Conv) -> tuple:
    return (c.N, c.M, c.H, c.L, c.KH, c.KW, c.S, c.R, c.C, c.groups)
