"""ResNet-18 and ResNet-50 at 224x224 (ImageNet classifiers).

Source of the shapes: He, Zhang, Ren, Sun, "Deep Residual Learning for Image
Recognition", CVPR 2016, Table 1 (the 18-layer and 50-layer columns), laid out as
torchvision's reference implementation ``torchvision/models/resnet.py``
(``BasicBlock``, ``Bottleneck``, ``_resnet``), whose module names the layers reuse
(``conv1``, ``layer1.0.conv1``, ``layer2.0.downsample.0``, ``fc``).

* Bottlenecks follow torchvision's "ResNet v1.5": the stride-2 of a stage's first
  block sits in the 3x3 conv (``conv2``), not in the first 1x1 as in the paper's
  Caffe model (v1). The 1x1 projection shortcut (``downsample``) carries the
  stride in both. This gives 4,089,184,256 MACs for ResNet-50; the v1 layout
  (stride in ``conv1``) would give 3,857,973,248, since its 3x3 convs then run on
  the already-subsampled map. ResNet-18's BasicBlocks are the same in both.
* Batch norm is recorded after every conv as a ``batchnorm`` PPU op (inference
  folds it into the conv's scale and bias; it is listed so users see it).
* Totals counting convs (incl. the projection shortcuts) + fc, batch 1:
  ResNet-18 1,814,073,344 MACs, ResNet-50 4,089,184,256 MACs.
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer

_IMAGE = (3, 224, 224)


def _stem(net: NetBuilder) -> None:
    net.conv("conv1", 64, 7, stride=2, pad=3)
    net.ppu("bn1", "batchnorm")
    net.ppu("relu", "relu")
    net.pool("maxpool", "maxpool", 3, stride=2, pad=1)


def _head(net: NetBuilder, classes: int = 1000) -> None:
    net.global_pool("avgpool", "avgpool")
    net.fc("fc", classes)
    net.ppu("softmax", "softmax")


def _basic_block(net: NetBuilder, name: str, planes: int, stride: int) -> None:
    """torchvision ``BasicBlock``: 3x3 -> 3x3, identity or 1x1 projection shortcut."""
    x = net.shape
    net.conv(f"{name}.conv1", planes, 3, stride=stride, pad=1)
    net.ppu(f"{name}.bn1", "batchnorm")
    net.ppu(f"{name}.relu1", "relu")
    net.conv(f"{name}.conv2", planes, 3, pad=1)
    net.ppu(f"{name}.bn2", "batchnorm")
    if stride != 1 or x[0] != planes:
        net.conv(f"{name}.downsample.0", planes, 1, stride=stride, shape=x)
        net.ppu(f"{name}.downsample.1", "batchnorm")
    net.add(f"{name}.add")
    net.ppu(f"{name}.relu2", "relu")


def _bottleneck(net: NetBuilder, name: str, planes: int, stride: int, expansion: int = 4) -> None:
    """torchvision ``Bottleneck`` (v1.5): 1x1 -> 3x3 (stride) -> 1x1 (x4), projection shortcut if needed."""
    x = net.shape
    net.conv(f"{name}.conv1", planes, 1)
    net.ppu(f"{name}.bn1", "batchnorm")
    net.ppu(f"{name}.relu1", "relu")
    net.conv(f"{name}.conv2", planes, 3, stride=stride, pad=1)
    net.ppu(f"{name}.bn2", "batchnorm")
    net.ppu(f"{name}.relu2", "relu")
    net.conv(f"{name}.conv3", planes * expansion, 1)
    net.ppu(f"{name}.bn3", "batchnorm")
    if stride != 1 or x[0] != planes * expansion:
        net.conv(f"{name}.downsample.0", planes * expansion, 1, stride=stride, shape=x)
        net.ppu(f"{name}.downsample.1", "batchnorm")
    net.add(f"{name}.add")
    net.ppu(f"{name}.relu3", "relu")


def _resnet(name: str, block, blocks: tuple[int, int, int, int], batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder(name, batch, bits, _IMAGE)
    _stem(net)
    for stage, (planes, n) in enumerate(zip((64, 128, 256, 512), blocks), start=1):
        for i in range(n):
            block(net, f"layer{stage}.{i}", planes, 2 if (i == 0 and stage > 1) else 1)
    _head(net)
    return tuple(net.layers)


def resnet18(batch: int, bits: int) -> tuple[Layer, ...]:
    """ResNet-18 (Table 1, "18-layer"): BasicBlocks [2, 2, 2, 2]."""
    return _resnet("resnet18", _basic_block, (2, 2, 2, 2), batch, bits)


def resnet50(batch: int, bits: int) -> tuple[Layer, ...]:
    """ResNet-50 (Table 1, "50-layer"): Bottlenecks [3, 4, 6, 3], torchvision v1.5 strides."""
    return _resnet("resnet50", _bottleneck, (3, 4, 6, 3), batch, bits)
