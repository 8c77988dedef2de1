"""EfficientNetV2-S at its evaluation size, 384x384.

Source of the shapes: Tan and Le, "EfficientNetV2: Smaller Models and Faster Training",
ICML 2021, Table 4 (the stages: operator, stride, channels, layers) and Figure 2 (MBConv
and Fused-MBConv); block details and layer names follow torchvision's
``torchvision/models/efficientnet.py`` (``features.<stage>.<block>.block.<j>``):

* Fused-MBConv: a 3x3 conv expanding by ``e`` (with the stage's stride), then a 1x1
  projection; with ``e = 1`` the 3x3 conv alone maps to the output channels.
* MBConv: 1x1 expansion, 3x3 depthwise (the stride), squeeze-and-excitation (global average
  pool, 1x1 conv to ``in / 4`` channels of the block's input, SiLU, 1x1 conv back, sigmoid,
  and the channel-wise product), 1x1 projection.
* Batch norm after every conv (``batchnorm``), SiLU after all but the projections; the
  residual add when stride is 1 and the channels match. The SE's 1x1 convs act on a
  1x1 map, so they are fully connected layers (GEMMs with M = batch).
* Total MACs (convs + SE + classifier, batch 1): 8,365,617,152 at 384x384, torchvision's
  8.37 "GFLOPS" (its figure counts multiply-accumulates); the paper's 8.8B FLOPs.
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer

#: Table 4: (fused, expansion, stride, output channels, layers)
STAGES: tuple[tuple[bool, int, int, int, int], ...] = (
    (True, 1, 1, 24, 2),
    (True, 4, 2, 48, 4),
    (True, 4, 2, 64, 4),
    (False, 4, 2, 128, 6),
    (False, 6, 1, 160, 9),
    (False, 6, 2, 256, 15),
)


def _conv_bn(net: NetBuilder, name: str, out_ch: int, k: int, stride: int = 1, groups: int = 1,
             act: bool = True) -> None:
    """torchvision ``Conv2dNormActivation``: conv, BN, SiLU as ``<name>.0/.1/.2``."""
    net.conv(f"{name}.0", out_ch, k, stride=stride, pad=(k - 1) // 2, groups=groups)
    net.ppu(f"{name}.1", "batchnorm")
    if act:
        net.ppu(f"{name}.2", "silu")


def _block(net: NetBuilder, name: str, fused: bool, e: int, stride: int, out_ch: int) -> None:
    in_ch = net.shape[0]
    hidden = in_ch * e
    if fused:
        if e == 1:
            _conv_bn(net, f"{name}.block.0", out_ch, 3, stride)
        else:
            _conv_bn(net, f"{name}.block.0", hidden, 3, stride)
            _conv_bn(net, f"{name}.block.1", out_ch, 1, act=False)
    else:
        _conv_bn(net, f"{name}.block.0", hidden, 1)
        _conv_bn(net, f"{name}.block.1", hidden, 3, stride, groups=hidden)  # depthwise
        net.squeeze_excite(f"{name}.block.2", max(1, in_ch // 4),
                           parts=("avgpool", "activation", "scale_activation"))  # torchvision names
        _conv_bn(net, f"{name}.block.3", out_ch, 1, act=False)
    if stride == 1 and in_ch == out_ch:
        net.add(f"{name}.add")


def efficientnetv2_s(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("efficientnetv2", batch, bits, (3, 384, 384))
    _conv_bn(net, "features.0", 24, 3, stride=2)
    for s, (fused, e, stride, c, n) in enumerate(STAGES, start=1):
        for b in range(n):
            _block(net, f"features.{s}.{b}", fused, e, stride if b == 0 else 1, c)
    _conv_bn(net, "features.7", 1280, 1)
    net.global_pool("avgpool", "avgpool")
    net.fc("classifier.1", 1000)  # classifier.0 is dropout: identity at inference
    net.ppu("softmax", "softmax")
    return tuple(net.layers)
