"""Workload IR: an iteration domain and per-tensor affine data mappings.

Seed 004 §3.1, eq. 3.1: a tensor element accessed by iteration ``i`` is
``d = M_{I->D} i + b``. A kernel is data (dims + accesses), not a subclass per operator.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

Matrix = tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class Dim:
    """One iteration dimension ``0 <= i < bound``."""

    name: str
    bound: int


@dataclass(frozen=True, slots=True)
class TensorAccess:
    """A tensor and its data mapping ``d = matrix @ i + bias`` (eq. 3.1).

    ``role`` is ``"in"`` or ``"out"``; ``shape`` is the tensor's extent per data dim.
    Indices outside ``[0, shape)`` are padding and read as zero.
    """

    name: str
    role: str
    shape: tuple[int, ...]
    matrix: Matrix
    bias: tuple[int, ...]
    bits: int

    def index(self, it: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(sum(m * i for m, i in zip(row, it)) + b for row, b in zip(self.matrix, self.bias))

    def depends_on(self, dim: int) -> bool:
        return any(row[dim] != 0 for row in self.matrix)

    @property
    def size(self) -> int:
        return prod(self.shape)


@dataclass(frozen=True, slots=True)
class Kernel:
    """A perfectly nested loop whose body is ``out += prod(inputs)`` (MAC for two inputs).

    ``name`` is the kernel family (``gemm``, ``conv2d``, ``mttkrp``, ``ttmc``): every
    kernel of one family has the same dims and the same shape of index maps, so one
    generated array runs all of them with different run-time bounds.
    """

    name: str
    dims: tuple[Dim, ...]
    tensors: tuple[TensorAccess, ...]

    def dim_index(self, name: str) -> int:
        for idx, dim in enumerate(self.dims):
            if dim.name == name:
                return idx
        raise KeyError(f"kernel {self.name} has no dim {name!r} (dims: {', '.join(d.name for d in self.dims)})")

    def tensor(self, name: str) -> TensorAccess:
        for tensor in self.tensors:
            if tensor.name == name:
                return tensor
        raise KeyError(name)

    @property
    def inputs(self) -> tuple[TensorAccess, ...]:
        return tuple(t for t in self.tensors if t.role == "in")

    @property
    def output(self) -> TensorAccess:
        (out,) = (t for t in self.tensors if t.role == "out")
        return out

    @property
    def reduction_dims(self) -> tuple[int, ...]:
        """Dims the output does not depend on: the MAC accumulates over them."""
        return tuple(d for d in range(len(self.dims)) if not self.output.depends_on(d))

    @property
    def macs(self) -> int:
        return prod(d.bound for d in self.dims)


#: what kind of array layer a kernel is, one vocabulary for the simulation's tiles and rows and the
#: reports: a dense k x k convolution, a grouped one (groups < input channels), a depthwise one (one
#: input channel per group), a 1x1 one, a matrix product (fc, attention), a tensor kernel
LAYER_KINDS: tuple[str, ...] = ("conv", "grouped", "depthwise", "pointwise", "matmul", "tensor")
#: the analysis op name of each convolution kind
CONV_OPS = {"conv": "conv2d", "pointwise": "conv2d", "grouped": "group_conv", "depthwise": "depthwise"}


def conv_kind(groups: int, in_channels: int, kh: int, kw: int) -> str:
    """The :data:`LAYER_KINDS` entry of a convolution: ``depthwise`` when every group has one input
    channel (``groups == in_channels > 1``), ``grouped`` for other ``groups > 1``, ``pointwise``
    for a dense 1x1 window, else ``conv``."""
    if groups > 1:
        return "depthwise" if groups == in_channels else "grouped"
    return "pointwise" if kh == kw == 1 else "conv"


def layer_kind(kernel: Kernel) -> str:
    """The :data:`LAYER_KINDS` entry of an array layer's kernel (a ``conv2d`` kernel's ``ic`` is the
    input channels per group)."""
    if kernel.name == "conv2d":
        b = {d.name: d.bound for d in kernel.dims}
        return conv_kind(b["g"], b["g"] * b["ic"], b["kh"], b["kw"])
    return "matmul" if kernel.name == "gemm" else "tensor"


def conv_op(kernel: Kernel) -> str:
    """The analysis op name of a ``conv2d`` kernel (:data:`CONV_OPS` of its :func:`layer_kind`): the
    networks, the model importers and config workloads name every convolution by it."""
    return CONV_OPS[layer_kind(kernel)]


@dataclass(frozen=True, slots=True)
class Layer:
    """One operator of a workload.

    Array layers carry the MAC loop nest in ``kernel``; post-processing layers
    (``kernel is None``) carry the PPU op and the number of elements it touches.
    ``count`` folds identical repeats (the blocks of a transformer).
    """

    name: str
    op: str
    kernel: Kernel | None = None
    elements: int = 0
    count: int = 1

    @property
    def on_array(self) -> bool:
        return self.kernel is not None


@dataclass(frozen=True, slots=True)
class Unmapped:
    """An operator that neither the array nor a PPU executes; listed, never dropped."""

    name: str
    op: str
    reason: str


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    layers: tuple[Layer, ...]
    unmapped: tuple[Unmapped, ...] = ()
    source: str = "preset"
    notes: tuple[str, ...] = ()  # what an importer decided on the user's word (a symbolic dim's value)

    @property
    def array_layers(self) -> tuple[Layer, ...]:
        return tuple(layer for layer in self.layers if layer.on_array)

    @property
    def macs(self) -> int:
        return sum(layer.kernel.macs * layer.count for layer in self.array_layers)
