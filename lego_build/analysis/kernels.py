"""Kernel builders: every tensor kernel written as affine data mappings (seed 004 eq. 3.1).

Families and their dims (fixed per family, bounds vary):

* ``gemm``: ``Y[b,m,n] += A[b,m,k] * B[b,k,n]``; dims (b, m, n, k). Plain GEMM has
  ``b = 1``; batched matmul, attention and grouped convs lowered by im2col use ``b``.
* ``conv2d``: ``Y[n, g*OC+oc, oh, ow] += X[n, g*IC+ic, sh*oh + dh*kh - pt, sw*ow + dw*kw - pl]
  * W[g*OC+oc, ic, kh, kw]``; dims (n, g, oc, ic, oh, ow, kh, kw) with ``OC``/``IC`` the
  channels per group (depthwise: ``g = C``, ``OC = IC = 1``).
* ``mttkrp``: ``D[i,j] += A[i,k,l] * B[k,j] * C[l,j]``; dims (i, j, k, l).
* ``ttmc``: ``Y[i,j,k] += X[i,l,m] * B[l,j] * C[m,k]``; dims (i, j, k, l, m).
"""
from __future__ import annotations

from lego_build.ir.workload import Dim, Kernel, TensorAccess


def _rows(dims: list[str], *rows: dict[str, int]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(row.get(d, 0) for d in dims) for row in rows)


def gemm(M: int, N: int, K: int, batch: int = 1, bits: int = 8, acc_bits: int = 32) -> Kernel:
    """``Y[b, m, n] += A[b, m, k] * B[b, k, n]``."""
    d = ["b", "m", "n", "k"]
    return Kernel(
        name="gemm",
        dims=(Dim("b", batch), Dim("m", M), Dim("n", N), Dim("k", K)),
        tensors=(
            TensorAccess("A", "in", (batch, M, K), _rows(d, {"b": 1}, {"m": 1}, {"k": 1}), (0, 0, 0), bits),
            TensorAccess("B", "in", (batch, K, N), _rows(d, {"b": 1}, {"k": 1}, {"n": 1}), (0, 0, 0), bits),
            TensorAccess("Y", "out", (batch, M, N), _rows(d, {"b": 1}, {"m": 1}, {"n": 1}), (0, 0, 0), acc_bits),
        ),
    )


def conv_out(size: int, k: int, stride: int, pad_lo: int, pad_hi: int, dilation: int) -> int:
    return (size + pad_lo + pad_hi - dilation * (k - 1) - 1) // stride + 1


def conv2d(
    batch: int, in_ch: int, out_ch: int, in_h: int, in_w: int, kh: int, kw: int,
    stride: int | tuple[int, int] = 1, pad: int | tuple[int, int, int, int] = 0,
    dilation: int | tuple[int, int] = 1, groups: int = 1, bits: int = 8, acc_bits: int = 32,
) -> Kernel:
    """Grouped, strided, dilated, padded 2-D convolution (NCHW).

    ``pad`` is one int or (top, left, bottom, right) as in ONNX; ``stride`` and
    ``dilation`` are one int or (h, w). The input rows ``ih = sh*oh + dh*kh - pt``
    combine two iteration dims: seed 000 Table 1's partial (sliding-window) reuse.
    """
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    pt, pl, pb, pr = (pad,) * 4 if isinstance(pad, int) else pad
    if in_ch % groups or out_ch % groups:
        raise ValueError(f"channels {in_ch}->{out_ch} are not divisible by groups={groups}")
    icg, ocg = in_ch // groups, out_ch // groups
    out_h = conv_out(in_h, kh, sh, pt, pb, dh)
    out_w = conv_out(in_w, kw, sw, pl, pr, dw)
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"a {kh}x{kw} kernel does not fit the {in_h}x{in_w} input")
    d = ["n", "g", "oc", "ic", "oh", "ow", "kh", "kw"]
    x_map = _rows(d, {"n": 1}, {"g": icg, "ic": 1}, {"oh": sh, "kh": dh}, {"ow": sw, "kw": dw})
    w_map = _rows(d, {"g": ocg, "oc": 1}, {"ic": 1}, {"kh": 1}, {"kw": 1})
    y_map = _rows(d, {"n": 1}, {"g": ocg, "oc": 1}, {"oh": 1}, {"ow": 1})
    return Kernel(
        name="conv2d",
        dims=(Dim("n", batch), Dim("g", groups), Dim("oc", ocg), Dim("ic", icg), Dim("oh", out_h),
              Dim("ow", out_w), Dim("kh", kh), Dim("kw", kw)),
        tensors=(
            TensorAccess("X", "in", (batch, in_ch, in_h, in_w), x_map, (0, 0, -pt, -pl), bits),
            TensorAccess("W", "in", (out_ch, icg, kh, kw), w_map, (0, 0, 0, 0), bits),
            TensorAccess("Y", "out", (batch, out_ch, out_h, out_w), y_map, (0, 0, 0, 0), acc_bits),
        ),
    )


def mttkrp(I: int, J: int, K: int, L: int, bits: int = 8, acc_bits: int = 32) -> Kernel:
    """Matricized tensor times Khatri-Rao product: ``D[i,j] += A[i,k,l] * B[k,j] * C[l,j]``."""
    d = ["i", "j", "k", "l"]
    return Kernel(
        name="mttkrp",
        dims=(Dim("i", I), Dim("j", J), Dim("k", K), Dim("l", L)),
        tensors=(
            TensorAccess("A", "in", (I, K, L), _rows(d, {"i": 1}, {"k": 1}, {"l": 1}), (0, 0, 0), bits),
            TensorAccess("B", "in", (K, J), _rows(d, {"k": 1}, {"j": 1}), (0, 0), bits),
            TensorAccess("C", "in", (L, J), _rows(d, {"l": 1}, {"j": 1}), (0, 0), bits),
            TensorAccess("D", "out", (I, J), _rows(d, {"i": 1}, {"j": 1}), (0, 0), acc_bits),
        ),
    )


def ttmc(I: int, J: int, K: int, L: int, M: int, bits: int = 8, acc_bits: int = 32) -> Kernel:
    """Tensor-times-matrix chain: ``Y[i,j,k] += X[i,l,m] * B[l,j] * C[m,k]``."""
    d = ["i", "j", "k", "l", "m"]
    return Kernel(
        name="ttmc",
        dims=(Dim("i", I), Dim("j", J), Dim("k", K), Dim("l", L), Dim("m", M)),
        tensors=(
            TensorAccess("X", "in", (I, L, M), _rows(d, {"i": 1}, {"l": 1}, {"m": 1}), (0, 0, 0), bits),
            TensorAccess("B", "in", (L, J), _rows(d, {"l": 1}, {"j": 1}), (0, 0), bits),
            TensorAccess("C", "in", (M, K), _rows(d, {"m": 1}, {"k": 1}), (0, 0), bits),
            TensorAccess("Y", "out", (I, J, K), _rows(d, {"i": 1}, {"j": 1}, {"k": 1}), (0, 0, 0), acc_bits),
        ),
    )


#: the builder of every kernel family of :data:`lego_build.ir.families.FAMILIES`
BUILDERS = {"gemm": gemm, "conv2d": conv2d, "mttkrp": mttkrp, "ttmc": ttmc}
