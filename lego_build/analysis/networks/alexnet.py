"""AlexNet, as torchvision defines it, at 224x224.

Source of the shapes: torchvision's ``torchvision/models/alexnet.py`` (``AlexNet``),
the single-tower variant of Krizhevsky, Sutskever, Hinton, "ImageNet Classification
with Deep Convolutional Neural Networks", NeurIPS 2012 (Section 3.5, Figure 2) via
Krizhevsky's "One weird trick for parallelizing convolutional neural networks"
(2014). Layer names are torchvision's module paths (``features.0``, ``classifier.1``).

Differences from the 2012 paper, all torchvision's: 224x224 input (the paper's 224
needs a 227 image for its 55x55 conv1 output; torchvision pads conv1 by 2 instead),
64/192/384/256/256 conv channels instead of 96/256/384/384/256, no grouped
(two-GPU) convs and no local response normalisation. The ``AdaptiveAvgPool2d((6, 6))``
is the identity at 224 and is omitted; dropout is the identity at inference.

Total MACs (convs + fc, batch 1): 714,188,480 (torchvision's "0.71 GFLOPS").
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer


def alexnet(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("alexnet", batch, bits, (3, 224, 224))
    net.conv("features.0", 64, 11, stride=4, pad=2)      # 55x55
    net.ppu("features.1", "relu")
    net.pool("features.2", "maxpool", 3, stride=2)       # 27x27
    net.conv("features.3", 192, 5, pad=2)
    net.ppu("features.4", "relu")
    net.pool("features.5", "maxpool", 3, stride=2)       # 13x13
    net.conv("features.6", 384, 3, pad=1)
    net.ppu("features.7", "relu")
    net.conv("features.8", 256, 3, pad=1)
    net.ppu("features.9", "relu")
    net.conv("features.10", 256, 3, pad=1)
    net.ppu("features.11", "relu")
    net.pool("features.12", "maxpool", 3, stride=2)      # 6x6
    net.fc("classifier.1", 4096)                         # 256*6*6 = 9216 inputs
    net.ppu("classifier.2", "relu")
    net.fc("classifier.4", 4096)
    net.ppu("classifier.5", "relu")
    net.fc("classifier.6", 1000)
    net.ppu("softmax", "softmax")
    return tuple(net.layers)
