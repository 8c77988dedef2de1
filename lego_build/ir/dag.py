"""Detailed architecture graph (DAG): hardware primitives and timed wires (seed 004 §5.1).

Nodes are primitives (buffer read/write, pin, multiplier, adder, accumulator,
multiplexer, gate, counter group / address generator, control source, static
configuration source ``cfg``, FIFO of a delay link and its ``pick`` multiplexer). ``latency`` is ``L_v``, the pipeline
registers inside the primitive. An edge carries a bit-width and, after delay
matching, ``delay = E_{u,v}``: registers inserted on that wire. ``schedule`` holds
``D_v``, the cycle (relative to the controller's time step) at which node ``v``'s output is
ready (its inputs arrive ``L_v`` cycles before; with ``L_v`` 0, the cycle it consumes them).
``anchors`` pin relative times that the control flow fixes (eq. 3.6: FU ``s`` runs ``s·c``
cycles after FU 0).

A node's ``attrs`` is the typed record of its kind (:data:`SPEC_OF_KIND`): which bank
port a read or write is, a FIFO's size and group, a multiplexer's input per dataflow,
the dataflows a gate passes or a delay block is clocked in, a multiplier's FU kind.
``dag.json`` keeps them as ``[key, string]`` pairs, the form that file has always had:
:meth:`Node.__jsonable__` and :meth:`Node.__from_jsonable__` convert at the JSON boundary
(:mod:`lego_build.ir.serialize` calls them).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, TypeVar

from lego_build.ir import outshare
from lego_build.ir.fold import fold_bits

#: the FU kind of a multiplier whose ``dag.json`` entry names none (``arch.fu`` default)
DEFAULT_FU = "mac"

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """An address generator's or an operand pin's tensor."""

    tensor: str

    def pairs(self) -> Pairs:
        return (("tensor", self.tensor),)

    @classmethod
    def from_pairs(cls, d: Mapping[str, str]) -> TensorSpec:
        return cls(d["tensor"])


@dataclass(frozen=True, slots=True)
class PortSpec:
    """A buffer read or write: lane ``lane`` of ``tensor``'s banks."""

    tensor: str
    lane: int

    def pairs(self) -> Pairs:
        return (("lane", str(self.lane)), ("tensor", self.tensor))

    @classmethod
    def from_pairs(cls, d: Mapping[str, str]) -> PortSpec:
        return cls(d["tensor"], int(d["lane"]))


@dataclass(frozen=True, slots=True)
class FifoSpec:
    """A delay link's FIFO: ``capacity`` words, iteration-shift group ``shift`` (an index of
    ``DAG.shifts``), and ``static_depth``, the one depth it can run at (0: the host sets it per layer)."""

    capacity: int
    shift: int
    static_depth: int

    def pairs(self) -> Pairs:
        return (("capacity", str(self.capacity)), ("shift", str(self.shift)),
                ("static_depth", str(self.static_depth)))

    @classmethod
    def from_pairs(cls, d: Mapping[str, str]) -> FifoSpec:
        return cls(int(d["capacity"]), int(d["shift"]), int(d["static_depth"]))


@dataclass(frozen=True, slots=True)
class MuxSpec:
    """A dataflow multiplexer: ``select`` gives, per dataflow (in the design's order), the input ``i<k>`` it passes."""

    select: tuple[tuple[str, int], ...]

    def input_of(self, dataflow: str) -> int:
        return dict(self.select)[dataflow]

    def pairs(self) -> Pairs:
        return (("select", ",".join(f"{df}:{k}" for df, k in self.select)),)

    @classmethod
    def from_pairs(cls, d: Mapping[str, str]) -> MuxSpec:
        items = (item.split(":") for item in d["select"].split(","))
        return cls(tuple((df, int(k)) for df, k in items))


@dataclass(frozen=True, slots=True)
class GateSpec:
    """A gate: passes its input in ``dataflows``, zero in the others."""

    dataflows: tuple[str, ...]

    def pairs(self) -> Pairs:
        return (("dataflows", ",".join(self.dataflows)),)

    @classmethod
    def from_pairs(cls, d: Mapping[str, str]) -> GateSpec:
        return cls(tuple(d["dataflows"].split(",")))


@dataclass(frozen=True, slots=True)
class DelaySpec:
    """A delay block: clocked only in the dataflows ``enable`` (empty: always)."""

    enable: tuple[str, ...] = ()

    def pairs(self) -> Pairs:
        return (("enable", ",".join(self.enable)),)

    @classmethod
    def from_pairs(cls, d: Mapping[str, str]) -> DelaySpec:
        return cls(tuple(d["enable"].split(",")))


@dataclass(frozen=True, slots=True)
class MulSpec:
    """A multiplier of FU kind ``fu`` (a name of ``lego_build.fulang.kinds.FUS``)."""

    fu: str = DEFAULT_FU

    def pairs(self) -> Pairs:
        return (("fu", self.fu),)

    @classmethod
    def from_pairs(cls, d: Mapping[str, str]) -> MulSpec:
        return cls(d["fu"])


NodeAttrs = TensorSpec | PortSpec | FifoSpec | MuxSpec | GateSpec | DelaySpec | MulSpec
S = TypeVar("S", TensorSpec, PortSpec, FifoSpec, MuxSpec, GateSpec, DelaySpec, MulSpec)
#: the attribute record of each node kind that has one (a broadcast tap's ``pin`` has none)
SPEC_OF_KIND: dict[str, type] = {"agen": TensorSpec, "pin": TensorSpec, "read": PortSpec, "write": PortSpec,
                                 "fifo": FifoSpec, "mux": MuxSpec, "gate": GateSpec, "delay": DelaySpec,
                                 "mul": MulSpec, "acc": GateSpec}
#: records ``dag.json`` leaves implicit (written as no pairs): an always-clocked delay block, a default-FU multiplier
IMPLICIT: dict[str, NodeAttrs] = {"delay": DelaySpec(), "mul": MulSpec()}


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    kind: str
    latency: int
    width: int
    attrs: NodeAttrs | None = None

    def spec(self, cls: type[S]) -> S:
        """The node's attributes, which must be a ``cls``."""
        if not isinstance(self.attrs, cls):
            raise TypeError(f"DAG node {self.name} ({self.kind}) carries {self.attrs!r}, not a {cls.__name__}")
        return self.attrs

    def __jsonable__(self) -> dict[str, Any]:
        """The node in ``dag.json``: its attributes as ``[key, string]`` pairs (none for :data:`IMPLICIT` ones)."""
        attrs = self.attrs
        pairs = [] if attrs is None or attrs == IMPLICIT.get(self.kind) else [list(p) for p in attrs.pairs()]
        return {"name": self.name, "kind": self.kind, "latency": self.latency, "width": self.width, "attrs": pairs}

    @classmethod
    def __from_jsonable__(cls, data: Mapping[str, Any]) -> Node:
        kind, pairs = data["kind"], data["attrs"]
        if not pairs:
            attrs = IMPLICIT.get(kind)
        elif kind in SPEC_OF_KIND:
            attrs = SPEC_OF_KIND[kind].from_pairs(dict(pairs))
        else:
            raise ValueError(f"dag.json: {kind} node {data['name']} carries attributes {pairs}; this kind has none")
        return cls(data["name"], kind, data["latency"], data["width"], attrs)


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
    packs: tuple[tuple[int, ...], ...] = ()  # per dataflow, lane -> word of a packed DMA row (ir.adg.TensorNet)
    # an output's shared lanes (lego_build.ir.outshare): per port its bank lane; ``lanes`` counts ports,
    # ``depth`` and ``addr_bits`` are a bank's (a lane's members' words)
    share: tuple[int, ...] = ()

    @property
    def logical_bits(self) -> int:
        """A lane's address width: the bank's, plus the slice bits of its folds (:mod:`lego_build.ir.fold`;
        a shared output lane does not fold)."""
        return self.addr_bits + (0 if self.share else fold_bits(self.packs))

    @property
    def banks(self) -> int:
        """Bank lanes (each a pair of halves): one per port, or per shared lane."""
        return outshare.count(self.share, self.lanes)


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

    def edges_into(self) -> dict[str, tuple[Edge, ...]]:
        """Every node's input edges at once (:meth:`inputs_of` for all nodes: one pass, not one per node)."""
        into: dict[str, list[Edge]] = {}
        for e in self.edges:
            into.setdefault(e.dst, []).append(e)
        return {k: tuple(v) for k, v in into.items()}

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
                fifo = n.spec(FifoSpec)
                caps[fifo.shift] = max(caps[fifo.shift], fifo.capacity)
        return tuple(caps)

    def buffer(self, tensor: str) -> BufferSpec:
        return next(b for b in self.buffers if b.tensor == tensor)

    def width_into(self, name: str, port: str) -> int:
        """The width of the one edge into node ``name``'s input ``port``."""
        (e,) = [e for e in self.edges if e.dst == name and e.dst_port == port]
        return e.width
