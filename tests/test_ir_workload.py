"""lego_build.ir.workload: the one classifier of array layers (conv, grouped, depthwise, pointwise, matmul, tensor)."""
from __future__ import annotations

from collections import Counter

from lego_build.analysis.from_config import workload_from_config
from lego_build.analysis.kernels import conv2d, mttkrp
from lego_build.analysis.lowering import lower
from lego_build.analysis.networks import network
from lego_build.config.compose import compose
from lego_build.ir.workload import CONV_OPS, LAYER_KINDS, conv_kind, conv_op, layer_kind


def test_kinds_of_real_networks():
    """MobileNetV2: a 3x3 stem, depthwise 3x3 convs (one input channel per group), 1x1 projections,
    the classifier; every layer's op name agrees with its kind."""
    layers = [x for x in network("mobilenetv2", 1, 8) if x.kernel is not None]
    kinds = Counter(layer_kind(x.kernel) for x in layers)
    assert kinds == {"pointwise": 34, "depthwise": 17, "conv": 1, "matmul": 1}
    assert all(x.op == CONV_OPS[layer_kind(x.kernel)] for x in layers if x.kernel.name == "conv2d")
    assert layer_kind(next(x.kernel for x in network("bert", 1, 8) if x.kernel is not None)) == "matmul"
    assert layer_kind(mttkrp(4, 5, 6, 7)) == "tensor"


def test_a_grouped_conv_is_not_depthwise():
    """AlexNet's (Krizhevsky's) conv2: 2 groups of 48 input channels, 5x5."""
    kernel = conv2d(1, 96, 256, 27, 27, 5, 5, 1, 2, 1, 2, 8)
    assert layer_kind(kernel) == "grouped" and conv_op(2, 96) == "group_conv"
    assert layer_kind(conv2d(1, 32, 32, 8, 8, 3, 3, 1, 1, 1, 32, 8)) == "depthwise"  # one channel per group
    assert layer_kind(conv2d(1, 32, 64, 8, 8, 3, 3, 1, 1, 1, 32, 8)) == "depthwise"  # channel multiplier 2
    assert layer_kind(conv2d(1, 32, 64, 8, 8, 1, 1, 1, 0, 1, 4, 8)) == "grouped"  # a grouped 1x1
    assert conv_kind(1, 3, 7, 7) == "conv" and conv_kind(1, 64, 1, 1) == "pointwise"
    assert set(CONV_OPS) <= set(LAYER_KINDS)


def test_a_config_conv_with_groups_is_named_by_the_same_function():
    wl = workload_from_config(compose(["workload=conv2d", "workload.in_ch=8", "workload.out_ch=8",
                                       "workload.groups=2"]).workload)
    (layer,) = wl.layers
    assert layer.op == "group_conv" and layer_kind(layer.kernel) == "grouped"
    wl = workload_from_config(compose(["workload=depthwise"]).workload)
    assert wl.layers[0].op == "depthwise" and layer_kind(wl.layers[0].kernel) == "depthwise"


def test_a_conv_lowered_to_a_gemm_is_a_matmul_to_the_array_only():
    """A conv lowered to a GEMM array is a matmul to the array: the simulation names a layer by
    its kernel as written (lego_build.sim.layers.scope_layers), so the reports say conv."""
    kernel = next(x.kernel for x in network("lenet", 1, 8) if x.kernel is not None)
    assert layer_kind(kernel) == "conv" and layer_kind(lower(kernel, "gemm")) == "matmul"
