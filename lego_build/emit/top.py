"""Top-level generator: one instance or wire per DAG node, one register chain per delayed edge.

Each node kind has its emitter (:data:`NODE_KINDS`, keyed like
:data:`lego_build.ir.dag.SPEC_OF_KIND`); the kinds the controller drives (:data:`CONTROLLER_KINDS`)
have none. Port map and timing of the host interface: :mod:`lego_build.backend.interface`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from veriloggen import Cat, If, Int, Module, Mux, Posedge, StubModule
from veriloggen.core import vtypes

from lego_build.backend.interface import HostMap, host_map
from lego_build.emit.ctrl import mk_ctrl
from lego_build.emit.fold import Banks, df_is, fold_input, fold_output
from lego_build.emit.inbank import merged, read_port
from lego_build.emit.outbank import shared_port, write_port
from lego_build.fulang.kinds import FUS
from lego_build.ir.dag import DAG, DelaySpec, Edge, FifoSpec, GateSpec, MulSpec, MuxSpec, Node, PortSpec
from rtl_templates_free import mk_acc, mk_acc_select, mk_acc_sum, mk_add, mk_fifo, mk_mac, mk_ppu, mk_table
from rtl_templates_free.primitives import MAC_LATENCY, PPU_TABLE

#: node kinds whose signals the controller drives (:func:`lego_build.emit.ctrl.mk_ctrl`): no instance of their own
CONTROLLER_KINDS: tuple[str, ...] = ("ctrl", "agen", "cfg", "dfsel")


def _edge_name(e: Edge) -> str:
    return f"{e.src}__{e.dst}_{e.dst_port}"


def _ports(m: Module, hm: HostMap) -> dict:
    """``lego_top``'s ports by name (a width of None: a one-bit port declared without one): the
    controller's, the host's and the memory system's."""
    p = {}
    for name, width, out in (
            ("clk", None, False), ("rst", None, False), ("cfg_we", None, False), ("cfg_addr", hm.cfg_addr_bits, False),
            ("cfg_wdata", hm.counter_bits, False), ("start", None, False), ("busy", None, True),
            ("done", None, True),
            ("stepping", None, True),  # the controller's steps are running (a new start is accepted when low)
            ("fin", None, True),
            ("rfin", None, True),  # the run's last input-bank read is done: its input halves may be refilled
            ("host_we", None, False), ("host_tensor", hm.tensor_bits, False), ("host_lane", hm.lane_bits, False),
            ("host_addr", hm.addr_bits, False), ("host_wdata", hm.operand_bits, False),
            ("rd_lane", hm.lane_bits, False), ("rd_addr", hm.addr_bits, False), ("rd_data", hm.out_bits, True),
            # the memory system's side (lego_build.emit.soc): ping-pong halves, whole rows per cycle; per
            # input tensor its half (a tensor the next tile does not change keeps its half)
            ("in_half", len(hm.input_tensors), False), ("out_half", None, False), ("acc", None, False),
            ("dma_we", None, False), ("dma_half", None, False), ("dma_tensor", hm.tensor_bits, False),
            ("dma_addr", hm.addr_bits, False),
            ("dma_row", hm.fill * hm.in_row_bits, False),  # ``fill`` rows, slot j for bank address j mod rows
            ("dma_mask", hm.fill if hm.fill > 1 else 0, False),  # no port for one row per write
            ("dma_raddr", hm.addr_bits, False), ("dma_rhalf", None, False), ("dma_ren", None, False),
            # with ``row_prefetch`` both halves' rows, half 1's above (:func:`_read_path`)
            ("dma_rrow", hm.out_row_bits * (2 if hm.row_prefetch else 1), True)):
        args = (name,) if width is None else (name, width)
        p[name] = None if width == 0 else m.Output(*args) if out else m.Input(*args)
    return p


def _host_port(m: Module, p: dict, unused: list) -> None:
    """The ``HOST`` parameter (issue 44): 1 where the host port writes the input banks and reads
    the outputs (the standalone testbench); 0, the default, in ``lego_soc``, which ties the port
    off, so its logic is not made (a module synthesised on its own cannot see the tie-off). In
    ``p`` the host's write enable and read address become what the logic reads, ``dma_wsel``
    picks the DMA's write address and data; the raw ports go to ``unused``."""
    host = p["HOST"] = m.Parameter("HOST", 0, width=1)
    names = ("host_we", "host_tensor", "host_lane", "host_addr", "host_wdata", "rd_lane", "rd_addr")
    unused += [(p[n], p[n].width or 1) for n in names]
    we = m.Wire("host_we_on")
    m.Assign(we(p["host_we"] & host))
    wsel = m.Wire("dma_wsel")
    m.Assign(wsel(p["dma_we"] | ~host))
    raddr = m.Wire("rd_addr_on", p["rd_addr"].width)
    m.Assign(raddr(Mux(host, p["rd_addr"], p["dma_raddr"])))
    p.update(host_we=we, dma_wsel=wsel, rd_addr=raddr)


@dataclass
class _Top:
    """What the node emitters build into and read."""

    m: Module
    hm: HostMap
    dag: DAG
    use: Callable[[Module], StubModule]  # registers a submodule, returns its stub
    port: dict  # lego_top's ports by name
    signal: dict = field(default_factory=dict)  # (node, port) -> output signal
    inp: dict = field(default_factory=dict)  # (node, port) -> the signal driving it
    when: dict = field(default_factory=dict)  # node -> its scheduled cycle
    tag_in: dict = field(default_factory=dict)  # input tensor -> its half tag, delayed per cycle
    tag_out: list = field(default_factory=list)
    tag_acc: list = field(default_factory=list)
    df_read: list = field(default_factory=list)  # delay blocks clocked per dataflow (they read the dataflow select)
    unused: list = field(default_factory=list)  # address bits above a smaller bank's, DMA row bits
    seen: set = field(default_factory=set)  # (signal, bits) already cut to a bank's address
    write_addr: dict = field(default_factory=dict)  # per input tensor: the DMA's or the host's write address
    write_mask: dict = field(default_factory=dict)  # per input tensor of several rows per write: the sub-banks written
    out_rdata: list = field(default_factory=list)  # (lane, the output bank's word the host reads)
    #: (lane, the output bank's word the DMA reads; with ``row_prefetch`` each half's, a pair)
    dma_words: list = field(default_factory=list)

    @property
    def in_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.hm.input_tensors)}

    def shift_register(self, name, src, width, depth, enable):
        """A delay block (seed 004 fig. 5-2); with ``enable`` clocked only in those dataflows."""
        m, hm = self.m, self.hm
        regs = [m.Reg(f"{name}_{i}", width) for i in range(depth)]
        shift = [r(prev) for r, prev in zip(regs, [src] + regs[:-1])]
        if enable:  # power gating: clocked only in the dataflows that use this link
            self.df_read.append(name)
            cond = df_is(self.signal[("dfsel", "sel")], [hm.dataflows.index(df) for df in enable], hm.df_bits)
            shift = [If(cond)(*shift)]
        m.Always(Posedge(self.port["clk"]))(*shift)
        return regs[-1]

    def bank_addr(self, sig, buf):
        """``sig`` (an address generator's width) cut to ``buf``'s banks."""
        return self.low_bits(sig, buf.addr_bits)

    def low_bits(self, sig, bits: int):
        """The low ``bits`` of ``sig``, an address of the host map's width (the others to ``unused``)."""
        hm = self.hm
        if bits == hm.addr_bits:
            return sig
        key = (getattr(sig, "name", id(sig)), bits)
        if key not in self.seen:  # each signal's bits once: 1024 lanes share the DMA's and the host's address
            self.seen.add(key)
            self.unused.append((sig[bits:hm.addr_bits], hm.addr_bits - bits))
        return sig[0:bits]


def _controller(t: _Top) -> dict:
    """The controller (:func:`lego_build.emit.ctrl.mk_ctrl`) and the wires it drives; returns the
    PPU's configuration wires (none without a PPU)."""
    m, hm, p, signal = t.m, t.hm, t.port, t.signal
    ctrl_ports = [(name, p[name]) for name in ("clk", "rst", "cfg_we", "cfg_addr", "cfg_wdata", "start", "busy",
                                               "done", "stepping", "fin", "rfin")]
    for port in ("first", "commit"):
        signal[("ctrl", port)] = m.Wire(f"ctrl_{port}")
        ctrl_ports.append((port, signal[("ctrl", port)]))
    for name in hm.tensors:
        signal[(f"agen_{name}", "addr")] = m.Wire(f"agen_{name}_addr", hm.addr_bits)
        ctrl_ports.append((f"addr_{name}", signal[(f"agen_{name}", "addr")]))
    if hm.dataflows:
        signal[("dfsel", "sel")] = m.Wire("dfsel_sel", hm.df_bits)
        ctrl_ports.append(("df", signal[("dfsel", "sel")]))
    for k, capacity in enumerate(hm.fifo_capacities):
        signal[("ctrl", f"ok{k}")] = m.Wire(f"ctrl_ok{k}")
        ctrl_ports.append((f"ok{k}", signal[("ctrl", f"ok{k}")]))
        if capacity > 1:
            signal[(f"fifodepth{k}", "depth")] = m.Wire(f"fifodepth{k}", hm.fifo_depth_bits)
            ctrl_ports.append((f"depth{k}", signal[(f"fifodepth{k}", "depth")]))
    ppu = {name: m.Wire(f"ppu_{name}", bits) for name, bits in (("mode", 3), ("scale", 16), ("shift", 6))} \
        if hm.ppu else {}
    ctrl_ports += [(f"ppu_{name}", wire) for name, wire in ppu.items()]
    m.Instance(t.use(mk_ctrl(hm)), "u_ctrl", ports=ctrl_ports)
    return ppu


def _edges(t: _Top) -> None:
    """Every node's output wire; edges still carrying delay become register chains (elaborated
    delay blocks are nodes)."""
    for n in t.dag.nodes:
        out = NODE_KINDS[n.kind].out if n.kind in NODE_KINDS else None
        if out:
            t.signal[(n.name, out)] = t.m.Wire(f"{n.name}_{out}", n.width)
    kinds = {n.name: n.kind for n in t.dag.nodes}
    for e in t.dag.edges:
        if (e.src, e.src_port) not in t.signal:  # the depth of one-word FIFOs: no wire
            continue
        src = t.signal[(e.src, e.src_port)]
        if kinds.get(e.src) == "acc" and e.width < src.width:
            src = src[0:e.width]  # a fused accumulator's chain sum: the adder's bits (acc_fusion)
        if e.delay:
            src = t.shift_register(f"dly_{_edge_name(e)}", src, e.width, e.delay, e.enable)
        t.inp[(e.dst, e.dst_port)] = src


def _tags(t: _Top) -> None:
    """A run's buffer halves and accumulate flag travel down the pipeline with its steps: a bank
    port scheduled ``D`` cycles after the step uses the tag of ``D`` cycles ago, so the next run
    can start while this one drains."""
    m, dag, p = t.m, t.dag, t.port
    t.when = dag.start_times()
    accept = p["start"] & ~p["stepping"]
    shared = bool(dag.buffer(t.hm.output_tensor).share)

    def tag_chain(name: str, value, ports: str):
        """``value`` captured when a run starts, then delayed one cycle per register down to
        the deepest of the ``ports`` that use it (each chain ends where its last user is)."""
        users = [n for n in dag.nodes if n.kind == ports and (ports == "write" or n.spec(PortSpec).tensor == name)]
        late = 0 if shared else 1  # a shared lane registers its merged tags itself (emit.outbank.shared_port)
        deepest = max(t.when[n.name] + (late - n.latency if ports == "write" else
                                        -n.latency if merged(dag, name) else 0) for n in users)
        regs = [m.Reg(f"tag_{name}", 1)]
        m.Always(Posedge(p["clk"]))(If(accept)(regs[0](value)))
        for k in range(1, deepest + 1):
            regs.append(m.Reg(f"tag_{name}_q{k}", 1))
            m.Always(Posedge(p["clk"]))(regs[k](regs[k - 1]))
        return regs

    nin = len(t.hm.input_tensors)
    t.tag_in = {name: tag_chain(name, p["in_half"][i] if nin > 1 else p["in_half"], "read")
                for name, i in t.in_index.items()}
    t.tag_out = tag_chain("out_half", p["out_half"], "write")
    t.tag_acc = tag_chain("acc", p["acc"], "write")


def _pin(t: _Top, n: Node) -> None:
    t.m.Assign(t.signal[(n.name, "out")](t.inp[(n.name, "in")]))


def _delay(t: _Top, n: Node) -> None:
    last = t.shift_register(f"r_{n.name}", t.inp[(n.name, "in")], n.width, n.latency, n.spec(DelaySpec).enable)
    t.m.Assign(t.signal[(n.name, "out")](last))


def _mux(t: _Top, n: Node) -> None:
    """The operand source per dataflow."""
    select = n.spec(MuxSpec).select
    sel = t.inp[(n.name, "sel")]
    inputs = sorted({v for _, v in select})
    expr = t.inp[(n.name, f"i{inputs[-1]}")]
    for k in reversed(inputs[:-1]):
        hits = [t.hm.dataflows.index(df) for df, v in select if v == k]
        expr = Mux(df_is(sel, hits, t.hm.df_bits), t.inp[(n.name, f"i{k}")], expr)
    t.m.Assign(t.signal[(n.name, "out")](expr))


def _fifo(t: _Top, n: Node) -> None:
    """A delay link: its run-time depth from the controller."""
    capacity = n.spec(FifoSpec).capacity
    depth = [("depth", t.inp[(n.name, "depth")])] if capacity > 1 else []
    t.m.Instance(t.use(mk_fifo(n.width, capacity, t.hm.fifo_depth_bits)), f"u_{n.name}", ports=[
        ("clk", t.port["clk"]), *depth, ("d", t.inp[(n.name, "in")]), ("q", t.signal[(n.name, "out")])])


def _pick(t: _Top, n: Node) -> None:
    """The FIFO's word while its source step is inside the loop nest, else the bank's."""
    inp = t.inp
    t.m.Assign(t.signal[(n.name, "out")](Mux(inp[(n.name, "sel")], inp[(n.name, "i1")], inp[(n.name, "i0")])))


def _gate(t: _Top, n: Node) -> None:
    """Passes its input only in the listed dataflows, else zero."""
    hm = t.hm
    cond = df_is(t.inp[(n.name, "sel")], [hm.dataflows.index(df) for df in n.spec(GateSpec).dataflows], hm.df_bits)
    t.m.Assign(t.signal[(n.name, "out")](Mux(cond, t.inp[(n.name, "in")], Int(0, n.width, base=10))))


#: the latency of the multiplying primitives themselves (``rtl_templates_free``); a node's
#: latency beyond it is operand registers in front of the primitive (:func:`operand_stages`)
INNER_LATENCY = {"mul": 1, "mac": MAC_LATENCY}
_OPERAND_PORTS = {"mul": ("a", "b", "c"), "mac": ("first", "a", "b")}


def operand_stages(dag: DAG) -> list[tuple[str, str, int, int]]:
    """The operand registers the generator puts in front of the multiplying primitives
    (issue 44: the bank read and the operand multiplexer before a multiplier are a path of
    their own, :data:`lego_build.backend.codegen.LAT_MUL`): per node and port, (node, port,
    bits, stages); ``stages = node latency - the primitive's own``."""
    ports = {(e.dst, e.dst_port): e.width for e in dag.edges}
    out = []
    for n in dag.nodes:
        stages = n.latency - INNER_LATENCY[n.kind] if n.kind in INNER_LATENCY else 0
        out += [(n.name, p, 1 if p == "first" else ports[(n.name, p)], stages)
                for p in _OPERAND_PORTS.get(n.kind, ()) if stages and (n.name, p) in ports]
    return out


def _operands(t: _Top, n: Node, ports: list) -> list:
    """``n``'s operand inputs through their operand registers (:func:`operand_stages`)."""
    stages = n.latency - INNER_LATENCY[n.kind]
    return [(p, t.shift_register(f"{n.name}_op{p}", t.inp[(n.name, p)], 1 if p == "first" else
                                 t.dag.width_into(n.name, p), stages, ())
             if stages else t.inp[(n.name, p)]) for p in ports]


def _mul(t: _Top, n: Node) -> None:
    """A multiplier of its FU kind (:data:`lego_build.fulang.kinds.FUS`, latency 1) behind its
    operand registers."""
    dag, inp = t.dag, t.inp
    ports = [p for p in ("a", "b", "c") if (n.name, p) in inp]
    c_bits = dag.width_into(n.name, "c") if "c" in ports else 0
    fu = FUS.get(n.spec(MulSpec).fu)
    mod = fu.make_mul(dag.width_into(n.name, "a"), dag.width_into(n.name, "b"), n.width, c_bits)
    t.m.Instance(t.use(mod), f"u_{n.name}", ports=[("clk", t.port["clk"])] + _operands(t, n, ports)
                 + [("p", t.signal[(n.name, "p")])])


def _add(t: _Top, n: Node) -> None:
    ins = sorted((e for e in t.dag.edges if e.dst == n.name), key=lambda e: (e.dst_port != "p", e.dst_port))
    mod = mk_add(tuple(e.width for e in ins), n.width)
    t.m.Instance(t.use(mod), f"u_{n.name}", ports=[("clk", t.port["clk"])] + [
        (f"i{i}", t.inp[(n.name, e.dst_port)]) for i, e in enumerate(ins)] + [("s", t.signal[(n.name, "s")])])


def _mac(t: _Top, n: Node) -> None:
    mod = mk_mac(t.dag.width_into(n.name, "a"), t.dag.width_into(n.name, "b"), n.width)
    t.m.Instance(t.use(mod), f"u_{n.name}", ports=[
        ("clk", t.port["clk"]), *_operands(t, n, ["first", "a", "b"]),
        ("y", t.signal[(n.name, "y")])])


def _acc(t: _Top, n: Node) -> None:
    """An accumulator; fused with its FU's adder (:mod:`lego_build.backend.passes.acc_fusion`) it
    takes the chain's partial sum in the dataflows of its select (``c``), or adds the adder's
    other inputs (``c0``, ...)."""
    dag, inp = t.dag, t.inp
    head = [("clk", t.port["clk"]), ("first", inp[(n.name, "first")])]
    if n.attrs is not None:  # the select form
        hm = t.hm
        chain = df_is(inp[(n.name, "sel")], [hm.dataflows.index(df) for df in n.spec(GateSpec).dataflows], hm.df_bits)
        mod = mk_acc_select(dag.width_into(n.name, "p"), dag.width_into(n.name, "c"), n.width)
        ports = head + [("chain", chain), ("p", inp[(n.name, "p")]), ("c", inp[(n.name, "c")])]
    else:
        ins = sorted((e for e in dag.edges if e.dst == n.name and e.dst_port not in ("first",)),
                     key=lambda e: (e.dst_port != "p", e.dst_port))
        if len(ins) == 1:
            mod = mk_acc(ins[0].width, n.width)
            ports = head + [("p", inp[(n.name, "p")])]
        else:  # the three-input form
            mod = mk_acc_sum(tuple(e.width for e in ins), n.width)
            ports = head + [(f"i{i}", inp[(n.name, e.dst_port)]) for i, e in enumerate(ins)]
    t.m.Instance(t.use(mod), f"u_{n.name}", ports=ports + [("y", t.signal[(n.name, "y")])])


@dataclass(frozen=True)
class NodeKind:
    """How ``lego_top`` makes a node of one kind: its output port (the wire ``<node>_<out>``)
    and its emitter."""

    out: str | None  # None: the node drives no wire of its own (a bank write port)
    emit: Callable[[_Top, Node], None]


#: the emitter of each node kind that has one (the others: :data:`CONTROLLER_KINDS`)
NODE_KINDS: dict[str, NodeKind] = {
    "read": NodeKind("data", read_port), "pin": NodeKind("out", _pin), "mul": NodeKind("p", _mul),
    "add": NodeKind("s", _add), "acc": NodeKind("y", _acc), "mac": NodeKind("y", _mac), "mux": NodeKind("out", _mux),
    "gate": NodeKind("out", _gate), "delay": NodeKind("out", _delay), "fifo": NodeKind("out", _fifo),
    "pick": NodeKind("out", _pick), "write": NodeKind(None, write_port),
}


def _folded_banks(t: _Top, folded: set) -> Banks:
    """The banks of tensors folded over dataflows (:mod:`lego_build.emit.fold`)."""
    names = ("clk", "dma_we", "dma_wsel", "dma_addr", "host_addr", "dma_row", "in_half", "dma_half", "host_tensor",
             "host_lane", "host_we", "host_wdata", "dma_tensor", "dma_raddr", "rd_addr", "dma_rhalf", "dma_ren",
             "out_half")
    banks = Banks(t.m, t.hm, t.dag, t.use, {name: t.port[name] for name in names}, t.inp, t.when, t.tag_in,
                  t.tag_out, t.tag_acc, t.unused, t.signal.get(("dfsel", "sel")))
    for name in t.hm.input_tensors:
        if name in folded:
            fold_input(banks, name, t.in_index[name], lambda node, expr: t.m.Assign(t.signal[(node, "data")](expr)))
    if t.hm.output_tensor in folded:
        fold_output(banks, t.out_rdata, t.dma_words)
    return banks


def _unused_bits(t: _Top, folded: set, banks: Banks | None) -> None:
    """The bits no logic reads on one wire (Verilator's lint ignores signals named *unused*)."""
    m, hm, unused = t.m, t.hm, t.unused
    nin = len(hm.input_tensors)
    for j in range(1, hm.fill):  # slot j of the DMA row: as wide as the widest tensor of more than j rows
        used = max(hm.lanes[i] * hm.operand_bits for i in range(nin) if hm.rows_of(i) > j)
        if used < hm.in_row_bits:
            unused.append((t.port["dma_row"][j * hm.in_row_bits + used:(j + 1) * hm.in_row_bits],
                           hm.in_row_bits - used))
    if ("dfsel", "sel") in t.signal and not (t.df_read or any(e.src == "dfsel" for e in t.dag.edges)
                                             or (folded and banks.df_used)):
        # every dataflow reads its own ports (arch.broadcast=ports) and needs no select in the array
        unused.append((t.signal[("dfsel", "sel")], hm.df_bits))
    if unused:
        bits = m.Wire("unused_addr_bits", sum(w for _, w in unused))
        m.Assign(bits(Cat(*[s for s, _ in unused])))


def _read_path(t: _Top, ppu: dict) -> None:
    """The output banks' rows to the DMA, and with ``HOST`` (:func:`_host_port`) the host's word
    read (through the PPU, one more cycle, when the design has one)."""
    m, hm, p = t.m, t.hm, t.port
    t.dma_words.sort(key=lambda x: x[0])
    if hm.row_prefetch:  # each bank's word straight to the memory system's flip-flops, the half chosen there
        m.Assign(p["dma_rrow"](Cat(*[w[h] for h in (1, 0) for _, w in reversed(t.dma_words)])))
    else:
        m.Assign(p["dma_rrow"](Cat(*[w for _, w in reversed(t.dma_words)])))
    g = m.GenerateIf(p["HOST"], "g_host_read")
    rd_lane_q = g.Reg("rd_lane_q", hm.lane_bits)
    g.Always(Posedge(p["clk"]))(rd_lane_q(p["rd_lane"]))
    t.out_rdata.sort(key=lambda x: x[0])
    t.unused += [(w, hm.out_bits) for _, w in t.out_rdata]
    result = t.out_rdata[-1][1]
    for lane, rdata in reversed(t.out_rdata[:-1]):
        result = Mux(rd_lane_q == Int(lane, hm.lane_bits, base=10), rdata, result)
    # each branch drives the port once; veriloggen takes one assignment per signal object, so the
    # other branch's is made on a second object of the same name
    off = vtypes.Wire(width=hm.out_bits, name=p["rd_data"].name)
    g.Else("g_no_host_read").Assign(off(Int(0, hm.out_bits, base=10)))
    if not hm.ppu:
        g.Assign(p["rd_data"](result))
        return
    t.unused += [(w, w.width) for w in ppu.values()]
    word = g.Wire("rd_word", hm.out_bits)
    g.Assign(word(result))
    high = hm.cfg_addr_bits - 8
    cfg_we, cfg_addr = p["cfg_we"], p["cfg_addr"]
    lut_we = cfg_we & (cfg_addr[8:hm.cfg_addr_bits] == Int(hm.ppu_lut_base >> 8, high, base=10)) if high else cfg_we
    t.use(mk_table(*PPU_TABLE))  # the PPU's activation table (a macro of its own)
    g.Instance(t.use(mk_ppu(hm.out_bits)), "u_ppu", ports=[
        ("clk", p["clk"]), ("x", word), ("mode", ppu["mode"]), ("scale", ppu["scale"]), ("shift", ppu["shift"]),
        ("lut_we", lut_we), ("lut_addr", cfg_addr[0:8]), ("lut_data", p["cfg_wdata"][0:8]), ("y", p["rd_data"])])


def mk_top(dag: DAG, bus_bits: int = 0) -> tuple[Module, list[Module], HostMap]:
    """Return the top module, its submodules (one per distinct name), and the host map;
    ``bus_bits`` the memory system's AXI width (the bank rows one DMA write fills)."""
    hm = host_map(dag, bus_bits)
    m = Module("lego_top")
    subs: dict[str, Module] = {}

    def use(mod: Module) -> StubModule:
        subs.setdefault(mod.name, mod)
        return StubModule(mod.name)

    t = _Top(m, hm, dag, use, _ports(m, hm))
    _host_port(m, t.port, t.unused)
    ppu = _controller(t)
    _edges(t)
    _tags(t)
    folded = {b.tensor for b in dag.buffers if b.logical_bits > b.addr_bits}
    shared: dict[int, list[Node]] = {}  # shared output lanes' members (lego_build.ir.outshare)
    out = dag.buffer(hm.output_tensor)
    for n in dag.nodes:
        if n.kind in ("read", "write") and n.spec(PortSpec).tensor in folded:
            continue  # _folded_banks, below
        if n.kind == "write" and out.share:
            shared.setdefault(out.share[n.spec(PortSpec).lane], []).append(n)
        elif n.kind in NODE_KINDS:
            NODE_KINDS[n.kind].emit(t, n)
    for lane in sorted(shared):
        shared_port(t, out, lane, shared[lane])
    banks = _folded_banks(t, folded) if folded else None
    _read_path(t, ppu)
    _unused_bits(t, folded, banks)
    return m, [subs[k] for k in sorted(subs)], hm
