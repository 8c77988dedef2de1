"""VGG-16 (configuration D) at 224x224.

Source of the shapes: Simonyan, Zisserman, "Very Deep Convolutional Networks for
Large-Scale Image Recognition", ICLR 2015, Table 1 column D (13 3x3 convs with
padding 1, five 2x2 max-pools, FC-4096, FC-4096, FC-1000, soft-max); layer names
are torchvision's ``torchvision/models/vgg.py`` (``cfgs["D"]``, no batch norm):
``features.<i>`` and ``classifier.0/3/6``.

Total MACs (convs + fc, batch 1): 15,470,264,320 (15.47 G; the paper reports
parameter counts, Table 2, not MACs). torchvision's ``AdaptiveAvgPool2d((7, 7))`` is the
identity at 224 and dropout is the identity at inference; both are omitted.
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer

#: Table 1, column D: output channels of the 3x3 convs, "M" = 2x2 max-pool
CONFIG_D: tuple[int | str, ...] = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M",
                                   512, 512, 512, "M", 512, 512, 512, "M")


def vgg16(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("vgg16", batch, bits, (3, 224, 224))
    i = 0
    for v in CONFIG_D:
        if v == "M":
            net.pool(f"features.{i}", "maxpool", 2, stride=2)
            i += 1
        else:
            net.conv(f"features.{i}", int(v), 3, pad=1)
            net.ppu(f"features.{i + 1}", "relu")
            i += 2
    net.fc("classifier.0", 4096)                         # 512*7*7 = 25088 inputs
    net.ppu("classifier.1", "relu")
    net.fc("classifier.3", 4096)
    net.ppu("classifier.4", "relu")
    net.fc("classifier.6", 1000)
    net.ppu("softmax", "softmax")
    return tuple(net.layers)
