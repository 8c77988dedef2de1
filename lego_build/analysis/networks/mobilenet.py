"""MobileNetV2 (width multiplier 1.0, 224x224).

Source of the shapes: Sandler, Howard, Zhu, Zhmoginov, Chen, "MobileNetV2: Inverted
Residuals and Linear Bottlenecks", CVPR 2018, Table 2 (the ``t, c, n, s`` rows) and
Table 1 (the bottleneck: 1x1 expand + ReLU6, 3x3 depthwise + ReLU6, 1x1 linear
projection); layer names follow torchvision's ``torchvision/models/mobilenetv2.py``
(``features.<i>.conv.<j>``, ``classifier.1``).

* Depthwise convs are ``conv2d`` kernels with ``groups == channels`` (op
  ``depthwise``: dims ``g = C``, ``oc = ic = 1``).
* The residual add joins a block's input and output when stride is 1 and the
  channel counts match (Table 1 / Figure 4 of the paper).
* Batch norm after every conv is recorded as a ``batchnorm`` PPU op.
* Total MACs (convs + classifier, batch 1): 300,774,272, the paper's "300M"
  (Table 4) and the commonly quoted exact figure.
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer

#: Table 2: expansion t, output channels c, repeats n, first stride s
INVERTED_RESIDUAL_SETTING: tuple[tuple[int, int, int, int], ...] = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def _conv_bn_relu6(net: NetBuilder, name: str, out_ch: int, k: int, stride: int = 1, groups: int = 1) -> None:
    """torchvision ``Conv2dNormActivation``: conv, BN, ReLU6 as ``<name>.0/.1/.2``."""
    net.conv(f"{name}.0", out_ch, k, stride=stride, pad=(k - 1) // 2, groups=groups)
    net.ppu(f"{name}.1", "batchnorm")
    net.ppu(f"{name}.2", "relu6")


def _inverted_residual(net: NetBuilder, name: str, out_ch: int, stride: int, t: int) -> None:
    in_ch = net.shape[0]
    hidden = in_ch * t
    j = 0
    if t != 1:
        _conv_bn_relu6(net, f"{name}.conv.{j}", hidden, 1)
        j += 1
    _conv_bn_relu6(net, f"{name}.conv.{j}", hidden, 3, stride=stride, groups=hidden)  # depthwise
    net.conv(f"{name}.conv.{j + 1}", out_ch, 1)  # linear bottleneck: no activation
    net.ppu(f"{name}.conv.{j + 2}", "batchnorm")
    if stride == 1 and in_ch == out_ch:
        net.add(f"{name}.add")


def mobilenetv2(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("mobilenetv2", batch, bits, (3, 224, 224))
    _conv_bn_relu6(net, "features.0", 32, 3, stride=2)
    i = 1
    for t, c, n, s in INVERTED_RESIDUAL_SETTING:
        for r in range(n):
            _inverted_residual(net, f"features.{i}", c, s if r == 0 else 1, t)
            i += 1
    _conv_bn_relu6(net, f"features.{i}", 1280, 1)
    net.global_pool("avgpool", "avgpool")
    net.fc("classifier.1", 1000)  # classifier.0 is dropout: identity at inference
    net.ppu("softmax", "softmax")
    return tuple(net.layers)
