"""Dataflow IR: spatial ``M_S->I``, temporal ``M_T->I`` and the control flow ``c`` (seed 004 §3.2-3.3).

Each physical array axis unrolls one or more iteration dims, listed outer to
inner: ``((m, 4),)`` on an axis of 4 FUs, or ``((x, 4), (k, 4))`` for Interstellar's
replication ``K|X`` on 16 (k varies between neighbours, x every 4 FUs). The
flattened list of ``(dim, extent)`` is the virtual spatial vector ``s`` of eq. 3.2,
so ``M_S->I`` has one non-zero per column: the stride of that coordinate inside
its dim (the product of the extents of the same dim listed after it).
``temporal`` lists the loops of ``M_T->I`` (outer to inner) as ``(dim, trips)``; a
dim may have several levels (tiling), the inner ones with fixed trip counts and
its outermost one with ``trips = 0``: whatever the layer's bound leaves. Empty
when the hardware lets the mapper choose (seed 004 §4.1 then assumes ``T = I``).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

Coord = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Dataflow:
    name: str
    family: str
    dims: tuple[str, ...]  # the family's iteration dims, in IR order
    axes: tuple[tuple[tuple[str, int], ...], ...]  # per physical axis: (dim, extent), outer to inner
    temporal: tuple[tuple[str, int], ...] = ()  # (dim, trips), outer to inner; trips 0 = the rest
    control_flow: tuple[int, ...] = ()
    stride: int = 1  # the conv stride its links are planned for (conv2d)

    def reach(self, d_s: int) -> int:
        """How far (FUs per axis) a link may reach: ``d_s`` of seed 004 eq. 4.1, times the
        stride, since a strided window's reuse vector is ``stride`` FUs long."""
        return d_s * self.stride

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(prod(e for _, e in axis) for axis in self.axes)

    @property
    def virtual(self) -> tuple[tuple[str, int], ...]:
        """The spatial coordinates of eq. 3.2, axis by axis, outer to inner."""
        return tuple(entry for axis in self.axes for entry in axis)

    def spatial_strides(self) -> tuple[int, ...]:
        """Stride of each virtual coordinate inside its dim (mixed radix, inner fastest)."""
        v = self.virtual
        return tuple(prod(e for d, e in v[i + 1:] if d == dim) for i, (dim, _) in enumerate(v))

    def m_s(self) -> tuple[tuple[int, ...], ...]:
        """``M_S->I`` (n_I x n_S): one non-zero per column."""
        strides = self.spatial_strides()
        return tuple(tuple(st if d == dim else 0 for (d, _), st in zip(self.virtual, strides)) for dim in self.dims)

    def extent(self, dim: str) -> int:
        """FUs along ``dim``: the product of its spatial extents (1 if temporal only)."""
        return prod(e for d, e in self.virtual if d == dim)

    def to_virtual(self, s: Coord) -> Coord:
        """Physical FU coordinates -> virtual coordinates (mixed radix per axis)."""
        out = []
        for coord, axis in zip(s, self.axes):
            digits = []
            for _, extent in reversed(axis):
                digits.append(coord % extent)
                coord //= extent
            out.extend(reversed(digits))
        return tuple(out)

    def t_bias(self, s: Coord) -> int:
        """Eq. 3.6: timestamp lag of FU ``s`` under control flow ``c`` (physical coordinates)."""
        return sum(a * b for a, b in zip(s, self.control_flow))

    @property
    def loop_order(self) -> tuple[str, ...]:
        """Dims in the order of their outermost temporal loop (the order one counter per dim follows)."""
        seen: list[str] = []
        for dim, _ in self.temporal:
            if dim not in seen:
                seen.append(dim)
        return tuple(seen)
