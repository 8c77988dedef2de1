"""Present a layer in the kernel family an array's dataflow is written for.

* conv2d -> gemm (im2col): ``b = g``, ``M = n*oh*ow``, ``N = oc``, ``K = ic*kh*kw``,
  what a GEMM engine (TPU, Gemmini) runs after the host lays the input out as
  columns; the MAC count is unchanged.
* gemm -> conv2d: a grouped 1x1 convolution with ``g = b``, ``oh = M``, ``oc = N``,
  ``ic = K``, as Timeloop and ZigZag run fully connected layers on conv arrays.

Other pairs have no lowering (``None``): the layer cannot run on that array.
"""
from __future__ import annotations

from lego_build.analysis.kernels import conv2d, gemm
from lego_build.ir.families import FAMILIES
from lego_build.ir.workload import Kernel

#: the dims of every family, in IR order (they name ``arch.spatial``)
FAMILY_DIMS: dict[str, tuple[str, ...]] = {name: f.dims for name, f in FAMILIES.items()}
#: the dims each family accumulates over (the output does not depend on them)
FAMILY_REDUCTION: dict[str, tuple[str, ...]] = {name: f.reduction for name, f in FAMILIES.items()}


def lower(kernel: Kernel, family: str) -> Kernel | None:
    if kernel.name == family:
        return kernel
    b = {d.name: d.bound for d in kernel.dims}
    bits = kernel.inputs[0].bits
    acc = kernel.output.bits
    if kernel.name == "conv2d" and family == "gemm":
        return gemm(b["n"] * b["oh"] * b["ow"], b["oc"], b["ic"] * b["kh"] * b["kw"], b["g"], bits, acc)
    if kernel.name == "gemm" and family == "conv2d":
        return conv2d(1, b["b"] * b["k"], b["b"] * b["n"], b["m"], 1, 1, 1, groups=b["b"], bits=bits, acc_bits=acc)
    return None


def canonical(kernel: Kernel) -> Kernel:
    """The family's unit-stride, undilated, unpadded form with the same loop bounds.

    The array's links are planned for it: a sliding window with stride 1 is the
    reuse a conv array is built to exploit (Eyeriss's diagonals, ShiDianNao's
    shifts); layers whose stride breaks a link are refused per layer by the mapper.
    """
    if kernel.name != "conv2d":
        return kernel
    b = {d.name: d.bound for d in kernel.dims}
    bits, acc = kernel.inputs[0].bits, kernel.output.bits
    return conv2d(b["n"], b["g"] * b["ic"], b["g"] * b["oc"], b["oh"] + b["kh"] - 1, b["ow"] + b["kw"] - 1,
                  b["kh"], b["kw"], 1, 0, 1, b["g"], bits, acc)


def strided(kernel: Kernel, stride: int) -> Kernel:
    """The canonical ``kernel`` with ``stride`` on both window axes (same loop bounds): what a
    dataflow planned for strided layers derives its links from (``arch.dataflows.*.stride``)."""
    if stride == 1 or kernel.name != "conv2d":
        return kernel
    b = {d.name: d.bound for d in kernel.dims}
    bits, acc = kernel.inputs[0].bits, kernel.output.bits
    return conv2d(b["n"], b["g"] * b["ic"], b["g"] * b["oc"], (b["oh"] - 1) * stride + b["kh"],
                  (b["ow"] - 1) * stride + b["kw"], b["kh"], b["kw"], stride, 0, 1, b["g"], bits, acc)


def reference_kernel(kernels, family: str) -> Kernel | None:
    """The kernel the array is generated from: the first layer that lowers to ``family``, canonical.

    Every layer of a family shares the dims and the shape of the index maps, so the
    interconnections found for it serve all layers whose reuse allows the same links
    (checked per layer by the mapper).
    """
    for kernel in kernels:
        if kernel is not None and (lowered := lower(kernel, family)) is not None:
            return canonical(lowered)
    return None
