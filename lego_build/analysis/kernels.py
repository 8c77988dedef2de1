"""Kernel builders: GEMM and plain conv2d written as affine data mappings (seed 004 eq. 3.1)."""
from __future__ import annotations

from typing import Any

from lego_build.flow.schema import ConfigError
from lego_build.ir.workload import Dim, Kernel, TensorAccess


def _unit_rows(dims: list[str], picks: list[str]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(1 if d == p else 0 for d in dims) for p in picks)


def gemm(M: int, N: int, K: int, bits: int = 8, acc_bits: int = 32) -> Kernel:
    """``Y[m, n] += A[m, k] * B[k, n]``."""
    dims = ["m", "n", "k"]
    return Kernel(
        name="gemm",
        dims=(Dim("m", M), Dim("n", N), Dim("k", K)),
        tensors=(
            TensorAccess("A", "in", (M, K), _unit_rows(dims, ["m", "k"]), (0, 0), bits),
            TensorAccess("B", "in", (K, N), _unit_rows(dims, ["k", "n"]), (0, 0), bits),
            TensorAccess("Y", "out", (M, N), _unit_rows(dims, ["m", "n"]), (0, 0), acc_bits),
        ),
    )


def conv2d(
    batch: int, in_ch: int, out_ch: int, in_h: int, in_w: int, kh: int, kw: int,
    stride: int = 1, pad: int = 0, bits: int = 8, acc_bits: int = 32,
) -> Kernel:
    """``Y[n,k,oh,ow] += X[n, c, s*oh + kh - pad, s*ow + kw - pad] * W[k, c, kh, kw]``.

    The input rows for ``ih`` and ``iw`` combine two iteration dims: the sliding
    window that seed 000 Table 1 calls partial reuse.
    """
    out_h = (in_h + 2 * pad - kh) // stride + 1
    out_w = (in_w + 2 * pad - kw) // stride + 1
    names = ["n", "k", "c", "oh", "ow", "kh", "kw"]

    def row(**coef: int) -> tuple[int, ...]:
        return tuple(coef.get(d, 0) for d in names)

    x_map = (row(n=1), row(c=1), row(oh=stride, kh=1), row(ow=stride, kw=1))
    return Kernel(
        name="conv2d",
        dims=(
            Dim("n", batch), Dim("k", out_ch), Dim("c", in_ch), Dim("oh", out_h),
            Dim("ow", out_w), Dim("kh", kh), Dim("kw", kw),
        ),
        tensors=(
            TensorAccess("X", "in", (batch, in_ch, in_h, in_w), x_map, (0, 0, -pad, -pad), bits),
            TensorAccess("W", "in", (out_ch, in_ch, kh, kw), (row(k=1), row(c=1), row(kh=1), row(kw=1)), (0,) * 4, bits),
            TensorAccess("Y", "out", (batch, out_ch, out_h, out_w), (row(n=1), row(k=1), row(oh=1), row(ow=1)), (0,) * 4, acc_bits),
        ),
    )


def kernel_from_config(workload: Any, acc_bits: int = 32) -> Kernel:
    """Build the kernel IR from a validated workload config."""
    if workload.kernel == "gemm":
        return gemm(workload.M, workload.N, workload.K, workload.bits, acc_bits)
    if workload.kernel == "conv2d":
        return conv2d(
            workload.batch, workload.in_ch, workload.out_ch, workload.in_h, workload.in_w,
            workload.kh, workload.kw, workload.stride, workload.pad, workload.bits, acc_bits,
        )
    raise ConfigError(f"workload.kernel={workload.kernel!r}: must be one of gemm, conv2d")
