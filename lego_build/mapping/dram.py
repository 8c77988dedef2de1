"""DRAM transfer time with bursts (seed 003 §III, Algorithm 4 ``CalcDataTransfer``).

A tensor sits in DRAM in row-major order (NCHW for feature maps, M-N-KH-KW for
weights); a tile is a box ``(channels, rows, cols)`` of it. Contiguous runs cost one
burst per started ``burst_bytes``: a tile as wide as the tensor is one run per channel
(or one run in all if it also spans every row), a narrower tile one run per row. Runs
are taken as burst-aligned (the paper's counting: 4 rows x 73 x 2 B = 584 B is 5
bursts). Time = bytes / bandwidth + bursts x ``burst_ns`` (burst mode) or bytes /
bandwidth alone (the burst-oblivious model, seed 003's "TSO-noburst").
"""
from __future__ import annotations

import numpy as np


def bursts(shape: tuple[int, int, int], tile, elem_bytes: int, burst_bytes: int):
    """Bursts to move a ``tile = (channels, rows, cols)`` of a ``shape = (C, H, W)`` tensor.

    Works elementwise on numpy arrays of tile sizes as well as on ints.
    """
    _, H, W = shape
    tc, th, tw = (np.minimum(np.asarray(x), lim) for x, lim in zip(tile, shape))
    per_row = np.ceil(tw * elem_bytes / burst_bytes)
    per_channel_full = np.ceil(th * W * elem_bytes / burst_bytes)
    all_full = np.ceil(tc * H * W * elem_bytes / burst_bytes)
    out = np.where(tw >= W, np.where(th >= H, all_full, tc * per_channel_full), tc * th * per_row)
    return out if out.shape else int(out)


def transfer_ns(nbytes, nbursts, bandwidth_gbps: float, burst_ns: float, burst: bool = True):
    """Algorithm 4: ``tile_size / BW`` plus, in burst mode, ``nbursts x CAS``."""
    t = np.asarray(nbytes) / bandwidth_gbps  # GB/s = bytes/ns
    if burst:
        t = t + np.asarray(nbursts) * burst_ns
    return t if t.shape else float(t)


def fig1_slicings() -> tuple[tuple[str, int, tuple[int, int, int]], ...]:
    """Seed 003 fig. 1: a 128x128 16-bit map sliced 8 x (128 rows x 32 B), 4 x (128 x 64 B), 4 x (64 x 128 B)."""
    return (("8 slices of 128x32B", 8, (1, 128, 16)), ("4 slices of 128x64B", 4, (1, 128, 32)),
            ("4 slices of 64x128B", 4, (1, 64, 64)))


def fig1_time_us(count: int, tile: tuple[int, int, int], bandwidth_gbps: float, burst_ns: float,
                 macs_per_ns: float = 0.0) -> tuple[int, float]:
    """(bursts, µs) of fig. 1's 1x1 conv: every slice of the input is loaded and its output stored."""
    shape, eb = (1, 128, 128), 2
    n = count * bursts(shape, tile, eb, 128)
    nbytes = count * tile[0] * tile[1] * tile[2] * eb
    mac = 128 * 128 / macs_per_ns if macs_per_ns else 0.0
    return n, (2 * transfer_ns(nbytes, n, bandwidth_gbps, burst_ns) + mac) / 1000

