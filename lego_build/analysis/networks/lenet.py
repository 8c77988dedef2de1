"""LeNet-5 on a 32x32x1 image.

Source of the shapes: LeCun, Bottou, Bengio, Haffner, "Gradient-Based Learning
Applied to Document Recognition", Proc. IEEE 86(11), 1998, Section II.B and
Figure 2: C1 6@28x28 (5x5), S2 6@14x14, C3 16@10x10 (5x5), S4 16@5x5,
C5 120 (5x5 conv to 1x1), F6 84, output 10. Layer names are the paper's.

Deviations, as in most re-implementations:

* C3 is fully connected to S2's six maps (6x16 kernels, 240,000 MACs); the paper's
  Table I connects only 60 of the 96 map pairs (150,000 MACs), which no single
  grouped conv expresses.
* The subsampling layers (average of 2x2, trainable scale and bias) are ``avgpool``
  PPU ops followed by the squashing function; the paper's scaled tanh
  (``A tanh(S a)``) is recorded as ``tanh``.
* The output layer's Euclidean RBF units are modelled as an 84->10 fully connected
  layer (the same 840 multiply-accumulates) followed by ``softmax``.

Total MACs (batch 1): 416,520.
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer


def lenet(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("lenet", batch, bits, (1, 32, 32))
    net.conv("c1", 6, 5)                  # 6@28x28
    net.ppu("c1.tanh", "tanh")
    net.pool("s2", "avgpool", 2)          # 6@14x14
    net.ppu("s2.tanh", "tanh")
    net.conv("c3", 16, 5)                 # 16@10x10
    net.ppu("c3.tanh", "tanh")
    net.pool("s4", "avgpool", 2)          # 16@5x5
    net.ppu("s4.tanh", "tanh")
    net.conv("c5", 120, 5)                # 120@1x1
    net.ppu("c5.tanh", "tanh")
    net.fc("f6", 84)
    net.ppu("f6.tanh", "tanh")
    net.fc("output", 10)
    net.ppu("softmax", "softmax")
    return tuple(net.layers)
