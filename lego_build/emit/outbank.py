"""Output bank ports of ``lego_top`` (:mod:`lego_build.emit.top`): a lane's two halves, written
by read-modify-write, read by the DMA and the host."""
from __future__ import annotations

from veriloggen import Mux, Posedge

from lego_build.ir.dag import Node, PortSpec
from rtl_templates_free import mk_bank, mk_rmw_pipe


def write_port(t, n: Node) -> None:
    """An output bank port: one cycle of read-modify-write (with ``acc`` a word adds to what the
    half holds: a layer's reduction split over tiles accumulates in place) into two halves, one
    accumulating while the DMA or the host reads the other; with ``L_v`` 1, three cycles
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
    _read_words(t, n, lane, halves)


def _pipelined(t, n: Node) -> None:
    """The read-modify-write in three cycles (:func:`rtl_templates_free.mk_rmw_pipe`, from
    :mod:`lego_build.backend.passes.pipelined_rmw`): the bank is read in the request's cycle, the
    word registered in the next, written back in the one after; one adder for both halves."""
    m, p = t.m, t.port
    port = n.spec(PortSpec)
    buf, lane = t.dag.buffer(port.tensor), port.lane
    we, waddr = t.inp[(n.name, "we")], t.bank_addr(t.inp[(n.name, "addr")], buf)
    d = t.when[n.name] - 1  # D_v is the write's: the request comes L_v = 1 cycle before
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
    _read_words(t, n, lane, halves)


def _read_words(t, n: Node, lane: int, halves: list) -> None:
    """The lane's word for the host's reads and for the DMA's, each from the half it reads (with
    ``row_prefetch`` the DMA's choice is the memory system's: both halves' words)."""
    m, p, bits = t.m, t.port, halves[0].width
    rdata = m.Wire(f"{n.name}_rdata", bits)
    m.Assign(rdata(Mux(p["out_half"], halves[1], halves[0])))
    t.out_rdata.append((lane, rdata))
    if t.hm.row_prefetch:
        t.dma_words.append((lane, tuple(halves)))
        return
    word = m.Wire(f"{n.name}_dma_word", bits)  # named: one row of 1024 lanes is one long line
    m.Assign(word(Mux(p["dma_rhalf"], halves[1], halves[0])))
    t.dma_words.append((lane, word))
