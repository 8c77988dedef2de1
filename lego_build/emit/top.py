"""Top-level generator: one instance or wire per DAG node, one register chain per delayed edge.

Port map and timing of the host interface: :mod:`lego_build.backend.interface`.
"""
from __future__ import annotations

from veriloggen import Cat, If, Int, Module, Mux, Posedge, Repeat, StubModule

from lego_build.backend.interface import HostMap, host_map
from lego_build.emit.ctrl import mk_ctrl
from lego_build.emit.fold import Banks, df_is, fold_input, fold_output
from lego_build.fulang.kinds import FUS
from lego_build.ir.dag import DAG, DelaySpec, Edge, FifoSpec, GateSpec, MulSpec, MuxSpec, PortSpec
from rtl_templates_free import mk_acc, mk_add, mk_bank, mk_bank_rows, mk_fifo, mk_mac, mk_ppu, mk_table
from rtl_templates_free.primitives import PPU_TABLE


def _edge_name(e: Edge) -> str:
    return f"{e.src}__{e.dst}_{e.dst_port}"


def mk_top(dag: DAG, bus_bits: int = 0) -> tuple[Module, list[Module], HostMap]:
    """Return the top module, its submodules (one per distinct name), and the host map;
    ``bus_bits`` the memory system's AXI width (the bank rows one DMA write fills)."""
    hm = host_map(dag, bus_bits)
    m = Module("lego_top")
    clk = m.Input("clk")
    rst = m.Input("rst")
    cfg_we = m.Input("cfg_we")
    cfg_addr = m.Input("cfg_addr", hm.cfg_addr_bits)
    cfg_wdata = m.Input("cfg_wdata", hm.counter_bits)
    start = m.Input("start")
    busy = m.Output("busy")
    done = m.Output("done")
    running = m.Output("stepping")  # the controller's steps are running (a new start is accepted when low)
    fin = m.Output("fin")
    rfin = m.Output("rfin")  # the run's last input-bank read is done: its input halves may be refilled
    host_we = m.Input("host_we")
    host_tensor = m.Input("host_tensor", hm.tensor_bits)
    host_lane = m.Input("host_lane", hm.lane_bits)
    host_addr = m.Input("host_addr", hm.addr_bits)
    host_wdata = m.Input("host_wdata", hm.operand_bits)
    rd_lane = m.Input("rd_lane", hm.lane_bits)
    rd_addr = m.Input("rd_addr", hm.addr_bits)
    rd_data = m.Output("rd_data", hm.out_bits)
    # the memory system's side (lego_build.emit.soc): ping-pong halves, whole rows per cycle
    nin = len(hm.input_tensors)
    in_half = m.Input("in_half", nin)  # per input tensor: a tensor the next tile does not change keeps its half
    out_half = m.Input("out_half")
    acc = m.Input("acc")
    dma_we = m.Input("dma_we")
    dma_half = m.Input("dma_half")
    dma_tensor = m.Input("dma_tensor", hm.tensor_bits)
    dma_addr = m.Input("dma_addr", hm.addr_bits)
    dma_row = m.Input("dma_row", hm.fill * hm.in_row_bits)  # ``fill`` rows, slot j for bank address j mod rows
    dma_mask = m.Input("dma_mask", hm.fill) if hm.fill > 1 else None
    dma_raddr = m.Input("dma_raddr", hm.addr_bits)
    dma_rhalf = m.Input("dma_rhalf")
    dma_ren = m.Input("dma_ren")
    dma_rrow = m.Output("dma_rrow", hm.out_row_bits)

    subs: dict[str, Module] = {}

    def use(mod: Module) -> StubModule:
        subs.setdefault(mod.name, mod)
        return StubModule(mod.name)

    signal = {}  # (node, port) -> output signal
    ctrl_ports = [("clk", clk), ("rst", rst), ("cfg_we", cfg_we), ("cfg_addr", cfg_addr),
                  ("cfg_wdata", cfg_wdata), ("start", start), ("busy", busy), ("done", done), ("stepping", running),
                  ("fin", fin), ("rfin", rfin)]
    for port in ("first", "commit"):
        signal[("ctrl", port)] = m.Wire(f"ctrl_{port}")
        ctrl_ports.append((port, signal[("ctrl", port)]))
    for t in hm.tensors:
        signal[(f"agen_{t}", "addr")] = m.Wire(f"agen_{t}_addr", hm.addr_bits)
        ctrl_ports.append((f"addr_{t}", signal[(f"agen_{t}", "addr")]))
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
    m.Instance(use(mk_ctrl(hm)), "u_ctrl", ports=ctrl_ports)

    out_port = {"read": "data", "pin": "out", "mul": "p", "add": "s", "acc": "y", "mac": "y", "mux": "out",
                "gate": "out", "delay": "out", "fifo": "out", "pick": "out"}
    for n in dag.nodes:
        if n.kind in out_port:
            signal[(n.name, out_port[n.kind])] = m.Wire(f"{n.name}_{out_port[n.kind]}", n.width)

    df_read: list = []  # delay blocks clocked per dataflow (they read the dataflow select)

    def shift_register(name, src, width, depth, enable):
        """A delay block (seed 004 fig. 5-2); with ``enable`` clocked only in those dataflows."""
        regs = [m.Reg(f"{name}_{i}", width) for i in range(depth)]
        shift = [r(prev) for r, prev in zip(regs, [src] + regs[:-1])]
        if enable:  # power gating: clocked only in the dataflows that use this link
            df_read.append(name)
            cond = df_is(signal[("dfsel", "sel")], [hm.dataflows.index(df) for df in enable], hm.df_bits)
            shift = [If(cond)(*shift)]
        m.Always(Posedge(clk))(*shift)
        return regs[-1]

    # edges still carrying delay become register chains; elaborated delay blocks are nodes
    inp = {}
    for e in dag.edges:
        if (e.src, e.src_port) not in signal:  # the depth of one-word FIFOs: no wire
            continue
        src = signal[(e.src, e.src_port)]
        if e.delay:
            src = shift_register(f"dly_{_edge_name(e)}", src, e.width, e.delay, e.enable)
        inp[(e.dst, e.dst_port)] = src

    in_index = {t: i for i, t in enumerate(hm.input_tensors)}
    # a run's buffer halves and accumulate flag travel down the pipeline with its steps: a
    # bank port scheduled ``D`` cycles after the step uses the tag of ``D`` cycles ago, so the
    # next run can start while this one drains
    when = dag.start_times()
    accept = start & ~running

    def tag_chain(name: str, value, ports: str):
        """``value`` captured when a run starts, then delayed one cycle per register down to
        the deepest of the ``ports`` that use it (each chain ends where its last user is)."""
        users = [n for n in dag.nodes if n.kind == ports and (ports == "write" or n.spec(PortSpec).tensor == name)]
        deepest = max(when[n.name] for n in users) + (1 if ports == "write" else 0)
        regs = [m.Reg(f"tag_{name}", 1)]
        m.Always(Posedge(clk))(If(accept)(regs[0](value)))
        for k in range(1, deepest + 1):
            regs.append(m.Reg(f"tag_{name}_q{k}", 1))
            m.Always(Posedge(clk))(regs[k](regs[k - 1]))
        return regs

    tag_in = {t: tag_chain(t, in_half[i] if nin > 1 else in_half, "read") for t, i in in_index.items()}
    tag_out = tag_chain("out_half", out_half, "write")
    tag_acc = tag_chain("acc", acc, "write")
    out_rdata, dma_words = [], []
    unused = []  # address bits above a smaller bank's (arch.onchip_kb sizes banks per tensor), DMA row bits

    def bank_addr(sig, buf):
        """``sig`` (an address generator's width) cut to ``buf``'s banks."""
        if buf.addr_bits == hm.addr_bits:
            return sig
        key = (getattr(sig, "name", id(sig)), buf.addr_bits)
        if key not in seen:  # each signal's bits once: 1024 lanes share the DMA's and the host's address
            seen.add(key)
            unused.append((sig[buf.addr_bits:hm.addr_bits], hm.addr_bits - buf.addr_bits))
        return sig[0:buf.addr_bits]
    seen: set = set()
    write_addr: dict = {}  # per input tensor: the DMA's or the host's write address
    write_mask: dict = {}  # per input tensor of several rows per write: the sub-banks written
    folded = {b.tensor for b in dag.buffers if b.logical_bits > b.addr_bits}
    for n in dag.nodes:
        if n.kind in ("read", "write") and n.spec(PortSpec).tensor in folded:
            continue  # lego_build.emit.fold, below
        if n.kind == "read":
            port = n.spec(PortSpec)
            buf, lane = dag.buffer(port.tensor), port.lane
            index = Int(in_index[buf.tensor], hm.tensor_bits, base=10)
            sel = (host_tensor == index) & (host_lane == Int(lane, hm.lane_bits, base=10))
            dsel = dma_we & (dma_tensor == index)
            k = hm.rows_of(in_index[buf.tensor])
            words = [dma_row[j * hm.in_row_bits + lane * hm.operand_bits:
                             j * hm.in_row_bits + lane * hm.operand_bits + buf.bits] for j in range(k)]
            if buf.tensor not in write_addr:
                write_addr[buf.tensor] = m.Wire(f"bank_waddr_{buf.tensor}", hm.addr_bits)
                m.Assign(write_addr[buf.tensor](Mux(dma_we, dma_addr, host_addr)))
                if k > 1:  # which sub-banks a write fills: the DMA's rows, or the host word's
                    lk = k.bit_length() - 1
                    onehot = Cat(*reversed([host_addr[0:lk] == Int(j, lk, base=10) for j in range(k)]))
                    write_mask[buf.tensor] = m.Wire(f"bank_wmask_{buf.tensor}", k)
                    m.Assign(write_mask[buf.tensor](Mux(dma_we, dma_mask[0:k], onehot)))
            halves = []
            ih = in_half[in_index[buf.tensor]] if nin > 1 else in_half
            for h in (0, 1):  # ping-pong: the array reads its half of the tensor while the DMA fills the other
                mine = ih if h else ~ih
                dma_mine = dma_half if h else ~dma_half
                rdata = m.Wire(f"{n.name}_rdata{h}", buf.bits)
                halves.append(rdata)
                we = (host_we & sel & mine) | (dsel & dma_mine)
                bank = mk_bank(buf.bits, buf.depth) if k == 1 else mk_bank_rows(buf.bits, buf.depth, k)
                m.Instance(use(bank), f"u_bank_{buf.tensor}_{lane}_h{h}", ports=[
                    ("clk", clk), ("we", we if k == 1 else Repeat(we, k) & write_mask[buf.tensor]),
                    ("waddr", bank_addr(write_addr[buf.tensor], buf)),
                    ("wdata", Mux(dma_we, words[0], host_wdata) if k == 1 else
                     Cat(*reversed([Mux(dma_we, w, host_wdata[0:buf.bits]) for w in words]))),
                    ("raddr", bank_addr(inp[(n.name, "addr")], buf)), ("rdata", rdata),
                ])
            m.Assign(signal[(n.name, "data")](Mux(tag_in[buf.tensor][when[n.name]], halves[1], halves[0])))
        elif n.kind == "pin":
            m.Assign(signal[(n.name, "out")](inp[(n.name, "in")]))
        elif n.kind == "delay":
            last = shift_register(f"r_{n.name}", inp[(n.name, "in")], n.width, n.latency, n.spec(DelaySpec).enable)
            m.Assign(signal[(n.name, "out")](last))
        elif n.kind == "mux":  # operand source per dataflow
            select = n.spec(MuxSpec).select
            sel = inp[(n.name, "sel")]
            inputs = sorted({v for _, v in select})
            expr = inp[(n.name, f"i{inputs[-1]}")]
            for k in reversed(inputs[:-1]):
                hits = [hm.dataflows.index(df) for df, v in select if v == k]
                expr = Mux(df_is(sel, hits, hm.df_bits), inp[(n.name, f"i{k}")], expr)
            m.Assign(signal[(n.name, "out")](expr))
        elif n.kind == "fifo":  # delay link: run-time depth from the controller
            capacity = n.spec(FifoSpec).capacity
            depth = [("depth", inp[(n.name, "depth")])] if capacity > 1 else []
            m.Instance(use(mk_fifo(n.width, capacity, hm.fifo_depth_bits)), f"u_{n.name}", ports=[
                ("clk", clk), *depth, ("d", inp[(n.name, "in")]), ("q", signal[(n.name, "out")])])
        elif n.kind == "pick":  # FIFO word while its source step is inside the loop nest, else the bank
            m.Assign(signal[(n.name, "out")](Mux(inp[(n.name, "sel")], inp[(n.name, "i1")], inp[(n.name, "i0")])))
        elif n.kind == "gate":  # passes its input only in the listed dataflows, else zero
            cond = df_is(inp[(n.name, "sel")], [hm.dataflows.index(df) for df in n.spec(GateSpec).dataflows],
                         hm.df_bits)
            m.Assign(signal[(n.name, "out")](Mux(cond, inp[(n.name, "in")], Int(0, n.width, base=10))))
        elif n.kind == "mul":
            ports = [p for p in ("a", "b", "c") if (n.name, p) in inp]
            c_bits = _width_of(dag, n.name, "c") if "c" in ports else 0
            fu = FUS.get(n.spec(MulSpec).fu)
            mod = fu.make_mul(_width_of(dag, n.name, "a"), _width_of(dag, n.name, "b"), n.width, c_bits)
            m.Instance(use(mod), f"u_{n.name}", ports=[("clk", clk)] + [(p, inp[(n.name, p)]) for p in ports]
                       + [("p", signal[(n.name, "p")])])
        elif n.kind == "add":
            ins = sorted((e for e in dag.edges if e.dst == n.name), key=lambda e: (e.dst_port != "p", e.dst_port))
            mod = mk_add(tuple(e.width for e in ins), n.width)
            m.Instance(use(mod), f"u_{n.name}", ports=[("clk", clk)] + [
                (f"i{i}", inp[(n.name, e.dst_port)]) for i, e in enumerate(ins)] + [("s", signal[(n.name, "s")])])
        elif n.kind == "mac":
            mod = mk_mac(_width_of(dag, n.name, "a"), _width_of(dag, n.name, "b"), n.width)
            m.Instance(use(mod), f"u_{n.name}", ports=[
                ("clk", clk), ("first", inp[(n.name, "first")]), ("a", inp[(n.name, "a")]),
                ("b", inp[(n.name, "b")]), ("y", signal[(n.name, "y")])])
        elif n.kind == "acc":
            mod = mk_acc(_width_of(dag, n.name, "p"), n.width)
            m.Instance(use(mod), f"u_{n.name}", ports=[
                ("clk", clk), ("first", inp[(n.name, "first")]), ("p", inp[(n.name, "p")]),
                ("y", signal[(n.name, "y")])])
        elif n.kind == "write":
            port = n.spec(PortSpec)
            buf, lane = dag.buffer(port.tensor), port.lane
            # one cycle of read-modify-write: with ``acc`` a word adds to what the half holds
            # (a layer's reduction split over tiles accumulates in place)
            we, waddr, wdata = inp[(n.name, "we")], inp[(n.name, "addr")], inp[(n.name, "data")]
            we_q = m.Reg(f"{n.name}_we_q")
            addr_q = m.Reg(f"{n.name}_addr_q", buf.addr_bits)
            data_q = m.Reg(f"{n.name}_data_q", buf.bits)
            waddr = bank_addr(waddr, buf)
            m.Always(Posedge(clk))(we_q(we), addr_q(waddr), data_q(wdata))
            halves = []
            d = when[n.name]
            for h in (0, 1):
                mine = tag_out[d] if h else ~tag_out[d]
                mine_q = tag_out[d + 1] if h else ~tag_out[d + 1]
                dma_mine = dma_rhalf if h else ~dma_rhalf
                rdata = m.Wire(f"{n.name}_rdata{h}", buf.bits)
                halves.append(rdata)
                m.Instance(use(mk_bank(buf.bits, buf.depth)), f"u_bank_{buf.tensor}_{lane}_h{h}", ports=[
                    ("clk", clk), ("we", we_q & mine_q), ("waddr", addr_q),
                    ("wdata", Mux(tag_acc[d + 1], rdata + data_q, data_q)),
                    ("raddr", Mux(we & mine, waddr,
                                  Mux(dma_ren & dma_mine, bank_addr(dma_raddr, buf), bank_addr(rd_addr, buf)))),
                    ("rdata", rdata),
                ])
            rdata = m.Wire(f"{n.name}_rdata", buf.bits)
            m.Assign(rdata(Mux(out_half, halves[1], halves[0])))
            out_rdata.append((lane, rdata))
            word = m.Wire(f"{n.name}_dma_word", buf.bits)  # named: one row of 1024 lanes is one long line
            m.Assign(word(Mux(dma_rhalf, halves[1], halves[0])))
            dma_words.append((lane, word))
    if folded:  # lego_build.emit.fold
        names = ("clk", "dma_we", "dma_addr", "host_addr", "dma_row", "in_half", "dma_half", "host_tensor",
                 "host_lane", "host_we", "host_wdata", "dma_tensor", "dma_raddr", "rd_addr", "dma_rhalf", "dma_ren",
                 "out_half")
        banks = Banks(m, hm, dag, use, {name: m.find_identifier(name) for name in names}, inp, when, tag_in,
                      tag_out, tag_acc, unused, signal.get(("dfsel", "sel")))
        for t in hm.input_tensors:
            if t in folded:
                fold_input(banks, t, in_index[t], lambda node, expr: m.Assign(signal[(node, "data")](expr)))
        if hm.output_tensor in folded:
            fold_output(banks, out_rdata, dma_words)
    for j in range(1, hm.fill):  # slot j of the DMA row: as wide as the widest tensor of more than j rows
        used = max(hm.lanes[t] * hm.operand_bits for t in range(nin) if hm.rows_of(t) > j)
        if used < hm.in_row_bits:
            unused.append((dma_row[j * hm.in_row_bits + used:(j + 1) * hm.in_row_bits], hm.in_row_bits - used))
    if ("dfsel", "sel") in signal and not (df_read or any(e.src == "dfsel" for e in dag.edges)
                                           or (folded and banks.df_used)):
        # every dataflow reads its own ports (arch.broadcast=ports) and needs no select in the array
        unused.append((signal[("dfsel", "sel")], hm.df_bits))
    if unused:  # Verilator's lint ignores signals named *unused*
        bits = m.Wire("unused_addr_bits", sum(w for _, w in unused))
        m.Assign(bits(Cat(*[s for s, _ in unused])))
    dma_words.sort(key=lambda x: x[0])
    m.Assign(dma_rrow(Cat(*[w for _, w in reversed(dma_words)])))
    rd_lane_q = m.Reg("rd_lane_q", hm.lane_bits)
    m.Always(Posedge(clk))(rd_lane_q(rd_lane))
    out_rdata.sort(key=lambda x: x[0])
    result = out_rdata[-1][1]
    for lane, rdata in reversed(out_rdata[:-1]):
        result = Mux(rd_lane_q == Int(lane, hm.lane_bits, base=10), rdata, result)
    if hm.ppu:  # the output path: the word read goes through the PPU (one more cycle)
        word = m.Wire("rd_word", hm.out_bits)
        m.Assign(word(result))
        high = hm.cfg_addr_bits - 8
        lut_we = cfg_we & (cfg_addr[8:hm.cfg_addr_bits] == Int(hm.ppu_lut_base >> 8, high, base=10)) if high else cfg_we
        use(mk_table(*PPU_TABLE))  # the PPU's activation table (a macro of its own)
        m.Instance(use(mk_ppu(hm.out_bits)), "u_ppu", ports=[
            ("clk", clk), ("x", word), ("mode", ppu["mode"]), ("scale", ppu["scale"]), ("shift", ppu["shift"]),
            ("lut_we", lut_we), ("lut_addr", cfg_addr[0:8]), ("lut_data", cfg_wdata[0:8]), ("y", rd_data)])
    else:
        m.Assign(rd_data(result))
    return m, [subs[k] for k in sorted(subs)], hm


def _width_of(dag: DAG, node: str, port: str) -> int:
    (e,) = [e for e in dag.edges if e.dst == node and e.dst_port == port]
    return e.width
