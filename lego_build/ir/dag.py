"""Detailed architecture graph (DAG): hardware primitives and timed wires (seed 004 §5.1).

Nodes are primitives (buffer read/write, pin, multiplier, adder, accumulator,
multiplexer, gate, counter group / address generator, control source, static
configuration source ``cfg``, FIFO of a delay link and its ``pick`` multiplexer). ``latency`` is ``L_v``, the pipeline
registers inside the primitive. An edge carries a bit-width and, after delay
matching, ``delay = E_{u,v}``: registers inserted on that wire. ``schedule`` holds
``D_v``, the cycle (relative to the controller's time step) at which node ``v``
consumes its inputs. ``anchors`` pin relative times that the control flow fixes
(eq. 3.6: FU ``s`` runs ``s·c`` cycles after FU 0).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

Attr = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    kind: str
    latency: int
    width: int
    attrs: Attr = ()

    def attr(self, key: str) -> str:
        return dict(self.attrs)[key]


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    src_port: str
    dst: str
    dst_port: str
    width: int
    delay: int = 0
    enable: tuple[str, ...] = ()  # dataflows that clock this edge's registers (empty: always clocked)


@dataclass(frozen=True, slots=True)
class BufferSpec:
    tensor: str
    role: str
    bits: int
    lanes: int
    depth: int
    addr_bits: int


@dataclass(frozen=True, slots=True)
class DAG:
    shape: tuple[int, ...]
    levels: int  # temporal loop levels (counters) in the controller
    reduction_levels: int  # the innermost levels the output accumulates over
    counter_bits: int
    buffers: tuple[BufferSpec, ...]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    anchors: tuple[tuple[str, int], ...] = ()
    schedule: tuple[tuple[str, int], ...] = ()
    passes: tuple[str, ...] = ()
    dataflows: tuple[str, ...] = ()  # switchable dataflows, in select order
    shifts: tuple[tuple[int, ...], ...] = ()  # iteration shift of each FIFO group (``ok<k>``, ``fifodepth<k>``)
    ppu: bool = False  # a post-processing unit between the output banks and the host read port

    def node(self, name: str) -> Node:
        return self._index()[name]

    def _index(self) -> dict[str, Node]:
        return {n.name: n for n in self.nodes}

    def inputs_of(self, name: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.dst == name)

    def start_times(self) -> dict[str, int]:
        return dict(self.schedule)

    @property
    def latency(self) -> int:
        """Cycles from a time step to its last buffer write (``max D`` over write nodes)."""
        d = self.start_times()
        return max(d[n.name] for n in self.nodes if n.kind == "write")

    def register_bits(self) -> int:
        """Eq. 5.2's objective: the bits of all registers inserted on edges (or elaborated as delay blocks)."""
        return sum(e.width * e.delay for e in self.edges) + sum(
            n.width * n.latency for n in self.nodes if n.kind == "delay")

    def with_delays(self, schedule: dict[str, int]) -> "DAG":
        """Set ``E_uv`` from a schedule; static configuration wires (``cfg`` sources) need none."""
        lat = {n.name: n.latency for n in self.nodes}
        static = {n.name for n in self.nodes if n.kind == "cfg"}
        edges = tuple(replace(e, delay=0 if e.src in static else schedule[e.dst] - schedule[e.src] - lat[e.dst])
                      for e in self.edges)
        return replace(self, edges=edges, schedule=tuple(sorted(schedule.items())))

    def timed_edges(self) -> tuple[Edge, ...]:
        """Edges that carry per-time-step data (all but static configuration wires)."""
        static = {n.name for n in self.nodes if n.kind == "cfg"}
        return tuple(e for e in self.edges if e.src not in static)

    def fifo_capacities(self) -> tuple[int, ...]:
        """Per FIFO group: the largest depth its FIFOs hold (run-time depth ``1..capacity``)."""
        caps = [0] * len(self.shifts)
        for n in self.nodes:
            if n.kind == "fifo":
                k = int(n.attr("shift"))
                caps[k] = max(caps[k], int(n.attr("capacity")))
        return tuple(caps)

    def buffer(self, tensor: str) -> BufferSpec:
        return next(b for b in self.buffers if b.tensor == tensor)
