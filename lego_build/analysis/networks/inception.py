"""Inception-v3 at 299x299.

Source of the shapes: Szegedy, Vanhoucke, Ioffe, Shlens, Wojna, "Rethinking the
Inception Architecture for Computer Vision", CVPR 2016, Table 1 and Figures 5-7
(the 35x35, 17x17 and 8x8 modules; n = 7 for the factorized 1x7 / 7x1 convs),
with the exact channel counts of torchvision's reference implementation
``torchvision/models/inception.py`` (``Inception3``, ``InceptionA``-``InceptionE``,
``BasicConv2d``), whose module names the layers reuse (``Conv2d_1a_3x3``,
``Mixed_6b.branch7x7_2``, ``fc``).

* Every ``BasicConv2d`` is conv (no bias) -> ``batchnorm`` -> ``relu``.
* The factorized convs keep torchvision's asymmetric padding: 1x7 pads (0, 3),
  7x1 pads (3, 0), 1x3 pads (0, 1), 3x1 pads (1, 0) (height, width), i.e. the
  conv2d kernel's (top, left, bottom, right) = (0, 3, 0, 3) etc.
* Branch pools: 3x3 stride-1 pad-1 average pools in InceptionA/C/E, 3x3 stride-2
  max pools in the grid reductions (InceptionB/D).
* Left out: the auxiliary classifier (``AuxLogits``, a training-time head) and
  torchvision's ``transform_input`` re-normalisation of the image; dropout is the
  identity at inference.

Total MACs (convs + fc, batch 1): 5,713,216,096, torchvision's "5.71 GFLOPS".
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder, Shape
from lego_build.ir.workload import Layer


def _basic(net: NetBuilder, name: str, out_ch: int, k: int | tuple[int, int], stride: int = 1,
           pad: int | tuple[int, int] = 0, shape: Shape | None = None) -> Shape:
    """torchvision ``BasicConv2d``; ``pad`` is one int or torchvision's (height, width) padding."""
    ph, pw = (pad, pad) if isinstance(pad, int) else pad
    out = net.conv(f"{name}.conv", out_ch, k, stride=stride, pad=(ph, pw, ph, pw), shape=shape)
    net.ppu(f"{name}.bn", "batchnorm")
    net.ppu(f"{name}.relu", "relu")
    return out


def _branch_pool(net: NetBuilder, name: str, x: Shape, op: str, stride: int, pad: int) -> Shape:
    net.shape = x
    return net.pool(f"{name}.pool", op, 3, stride=stride, pad=pad)


def _inception_a(net: NetBuilder, name: str, pool_features: int) -> Shape:
    x = net.shape
    b1 = _basic(net, f"{name}.branch1x1", 64, 1, shape=x)
    _basic(net, f"{name}.branch5x5_1", 48, 1, shape=x)
    b5 = _basic(net, f"{name}.branch5x5_2", 64, 5, pad=2)
    _basic(net, f"{name}.branch3x3dbl_1", 64, 1, shape=x)
    _basic(net, f"{name}.branch3x3dbl_2", 96, 3, pad=1)
    b3 = _basic(net, f"{name}.branch3x3dbl_3", 96, 3, pad=1)
    _branch_pool(net, f"{name}.branch_pool", x, "avgpool", 1, 1)
    bp = _basic(net, f"{name}.branch_pool", pool_features, 1)
    return net.concat_channels(b1, b5, b3, bp)


def _inception_b(net: NetBuilder, name: str) -> Shape:
    x = net.shape
    b3 = _basic(net, f"{name}.branch3x3", 384, 3, stride=2, shape=x)
    _basic(net, f"{name}.branch3x3dbl_1", 64, 1, shape=x)
    _basic(net, f"{name}.branch3x3dbl_2", 96, 3, pad=1)
    bd = _basic(net, f"{name}.branch3x3dbl_3", 96, 3, stride=2)
    bp = _branch_pool(net, f"{name}.branch_pool", x, "maxpool", 2, 0)
    return net.concat_channels(b3, bd, bp)


def _inception_c(net: NetBuilder, name: str, c7: int) -> Shape:
    x = net.shape
    b1 = _basic(net, f"{name}.branch1x1", 192, 1, shape=x)
    _basic(net, f"{name}.branch7x7_1", c7, 1, shape=x)
    _basic(net, f"{name}.branch7x7_2", c7, (1, 7), pad=(0, 3))
    b7 = _basic(net, f"{name}.branch7x7_3", 192, (7, 1), pad=(3, 0))
    _basic(net, f"{name}.branch7x7dbl_1", c7, 1, shape=x)
    _basic(net, f"{name}.branch7x7dbl_2", c7, (7, 1), pad=(3, 0))
    _basic(net, f"{name}.branch7x7dbl_3", c7, (1, 7), pad=(0, 3))
    _basic(net, f"{name}.branch7x7dbl_4", c7, (7, 1), pad=(3, 0))
    bd = _basic(net, f"{name}.branch7x7dbl_5", 192, (1, 7), pad=(0, 3))
    _branch_pool(net, f"{name}.branch_pool", x, "avgpool", 1, 1)
    bp = _basic(net, f"{name}.branch_pool", 192, 1)
    return net.concat_channels(b1, b7, bd, bp)


def _inception_d(net: NetBuilder, name: str) -> Shape:
    x = net.shape
    _basic(net, f"{name}.branch3x3_1", 192, 1, shape=x)
    b3 = _basic(net, f"{name}.branch3x3_2", 320, 3, stride=2)
    _basic(net, f"{name}.branch7x7x3_1", 192, 1, shape=x)
    _basic(net, f"{name}.branch7x7x3_2", 192, (1, 7), pad=(0, 3))
    _basic(net, f"{name}.branch7x7x3_3", 192, (7, 1), pad=(3, 0))
    b7 = _basic(net, f"{name}.branch7x7x3_4", 192, 3, stride=2)
    bp = _branch_pool(net, f"{name}.branch_pool", x, "maxpool", 2, 0)
    return net.concat_channels(b3, b7, bp)


def _inception_e(net: NetBuilder, name: str) -> Shape:
    x = net.shape
    b1 = _basic(net, f"{name}.branch1x1", 320, 1, shape=x)
    s = _basic(net, f"{name}.branch3x3_1", 384, 1, shape=x)
    a = _basic(net, f"{name}.branch3x3_2a", 384, (1, 3), pad=(0, 1), shape=s)
    b = _basic(net, f"{name}.branch3x3_2b", 384, (3, 1), pad=(1, 0), shape=s)
    _basic(net, f"{name}.branch3x3dbl_1", 448, 1, shape=x)
    s = _basic(net, f"{name}.branch3x3dbl_2", 384, 3, pad=1)
    c = _basic(net, f"{name}.branch3x3dbl_3a", 384, (1, 3), pad=(0, 1), shape=s)
    d = _basic(net, f"{name}.branch3x3dbl_3b", 384, (3, 1), pad=(1, 0), shape=s)
    _branch_pool(net, f"{name}.branch_pool", x, "avgpool", 1, 1)
    bp = _basic(net, f"{name}.branch_pool", 192, 1)
    return net.concat_channels(b1, a, b, c, d, bp)


def inceptionv3(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("inceptionv3", batch, bits, (3, 299, 299))
    _basic(net, "Conv2d_1a_3x3", 32, 3, stride=2)        # 149x149
    _basic(net, "Conv2d_2a_3x3", 32, 3)                  # 147x147
    _basic(net, "Conv2d_2b_3x3", 64, 3, pad=1)
    net.pool("maxpool1", "maxpool", 3, stride=2)         # 73x73
    _basic(net, "Conv2d_3b_1x1", 80, 1)
    _basic(net, "Conv2d_4a_3x3", 192, 3)                 # 71x71
    net.pool("maxpool2", "maxpool", 3, stride=2)         # 35x35
    _inception_a(net, "Mixed_5b", 32)                    # 256 channels
    _inception_a(net, "Mixed_5c", 64)                    # 288
    _inception_a(net, "Mixed_5d", 64)                    # 288
    _inception_b(net, "Mixed_6a")                        # 768 @ 17x17
    _inception_c(net, "Mixed_6b", 128)
    _inception_c(net, "Mixed_6c", 160)
    _inception_c(net, "Mixed_6d", 160)
    _inception_c(net, "Mixed_6e", 192)
    _inception_d(net, "Mixed_7a")                        # 1280 @ 8x8
    _inception_e(net, "Mixed_7b")                        # 2048
    _inception_e(net, "Mixed_7c")                        # 2048
    net.global_pool("avgpool", "avgpool")
    net.fc("fc", 1000)
    net.ppu("softmax", "softmax")
    return tuple(net.layers)
