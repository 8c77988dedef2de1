"""Architecture description graph (ADG): FUs, per-tensor interconnections, data nodes.

Seed 004 §3.4: each tensor has a directed forest over the FU array; an edge
``(s1, s2, delay)`` moves data from FU ``s1`` to ``s2`` after ``delay`` cycles. Tree
roots (input tensors) or sinks (output tensors) carry a data node: a memory port.
"""
from __future__ import annotations

from dataclasses import dataclass

Coord = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Link:
    src: Coord
    dst: Coord
    delay: int


@dataclass(frozen=True, slots=True)
class TensorNet:
    """The interconnection forest of one tensor. ``ports`` are the FUs with a data node,
    in lane order (the buffer bank each one uses)."""

    tensor: str
    role: str
    bits: int
    link_vectors: tuple[tuple[Coord, int], ...]  # (Δs, delay) solutions of eq. 4.1
    links: tuple[Link, ...]
    ports: tuple[Coord, ...]


@dataclass(frozen=True, slots=True)
class ADG:
    kernel: str
    dims: tuple[str, ...]  # iteration dims of the kernel, in IR order
    reduction_dims: tuple[str, ...]
    shape: tuple[int, ...]  # FU array extents
    spatial: tuple[str, ...]  # dim unrolled on each array axis (M_S->I)
    control_flow: tuple[int, ...]  # c
    fu: str
    operand_bits: int
    acc_bits: int
    buffer_depth: int
    nets: tuple[TensorNet, ...]

    @property
    def fus(self) -> tuple[Coord, ...]:
        rows, cols = self.shape
        return tuple((r, c) for r in range(rows) for c in range(cols))

    def t_bias(self, s: Coord) -> int:
        """Eq. 3.6: the timestamp lag of FU ``s`` under control flow ``c``."""
        return sum(a * b for a, b in zip(s, self.control_flow))

    def net(self, tensor: str) -> TensorNet:
        return next(n for n in self.nets if n.tensor == tensor)
