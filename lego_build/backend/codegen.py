"""ADG -> DAG translation (seed 004 §5.1), rule based.

Rules: each input-tensor data node becomes a buffer-bank read (``L=1``) addressed
by the tensor's address generator; every FU gets one *pin* per input tensor fed
by its parent in the tensor's forest or by its read port; the FU opens into a
multiplier (``L=1``) of its two (MAC) or three (MTTKRP, TTMc) operands, of the FU kind
``arch.fu`` (:data:`lego_build.fulang.kinds.FUS`, node attribute :class:`MulSpec`). Output links are
spatial reductions: an FU whose partial sums arrive from other FUs adds them to its
product in an adder (``L=1``). At each output data node (a reduction sink) an
accumulator (``L=1``), reset by the controller's ``first`` signal, sums over the
temporal reduction loops, and a bank write enabled by ``commit`` stores the result.

Several dataflows (a switchable design) share one DAG: a static ``cfg`` source
(the controller's dataflow-select register) drives a multiplexer wherever an FU's
operand comes from different places in different dataflows, and a gate wherever a
partial-sum link or a memory write is used by only some dataflows. The union of
the output links must stay acyclic.

A delay link (eq. 4.3) becomes a programmable-depth FIFO fed by the source FU's
pin and a ``pick`` multiplexer at the destination: the FIFO's word when the
controller's ``ok<k>`` says the source's earlier step ``T - t`` lies inside the loop
nest, else the destination's own fallback bank read. ``k`` indexes the distinct
iteration shifts ``M_T t`` (``DAG.shifts``); the host sets each shift's depth ``w``
and index bounds per layer (:mod:`lego_build.sim.layout`). In the static schedule the
FIFO has latency 0: it hands the destination the data of an earlier time step.
"""
from __future__ import annotations

from math import ceil, log2

from lego_build.errors import StageError
from lego_build.fulang.kinds import FUS
from lego_build.ir.adg import ADG, TensorNet
from lego_build.ir.dag import DAG, BufferSpec, Edge, FifoSpec, GateSpec, MulSpec, MuxSpec, Node, PortSpec, TensorSpec
from lego_build.ir.outshare import depth_factor

#: primitive latencies L_v (pipeline registers inside the primitive). A multiplier's is 2 (issue 44):
#: its operands registered, then its product. The bank read (a macro's access time, about 1.7 ns for
#: 4096 x 8 bits at OSU 0.18 um) with the operand multiplexer, and the multiplier (about 3.2 ns for
#: 8 x 8), are each near a 5 ns clock; together they were the array's worst path (5.3 ns)
LAT_READ, LAT_MUL, LAT_ADD, LAT_ACC = 1, 2, 1, 1
#: multiplier operand ports, one per input tensor (MAC: two; MTTKRP / TTMc: three)
MUL_PORTS = ("a", "b", "c")


def addr_bits(depth: int) -> int:
    return max(1, ceil(log2(depth)))


def fu_name(s: tuple[int, ...]) -> str:
    return "_".join(str(v) for v in s)


def fifo_depth_bits(capacity: int) -> int:
    return max(1, capacity.bit_length())


def static_depth(adg: ADG, link) -> int:
    """The one depth a delay link can run at, or 0 if the host sets it per layer.

    With a fixed temporal order whose innermost loop is the only shifted dim, ``w`` is
    ``t`` on that loop whatever the bounds (eq. 3.5 with radix 1)."""
    dims = [d for d, v in zip(adg.dims, link.shift) if v]
    for df in adg.dataflows:
        if df.name in link.dataflows:
            if not df.temporal or len(dims) != 1 or df.loop_order[-1] != dims[0]:
                return 0
    delta = link.shift[adg.dims.index(dims[0])]
    step = adg.dataflow(link.dataflows[0]).extent(dims[0])
    return delta // step if delta % step == 0 and 0 < delta // step <= adg.d_t else 0


def select_bits(n: int) -> int:
    return max(1, (n - 1).bit_length())


def link_name(tensor: str, link) -> str:
    return f"{tensor}_{fu_name(link.src)}_to_{fu_name(link.dst)}"


def _operand_source(net, s, dataflow: str) -> tuple[str, str]:
    """Where FU ``s`` takes tensor ``net`` from under ``dataflow``: a FIFO's pick, its bank read or its parent's pin."""
    for link in net.links:
        if link.kind == "delay" and link.dst == s and dataflow in link.dataflows:
            return f"pick_{link_name(net.tensor, link)}", "out"
    for lane, (port, users) in enumerate(zip(net.ports, net.port_dataflows or [()] * len(net.ports))):
        if port == s and (not users or dataflow in users):
            return f"rd_{net.tensor}_{lane}", "data"
    for link in net.links:
        if link.kind == "direct" and link.dst == s and (not link.dataflows or dataflow in link.dataflows):
            return f"pin_{net.tensor}_{fu_name(link.src)}", "out"
    raise StageError(f"tensor {net.tensor}: FU {s} has neither a link nor a data node in dataflow {dataflow}")


def _check_acyclic(children) -> None:
    import networkx as nx

    g = nx.DiGraph((child, parent) for parent, kids in children.items() for child in kids)
    if not nx.is_directed_acyclic_graph(g):
        raise StageError("partial sums flow both ways between some FUs across the dataflows; "
                         "such a switchable design is not generated yet")


def _sinks_last(fus, children):
    """FUs ordered so that every FU comes after the FUs whose partial sums it adds."""
    done: set = set()
    order = []

    def visit(s):
        if s in done:
            return
        done.add(s)
        for child in children.get(s, ()):
            visit(child)
        order.append(s)

    for s in fus:
        visit(s)
    return order


def _write_outputs(adg: ADG, output: TensorNet, dfs: tuple[str, ...], aw: int, partial: dict, nodes: list[Node],
                   edges: list[Edge]) -> None:
    """The output side after the reduction (``partial``: each FU's partial-sum source): an
    accumulator per sink FU and its write port, gated where only some dataflows write there."""
    for s in output.ports:
        f = fu_name(s)
        src, port = partial[s]
        nodes.append(Node(f"acc_{f}", "acc", LAT_ACC, adg.acc_bits))
        edges += [
            Edge(src, port, f"acc_{f}", "p", adg.acc_bits),
            Edge("ctrl", "first", f"acc_{f}", "first", 1),
        ]
    port_users = dict(zip(output.ports, output.port_dataflows)) if output.port_dataflows else {}
    for lane, s in enumerate(output.ports):
        wr = f"wr_{output.tensor}_{lane}"
        nodes.append(Node(wr, "write", 0, output.bits, PortSpec(output.tensor, lane)))
        edges += [
            Edge(f"acc_{fu_name(s)}", "y", wr, "data", adg.acc_bits),
            Edge(f"agen_{output.tensor}", "addr", wr, "addr", aw),
        ]
        users = port_users.get(s, dfs)
        if set(users) != set(dfs):  # this sink writes only in some dataflows
            gate = f"wgate_{output.tensor}_{lane}"
            nodes.append(Node(gate, "gate", 0, 1, GateSpec(tuple(users))))
            edges += [Edge("ctrl", "commit", gate, "in", 1), Edge("dfsel", "sel", gate, "sel", select_bits(len(dfs))),
                      Edge(gate, "out", wr, "we", 1)]
        else:
            edges.append(Edge("ctrl", "commit", wr, "we", 1))


def build_dag(adg: ADG) -> DAG:
    if adg.fu not in FUS:
        raise StageError(f"arch.fu={adg.fu!r}: choose one of the FUs generated, {', '.join(FUS)}")
    inputs = [n for n in adg.nets if n.role == "in"]
    (output,) = [n for n in adg.nets if n.role == "out"]
    if len(inputs) not in (2, 3):
        raise StageError(f"kernel {adg.kernel}: the FU multiplies two or three input tensors, got {len(inputs)}")
    shifts = tuple(sorted({lk.shift for n in inputs for lk in n.links if lk.kind == "delay"}))
    if shifts and max(lk.fifo for n in inputs for lk in n.links if lk.kind == "delay") > adg.d_t:
        raise StageError(f"a delay link needs a FIFO deeper than arch.d_t={adg.d_t}")
    buffers = tuple(
        BufferSpec(n.tensor, n.role, n.bits, len(n.ports), adg.depth(n.tensor) * depth_factor(n.lanes),
                   addr_bits(adg.depth(n.tensor) * depth_factor(n.lanes)), n.packs, n.lanes)
        for n in adg.nets
    )
    aw = max(b.logical_bits for b in buffers)  # the address generators' width (folded banks' slices included)
    dfs = tuple(d.name for d in adg.dataflows)
    nodes: list[Node] = [Node("ctrl", "ctrl", 0, 1)]
    edges: list[Edge] = []
    if len(dfs) > 1:
        nodes.append(Node("dfsel", "cfg", 0, select_bits(len(dfs))))
    for net in adg.nets:
        nodes.append(Node(f"agen_{net.tensor}", "agen", 0, aw, TensorSpec(net.tensor)))
    for k, _ in enumerate(shifts):
        nodes.append(Node(f"fifodepth{k}", "cfg", 0, fifo_depth_bits(adg.d_t)))
    for net in inputs:
        for lane, s in enumerate(net.ports):
            rd = f"rd_{net.tensor}_{lane}"
            nodes.append(Node(rd, "read", LAT_READ, net.bits, PortSpec(net.tensor, lane)))
            edges.append(Edge(f"agen_{net.tensor}", "addr", rd, "addr", aw))
        lane_of = {s: lane for lane, s in enumerate(net.ports)}
        for link in (lk for lk in net.links if lk.kind == "delay"):
            name, k = link_name(net.tensor, link), shifts.index(link.shift)
            static = static_depth(adg, link)
            nodes += [Node(f"fifo_{name}", "fifo", 0, net.bits, FifoSpec(adg.d_t, k, static)),
                      Node(f"pick_{name}", "pick", 0, net.bits)]
            edges += [Edge(f"pin_{net.tensor}_{fu_name(link.src)}", "out", f"fifo_{name}", "in", net.bits),
                      Edge(f"fifodepth{k}", "depth", f"fifo_{name}", "depth", fifo_depth_bits(adg.d_t)),
                      Edge(f"rd_{net.tensor}_{lane_of[link.dst]}", "data", f"pick_{name}", "i0", net.bits),
                      Edge(f"fifo_{name}", "out", f"pick_{name}", "i1", net.bits),
                      Edge("ctrl", f"ok{k}", f"pick_{name}", "sel", 1)]
        for s in adg.fus:
            pin = f"pin_{net.tensor}_{fu_name(s)}"
            nodes.append(Node(pin, "pin", 0, net.bits, TensorSpec(net.tensor)))
            sources = [_operand_source(net, s, df) for df in dfs]
            distinct = list(dict.fromkeys(sources))
            if len(distinct) == 1:
                edges.append(Edge(*distinct[0], pin, "in", net.bits))
                continue
            mux = f"mux_{net.tensor}_{fu_name(s)}"
            select = tuple((df, distinct.index(src)) for df, src in zip(dfs, sources))
            nodes.append(Node(mux, "mux", 0, net.bits, MuxSpec(select)))
            edges += [Edge(*src, mux, f"i{k}", net.bits) for k, src in enumerate(distinct)]
            edges += [Edge("dfsel", "sel", mux, "sel", select_bits(len(dfs))), Edge(mux, "out", pin, "in", net.bits)]
    operand_ports = MUL_PORTS[:len(inputs)]
    children: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    used_by = {}
    for link in output.links:  # partial sums travel src -> dst, towards the sink
        children.setdefault(link.dst, []).append(link.src)
        used_by[(link.src, link.dst)] = link.dataflows
    _check_acyclic(children)
    partial = {}
    for s in adg.fus:
        f = fu_name(s)
        # widths start conservative (accumulator wide); the bitwidth pass narrows them
        nodes.append(Node(f"mul_{f}", "mul", LAT_MUL, adg.acc_bits, MulSpec(adg.fu)))
        edges += [Edge(f"pin_{net.tensor}_{f}", "out", f"mul_{f}", port, net.bits)
                  for port, net in zip(operand_ports, inputs)]
        partial[s] = (f"mul_{f}", "p")
    for s in _sinks_last(adg.fus, children):
        if s in children:
            f = fu_name(s)
            nodes.append(Node(f"add_{f}", "add", LAT_ADD, adg.acc_bits))
            edges.append(Edge(f"mul_{f}", "p", f"add_{f}", "p", adg.acc_bits))
            for i, child in enumerate(sorted(children[s])):
                src, port = partial[child]
                users = used_by[(child, s)]
                if set(users) != set(dfs):  # only some dataflows add this child's partial sum
                    gate = f"gate_{fu_name(child)}_{f}"
                    nodes.append(Node(gate, "gate", 0, adg.acc_bits, GateSpec(tuple(users))))
                    edges += [Edge(src, port, gate, "in", adg.acc_bits),
                              Edge("dfsel", "sel", gate, "sel", select_bits(len(dfs)))]
                    src, port = gate, "out"
                edges.append(Edge(src, port, f"add_{f}", f"c{i}", adg.acc_bits))
            partial[s] = (f"add_{f}", "s")
    _write_outputs(adg, output, dfs, aw, partial, nodes, edges)
    anchors = tuple((f"mul_{fu_name(s)}", adg.t_bias(s)) for s in adg.fus)
    reduction = len(adg.reduction_dims)
    return DAG(
        shape=adg.shape,
        levels=len(adg.dims),
        reduction_levels=reduction,
        counter_bits=max(16, aw),
        buffers=buffers,
        nodes=tuple(nodes),
        edges=tuple(edges),
        anchors=anchors,
        dataflows=dfs,
        shifts=shifts,
        ppu=adg.ppu,
    )
