"""Output bank ports of ``lego_top`` (:mod:`lego_build.emit.top`): a lane's two halves, written
by read-modify-write, read by the DMA and the host; a lane shared by the FUs of a column
(:func:`shared_port`, :mod:`lego_build.ir.outshare`)."""
from __future__ import annotations

from functools import reduce
from operator import or_

from veriloggen import Cat, Int, Mux, Posedge

from lego_build.emit.fold import df_is
from lego_build.ir import outshare
from lego_build.ir.dag import BufferSpec, Node, PortSpec
from rtl_templates_free import mk_bank, mk_rmw_pipe


def write_port(t, n: Node) -> None:
    """An output bank port: one cycle of read-modify-write (with ``acc`` a word adds to what the
    half holds: a layer's reduction split over tiles accumulates in place) into two halves, one
    accumulating while the DMA or the host reads the other; with ``L_v`` 3, five cycles
    (:func:`_pipelined`)."""
    if n.latency:
        return _pipelined(t, n)
    m, p = t.m, t.port
    port = n.spec(PortSpec)
    buf, lane = t.dag.buffer(port.tensor), port.lane
    we, waddr, wdata = t.inp[(n.name, "we")], t.inp[(n.name, "addr")], t.inp[(n.name, "data")]
    we_q = m.Reg(f"{n.name}_we_q")
    addr_q = m.Reg(f"{n.name}_addr_q", buf.addr_bits)
    data_q = m.Reg(f"{n.name}_data_q", buf.bits)
    waddr = t.bank_addr(waddr, buf)
    m.Always(Posedge(p["clk"]))(we_q(we), addr_q(waddr), data_q(wdata))
    halves = []
    d = t.when[n.name]
    for h in (0, 1):
        mine = t.tag_out[d] if h else ~t.tag_out[d]
        mine_q = t.tag_out[d + 1] if h else ~t.tag_out[d + 1]
        dma_mine = p["dma_rhalf"] if h else ~p["dma_rhalf"]
        rdata = m.Wire(f"{n.name}_rdata{h}", buf.bits)
        halves.append(rdata)
        m.Instance(t.use(mk_bank(buf.bits, buf.depth)), f"u_bank_{buf.tensor}_{lane}_h{h}", ports=[
            ("clk", p["clk"]), ("we", we_q & mine_q), ("waddr", addr_q),
            ("wdata", Mux(t.tag_acc[d + 1], rdata + data_q, data_q)),
            ("raddr", Mux(we & mine, waddr,
                          Mux(p["dma_ren"] & dma_mine, t.bank_addr(p["dma_raddr"], buf),
                              t.bank_addr(p["rd_addr"], buf)))),
            ("rdata", rdata),
        ])
    _read_words(t, n.name, lane, halves)


def _pipelined(t, n: Node) -> None:
    """The read-modify-write in five cycles (:func:`rtl_templates_free.mk_rmw_pipe`, from
    :mod:`lego_build.backend.passes.pipelined_rmw`): the bank is read in the request's cycle, the
    word registered in the next, the old word chosen in the third, the sum in the fourth, written
    back in the fifth; one adder for both halves."""
    m, p = t.m, t.port
    port = n.spec(PortSpec)
    buf, lane = t.dag.buffer(port.tensor), port.lane
    we, waddr = t.inp[(n.name, "we")], t.bank_addr(t.inp[(n.name, "addr")], buf)
    d = t.when[n.name] - n.latency  # D_v is the write's: the request comes L_v cycles before
    w_we = [m.Wire(f"{n.name}_w_we{h}") for h in (0, 1)]
    w_addr, wdata = m.Wire(f"{n.name}_w_addr", buf.addr_bits), m.Wire(f"{n.name}_wdata", buf.bits)
    halves = [m.Wire(f"{n.name}_rdata{h}", buf.bits) for h in (0, 1)]
    m.Instance(t.use(mk_rmw_pipe(buf.bits, buf.addr_bits)), f"u_rmw_{buf.tensor}_{lane}", ports=[
        ("clk", p["clk"]), ("we", we), ("addr", waddr), ("data", t.inp[(n.name, "data")]),
        ("half", t.tag_out[d + 1]), ("acc", t.tag_acc[d + 1]), ("rd0", halves[0]), ("rd1", halves[1]),
        ("w_we0", w_we[0]), ("w_we1", w_we[1]), ("w_addr", w_addr), ("wdata", wdata)])
    for h in (0, 1):
        mine = t.tag_out[d] if h else ~t.tag_out[d]
        dma_mine = p["dma_rhalf"] if h else ~p["dma_rhalf"]
        m.Instance(t.use(mk_bank(buf.bits, buf.depth)), f"u_bank_{buf.tensor}_{lane}_h{h}", ports=[
            ("clk", p["clk"]), ("we", w_we[h]), ("waddr", w_addr), ("wdata", wdata),
            ("raddr", Mux(we & mine, waddr,
                          Mux(p["dma_ren"] & dma_mine, t.bank_addr(p["dma_raddr"], buf),
                              t.bank_addr(p["rd_addr"], buf)))),
            ("rdata", halves[h]),
        ])
    _read_words(t, n.name, lane, halves)


def _read_words(t, name: str, lane: int, halves: list) -> None:
    """The lane's word for the host's reads and for the DMA's, each from the half it reads (with
    ``row_prefetch`` the DMA's choice is the memory system's: both halves' words)."""
    m, p, bits = t.m, t.port, halves[0].width
    rdata = m.Wire(f"{name}_rdata", bits)
    m.Assign(rdata(Mux(p["out_half"], halves[1], halves[0])))
    t.out_rdata.append((lane, rdata))
    if t.hm.row_prefetch:
        t.dma_words.append((lane, tuple(halves)))
        return
    word = m.Wire(f"{name}_dma_word", bits)  # named: one row of 1024 lanes is one long line
    m.Assign(word(Mux(p["dma_rhalf"], halves[1], halves[0])))
    t.dma_words.append((lane, word))


def _bank_row(t, n: Node, buf: BufferSpec, port: int):
    """A member's bank row, ``{a, slot}`` (:func:`lego_build.ir.outshare.physical`), from its logical
    address ``a``: per dataflow its slot and the slots' bits; one expression where every dataflow
    that uses the port agrees, else chosen by the dataflow select."""
    a, ab = t.inp[(n.name, "addr")], buf.addr_bits
    forms = {}
    for k, pack in enumerate(buf.packs):
        slot = outshare.slots(buf.share, pack)[port]
        if slot >= 0:
            forms.setdefault((outshare.shift(buf.share, pack), slot), []).append(k)
    rows = []
    for (sh, slot), dfs in forms.items():
        low = t.low_bits(a, ab - sh) if ab > sh else None
        rows.append((Cat(low, Int(slot, sh, base=10)) if sh and low is not None else
                     low if low is not None else Int(slot, ab, base=10), dfs))
    expr = rows[-1][0]
    for row, dfs in reversed(rows[:-1]):
        expr = Mux(df_is(t.signal[("dfsel", "sel")], dfs, t.hm.df_bits), row, expr)
    return expr


def shared_port(t, buf: BufferSpec, lane: int, nodes: list[Node]) -> None:
    """A shared output lane (:mod:`lego_build.ir.outshare`): its members' write requests, one-hot
    by their commits (each member's request in its own cycle, ``D - L_v``), merged by an AND-OR
    (enable, bank row, word, and the half and accumulate flags of the member's run), then one
    read-modify-write into the lane's two halves: in one cycle (the merged request registered,
    :func:`write_port`'s form) or, the merged request registered, in five
    (:func:`rtl_templates_free.primitives.mk_rmw_pipe`)."""
    m, p = t.m, t.port
    ab, bits, name = buf.addr_bits, buf.bits, f"sh_{buf.tensor}_{lane}"

    def merged(field: str, width: int, terms: list):
        w = m.Wire(f"{name}_{field}", width)
        m.Assign(w(reduce(or_, terms)))
        return w

    wes = [t.inp[(n.name, "we")] for n in nodes]
    at = [t.when[n.name] - n.latency for n in nodes]  # each member's request cycle
    we = merged("we", 1, wes)
    addr = merged("addr", ab, [Mux(w, _bank_row(t, n, buf, n.spec(PortSpec).lane), Int(0, ab, base=10))
                               for w, n in zip(wes, nodes)])
    data = merged("data", bits, [Mux(w, t.inp[(n.name, "data")], Int(0, bits, base=10)) for w, n in zip(wes, nodes)])
    half = merged("half", 1, [w & t.tag_out[d] for w, d in zip(wes, at)])
    acc = merged("acc", 1, [w & t.tag_acc[d] for w, d in zip(wes, at)])
    half_q, acc_q = m.Reg(f"{name}_half_q"), m.Reg(f"{name}_acc_q")
    regs = [half_q(half), acc_q(acc)]
    halves = [m.Wire(f"{name}_rdata{h}", bits) for h in (0, 1)]
    if nodes[0].latency:  # the pipelined read-modify-write (lego_build.backend.passes.pipelined_rmw)
        # the merged request registered before it reads the banks (a cycle more of L_v: the AND-OR
        # in front of the block RAMs' read address was the GW1NR-9's worst path, 125.5 MHz)
        req = [m.Reg(f"{name}_{f}_r", w) for f, w in (("we", 1), ("addr", ab), ("data", bits), ("half", 1), ("acc", 1))]
        # and, per half, whether it reads that half and the address it reads (0 where it does not):
        # each bank's read address multiplexer its own select and address, placed by it, the
        # request's own address the read-modify-write's alone (the GW1NR-9's worst paths ran from
        # one select for both halves, then from the address to the forwarding's comparators)
        reads = [m.Reg(f"{name}_rsel{h}") for h in (0, 1)]
        read_addr = [m.Reg(f"{name}_raddr{h}", ab) for h in (0, 1)]
        regs = [half_q(req[3]), acc_q(req[4]), *[r(v) for r, v in zip(req, (we, addr, data, half, acc))]]
        for h, sel in enumerate((we & ~half, we & half)):
            regs += [reads[h](sel), read_addr[h](Mux(sel, addr, Int(0, ab, base=10)))]
        we, addr, data, half = req[:4]
        w_we = [m.Wire(f"{name}_w_we{h}") for h in (0, 1)]
        w_addr, wdata = m.Wire(f"{name}_w_addr", ab), m.Wire(f"{name}_wdata", bits)
        m.Instance(t.use(mk_rmw_pipe(bits, ab)), f"u_rmw_{buf.tensor}_{lane}", ports=[
            ("clk", p["clk"]), ("we", we), ("addr", addr), ("data", data), ("half", half_q), ("acc", acc_q),
            ("rd0", halves[0]), ("rd1", halves[1]), ("w_we0", w_we[0]), ("w_we1", w_we[1]), ("w_addr", w_addr),
            ("wdata", wdata)])
        writes = [(w_we[h], w_addr, wdata) for h in (0, 1)]
    else:
        we_q, addr_q, data_q = m.Reg(f"{name}_we_q"), m.Reg(f"{name}_addr_q", ab), m.Reg(f"{name}_data_q", bits)
        regs += [we_q(we), addr_q(addr), data_q(data)]
        writes = [(we_q & (half_q if h else ~half_q), addr_q, Mux(acc_q, halves[h] + data_q, data_q)) for h in (0, 1)]
    m.Always(Posedge(p["clk"]))(*regs)
    for h, (w_en, w_addr, wdata) in enumerate(writes):
        mine, mine_addr = (reads[h], read_addr[h]) if nodes[0].latency else (we & (half if h else ~half), addr)
        dma_mine = p["dma_rhalf"] if h else ~p["dma_rhalf"]
        m.Instance(t.use(mk_bank(bits, buf.depth)), f"u_bank_{buf.tensor}_{lane}_h{h}", ports=[
            ("clk", p["clk"]), ("we", w_en), ("waddr", w_addr), ("wdata", wdata),
            ("raddr", Mux(mine, mine_addr, Mux(p["dma_ren"] & dma_mine, t.bank_addr(p["dma_raddr"], buf),
                                              t.bank_addr(p["rd_addr"], buf)))),
            ("rdata", halves[h]),
        ])
    _read_words(t, name, lane, halves)
