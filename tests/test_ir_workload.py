"""lego_build.ir.workload: the one classifier of array layers (conv, grouped, depthwise, pointwise, matmul, tensor)."""
from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from lego_build.analysis.from_config import workload_from_config
from lego_build.analysis.importers.common import Collector
from lego_build.analysis.kernels import conv2d, mttkrp
from lego_build.analysis.lowering import lower
from lego_build.analysis.networks import network
from lego_build.analysis.networks.builder import NetBuilder
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
    assert layer_kind(kernel) == "grouped" and conv_op(kernel) == "group_conv"
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


#: (in_ch, out_ch, kh x kw, stride, dilation, groups) -> the kind and the op name
SHAPES = [
    ((16, 32, (3, 3), 1, 1, 1), "conv", "conv2d"),
    ((16, 32, (3, 3), 2, 1, 1), "conv", "conv2d"),  # strided
    ((16, 32, (3, 3), 1, 2, 1), "conv", "conv2d"),  # dilated
    ((16, 32, (1, 7), 1, 1, 1), "conv", "conv2d"),  # a 1x7 window is not pointwise
    ((1, 8, (5, 5), 1, 1, 1), "conv", "conv2d"),  # one input channel, one group: dense
    ((16, 32, (1, 1), 1, 1, 1), "pointwise", "conv2d"),
    ((16, 32, (1, 1), 2, 1, 1), "pointwise", "conv2d"),  # strided 1x1 (a ResNet downsample)
    ((16, 32, (3, 3), 1, 1, 4), "grouped", "group_conv"),
    ((16, 32, (1, 1), 1, 1, 4), "grouped", "group_conv"),  # grouped 1x1 (ShuffleNet)
    ((16, 16, (3, 3), 2, 2, 8), "grouped", "group_conv"),  # two channels per group, strided, dilated
    ((16, 16, (3, 3), 1, 1, 16), "depthwise", "depthwise"),
    ((16, 32, (3, 3), 1, 1, 16), "depthwise", "depthwise"),  # channel multiplier 2
    ((16, 16, (5, 5), 2, 2, 16), "depthwise", "depthwise"),  # strided and dilated
    ((16, 16, (1, 1), 1, 1, 16), "depthwise", "depthwise"),  # a 1x1 per-channel scale
]


@pytest.mark.parametrize("shape,kind,op", SHAPES, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(SHAPES)])
def test_every_producer_names_a_conv_by_the_one_classifier(shape, kind, op):
    """The networks' builder, the model importers' collector and a config workload build the same
    kernel and name it the same way: the op by :func:`conv_op`, the kind by :func:`layer_kind`."""
    in_ch, out_ch, (kh, kw), stride, dilation, groups = shape
    net = NetBuilder("n", 1, 8, (in_ch, 12, 12))
    net.conv("c", out_ch, (kh, kw), stride=stride, groups=groups, dilation=dilation)
    col = Collector("n", 8)
    col.conv("c", 1, in_ch, out_ch, 12, 12, kh, kw, (stride,) * 2, (0,) * 4, (dilation,) * 2, groups)
    wl = SimpleNamespace(kind="conv2d", name="c", batch=1, in_ch=in_ch, out_ch=out_ch, in_h=12, in_w=12, kh=kh,
                         kw=kw, stride=stride, pad=0, dilation=dilation, groups=groups, bits=8)
    layers = [net.layers[0], col.layers[0], workload_from_config(wl).layers[0]]
    assert len({x.kernel for x in layers}) == 1
    assert [(x.op, layer_kind(x.kernel)) for x in layers] == [(op, kind)] * 3
    assert conv_kind(groups, in_ch, kh, kw) == kind and conv_op(layers[0].kernel) == op
