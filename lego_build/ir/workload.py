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
    """A perfectly nested loop whose body is ``out += in0 * in1`` (the MAC FU)."""

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
