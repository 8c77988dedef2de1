"""SqueezeNet 1.0 at 224x224.

Source of the shapes: Iandola, Han, Moskewicz, Ashraf, Dally, Keutzer, "SqueezeNet:
AlexNet-level accuracy with 50x fewer parameters and <0.5MB model size", arXiv
1602.07360 (2016), Table 1 (conv1 96 7x7/2; fire2-fire9 with their s1x1, e1x1, e3x3
widths; max-pools after conv1, fire4, fire8; conv10 1x1 to 1000; global average
pool), laid out as torchvision's ``torchvision/models/squeezenet.py``
(``squeezenet1_0``; names ``features.<i>.squeeze``, ``classifier.1``).

* At 224 with no padding torchvision's conv1 gives 109x109 (Table 1 lists 111x111,
  i.e. a 227 input as in the Caffe model); the max-pools use ``ceil_mode=True``
  (54, 27, 13).
* Total MACs (convs, batch 1): 818,924,576 (torchvision's "0.82 GFLOPS"); at 227,
  which gives Table 1's 111x111 conv1 output, it would be 832,667,936.
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer

#: Table 1: (layer, s1x1, e1x1, e3x3)
FIRE: dict[int, tuple[int, int, int]] = {
    2: (16, 64, 64), 3: (16, 64, 64), 4: (32, 128, 128), 5: (32, 128, 128),
    6: (48, 192, 192), 7: (48, 192, 192), 8: (64, 256, 256), 9: (64, 256, 256),
}


def _fire(net: NetBuilder, name: str, squeeze: int, e1: int, e3: int) -> None:
    net.conv(f"{name}.squeeze", squeeze, 1)
    net.ppu(f"{name}.squeeze_activation", "relu")
    s = net.shape
    a = net.conv(f"{name}.expand1x1", e1, 1, shape=s)
    net.ppu(f"{name}.expand1x1_activation", "relu")
    b = net.conv(f"{name}.expand3x3", e3, 3, pad=1, shape=s)
    net.ppu(f"{name}.expand3x3_activation", "relu")
    net.concat_channels(a, b)


def squeezenet(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("squeezenet", batch, bits, (3, 224, 224))
    net.conv("features.0", 96, 7, stride=2)              # 109x109
    net.ppu("features.1", "relu")
    net.pool("features.2", "maxpool", 3, stride=2, ceil_mode=True)
    i = 3
    for fire in range(2, 10):
        _fire(net, f"features.{i}", *FIRE[fire])
        i += 1
        if fire in (4, 8):
            net.pool(f"features.{i}", "maxpool", 3, stride=2, ceil_mode=True)
            i += 1
    net.conv("classifier.1", 1000, 1)                    # classifier.0 is dropout
    net.ppu("classifier.2", "relu")
    net.global_pool("classifier.3", "avgpool")
    net.ppu("softmax", "softmax")
    return tuple(net.layers)
