"""A small network builder that tracks activation shapes, so presets read like the papers' tables.

    net = NetBuilder("resnet18", batch=1, bits=8, shape=(3, 224, 224))
    net.conv("conv1", 64, 7, stride=2, pad=3); net.ppu("relu1", "relu")
    net.pool("pool1", "maxpool", 3, stride=2, pad=1)
    ...
    layers = net.layers

Array layers get the conv2d / gemm kernels of :mod:`lego_build.analysis.kernels`;
PPU layers record the op and the number of elements it touches (its output size,
or its input size for reductions such as pooling and softmax).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from lego_build.analysis.kernels import conv2d, conv_out, gemm
from lego_build.ir.workload import Layer, conv_op

Shape = tuple[int, int, int]  # (channels, height, width) of one image


@dataclass
class NetBuilder:
    name: str
    batch: int
    bits: int
    shape: Shape
    layers: list[Layer] = field(default_factory=list)

    # ----------------------------------------------------------- array layers
    def conv(self, name: str, out_ch: int, k: int | tuple[int, int], stride: int = 1,
             pad: int | tuple[int, int, int, int] = 0, groups: int = 1, dilation: int = 1,
             shape: Shape | None = None) -> Shape:
        """Convolution on ``shape`` (default: the current shape); returns and sets the output shape."""
        c, h, w = shape or self.shape
        kh, kw = (k, k) if isinstance(k, int) else k
        kernel = conv2d(self.batch, c, out_ch, h, w, kh, kw, stride, pad, dilation, groups, self.bits)
        self.layers.append(Layer(name, conv_op(kernel), kernel))
        oh = next(d.bound for d in kernel.dims if d.name == "oh")
        ow = next(d.bound for d in kernel.dims if d.name == "ow")
        self.shape = (out_ch, oh, ow)
        return self.shape

    def fc(self, name: str, out_features: int, in_features: int | None = None) -> Shape:
        """Fully connected layer over the flattened current shape: a GEMM with M = batch."""
        k = in_features if in_features is not None else self.shape[0] * self.shape[1] * self.shape[2]
        self.layers.append(Layer(name, "fc", gemm(self.batch, out_features, k, bits=self.bits)))
        self.shape = (out_features, 1, 1)
        return self.shape

    def matmul(self, name: str, M: int, N: int, K: int, batch: int = 1, count: int = 1, op: str = "matmul") -> None:
        """A (batched) matmul ``[batch, M, K] x [batch, K, N]``, repeated ``count`` times."""
        self.layers.append(Layer(name, op, gemm(M, N, K, batch=batch, bits=self.bits), count=count))

    # ----------------------------------------------------------- post-processing
    def ppu(self, name: str, op: str, elements: int | None = None, count: int = 1) -> None:
        """An element-wise or normalising PPU op (default: over the current activation)."""
        n = elements if elements is not None else self.batch * self.shape[0] * self.shape[1] * self.shape[2]
        self.layers.append(Layer(name, op, None, n, count))

    def pool(self, name: str, op: str, k: int, stride: int | None = None, pad: int = 0,
             ceil_mode: bool = False) -> Shape:
        """Max/avg pooling on the PPU; elements = input elements read."""
        c, h, w = self.shape
        s = stride or k
        if ceil_mode:
            oh, ow = -(-(h + 2 * pad - k) // s) + 1, -(-(w + 2 * pad - k) // s) + 1
        else:
            oh, ow = conv_out(h, k, s, pad, pad, 1), conv_out(w, k, s, pad, pad, 1)
        self.ppu(name, op, self.batch * c * h * w)
        self.shape = (c, oh, ow)
        return self.shape

    def global_pool(self, name: str, op: str = "avgpool") -> Shape:
        c, h, w = self.shape
        self.ppu(name, op, self.batch * c * h * w)
        self.shape = (c, 1, 1)
        return self.shape

    def squeeze_excite(self, name: str, squeeze: int, act: str = "silu",
                       parts: tuple[str, str, str] = ("pool", "act", "gate")) -> None:
        """Squeeze-and-excitation (Hu et al., CVPR 2018) on the current map: global average pool,
        two fully connected layers (``squeeze`` wide, ``act`` between them, a sigmoid gate) and the
        channel-wise scale of the map; ``parts`` names the pool, activation and gate layers."""
        shape = self.shape
        self.global_pool(f"{name}.{parts[0]}", "avgpool")
        self.fc(f"{name}.fc1", squeeze)
        self.ppu(f"{name}.{parts[1]}", act)
        self.fc(f"{name}.fc2", shape[0])
        self.ppu(f"{name}.{parts[2]}", "sigmoid")
        self.shape = shape
        self.ppu(f"{name}.scale", "mul")

    def add(self, name: str) -> None:
        """Residual add of two tensors of the current shape."""
        self.ppu(name, "add")

    def concat_channels(self, *shapes: Shape) -> Shape:
        """Channel concatenation (no compute): the new current shape."""
        c = sum(s[0] for s in shapes)
        self.shape = (c, shapes[0][1], shapes[0][2])
        return self.shape
