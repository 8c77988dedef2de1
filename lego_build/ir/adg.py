"""Architecture description graph (ADG): FUs, per-tensor interconnections, data nodes.

Seed 004 §3.4: each tensor has a directed forest over the FU array; an edge
``(s1, s2, delay)`` moves data from FU ``s1`` to ``s2`` after ``delay`` cycles
(``Δt_bias`` for a direct link, ``Δt_bias + w`` for a delay link through a FIFO of
depth ``w``). Tree roots (input tensors) or sinks (output tensors) carry a data
node: a memory port. In a design with several dataflows every link and port
records the dataflows that use it. The destination of a delay link also has a data
node: eq. 4.3 holds only while the source's earlier time step lies inside the
loop nest, so at the edges of a window (e.g. ``kw = 0``) the FU reads memory.
"""
from __future__ import annotations

from dataclasses import dataclass

from lego_build.ir import outshare
from lego_build.ir.dataflow import Coord, Dataflow
from lego_build.ir.fold import fold_factor


@dataclass(frozen=True, slots=True)
class Link:
    src: Coord
    dst: Coord
    delay: int
    kind: str = "direct"  # "direct" | "delay"
    fifo: int = 0  # w: FIFO depth of a delay link (the minimum; programmable up to d_T if no fixed temporal order)
    dataflows: tuple[str, ...] = ()
    # delay link: iteration displacement M_T t per kernel dim (dst at i uses src's i - shift)
    shift: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TensorNet:
    """The interconnection forest of one tensor. ``ports`` are the FUs with a data node,
    in lane order (the buffer bank each one uses; an output's ``lanes``, where set, say which
    lane each port shares with the other FUs of its column: :mod:`lego_build.ir.outshare`)."""

    tensor: str
    role: str
    bits: int
    link_vectors: tuple[tuple[Coord, int], ...]  # (Δs, Δt_bias) solutions of eq. 4.1, any dataflow
    links: tuple[Link, ...]
    ports: tuple[Coord, ...]
    port_dataflows: tuple[tuple[str, ...], ...] = ()
    delay_solutions: tuple[tuple[Coord, tuple[int, ...], int], ...] = ()  # (Δs, t, w) of eq. 4.3
    # per dataflow (ADG order), each lane's word in a packed DMA row: lanes whose banks hold the same
    # words under that dataflow share one (-1: the dataflow does not use the lane); frontend.packing
    packs: tuple[tuple[int, ...], ...] = ()
    lanes: tuple[int, ...] = ()  # an output's shared lanes (arch.out_lanes): per port its lane; () one each


@dataclass(frozen=True, slots=True)
class ADG:
    kernel: str
    dims: tuple[str, ...]  # iteration dims of the kernel family, in IR order
    reduction_dims: tuple[str, ...]
    shape: tuple[int, ...]  # FU array extents
    dataflows: tuple[Dataflow, ...]
    control_flow: tuple[int, ...]  # c
    fu: str
    operand_bits: int
    acc_bits: int
    buffer_depth: int
    nets: tuple[TensorNet, ...]
    d_t: int = 0  # FIFO capacity of delay links (their depth is a run-time register, 1..d_t)
    ppu: bool = False  # a post-processing unit on the output path
    acc_wraps: bool = False  # arch.overflow=wrap: sums past acc_bits wrap around, accepted on purpose
    depths: tuple[tuple[str, int], ...] = ()  # words per bank half of each tensor (arch.onchip_kb); else buffer_depth

    def depth(self, tensor: str) -> int:
        """Words per bank (per ping-pong half) of ``tensor``."""
        return dict(self.depths).get(tensor, self.buffer_depth)

    def capacity(self, tensor: str, dataflow: str) -> int:
        """Words a used lane of ``tensor`` holds per half under ``dataflow``: its bank and the
        idle banks folded onto it (:mod:`lego_build.ir.fold`), or a used port its share of a
        shared output lane (:mod:`lego_build.ir.outshare`)."""
        net = self.net(tensor)
        if not net.packs:
            return self.depth(tensor)
        index = [d.name for d in self.dataflows].index(dataflow)
        if net.lanes:  # a shared lane holds its members' words (lego_build.ir.outshare)
            return outshare.capacity(net.lanes, net.packs[index], self.depth(tensor))
        return self.depth(tensor) * fold_factor(net.packs[index])

    def capacities(self, dataflow: str):
        """:meth:`capacity` under ``dataflow``, as a function of the tensor (for tile fits)."""
        return lambda tensor: self.capacity(tensor, dataflow)

    @property
    def fus(self) -> tuple[Coord, ...]:
        rows, cols = self.shape
        return tuple((r, c) for r in range(rows) for c in range(cols))

    def t_bias(self, s: Coord) -> int:
        """Eq. 3.6: the timestamp lag of FU ``s`` under control flow ``c``."""
        return sum(a * b for a, b in zip(s, self.control_flow))

    def net(self, tensor: str) -> TensorNet:
        return next(n for n in self.nets if n.tensor == tensor)

    def dataflow(self, name: str) -> Dataflow:
        return next(d for d in self.dataflows if d.name == name)
