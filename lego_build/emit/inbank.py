"""Input bank ports of ``lego_top`` (:mod:`lego_build.emit.top`): a lane's two halves (or, with
``merged_halves``, one memory holding both), written by the DMA's rows or the host's words, read
by the array."""
from __future__ import annotations

from veriloggen import Cat, Int, Mux, Repeat

from lego_build.ir.dag import DAG, Node, PortSpec
from rtl_templates_free import mk_bank, mk_bank_rows


def _write_port(t, tensor: str, k: int) -> None:
    """An input tensor's bank write address (the DMA's or the host's) and, for ``k`` rows per
    write, which sub-banks a write fills: the DMA's rows, or the host word's."""
    m, p = t.m, t.port
    t.write_addr[tensor] = m.Wire(f"bank_waddr_{tensor}", t.hm.addr_bits)
    m.Assign(t.write_addr[tensor](Mux(p["dma_wsel"], p["dma_addr"], p["host_addr"])))
    if k > 1:
        lk = k.bit_length() - 1
        onehot = Cat(*reversed([p["host_addr"][0:lk] == Int(j, lk, base=10) for j in range(k)]))
        t.write_mask[tensor] = m.Wire(f"bank_wmask_{tensor}", k)
        m.Assign(t.write_mask[tensor](Mux(p["dma_wsel"], p["dma_mask"][0:k], onehot)))


def read_port(t, n: Node) -> None:
    """An input bank port: two halves (ping-pong: the array reads its half of the tensor while
    the DMA fills the other), written by the DMA's rows or the host's words. The word leaves at
    the node's ``D_v``, ``L_v`` cycles after its address: 2 registers it in the bank
    (:mod:`~lego_build.backend.passes.registered_reads`)."""
    m, hm, p = t.m, t.hm, t.port
    port = n.spec(PortSpec)
    buf, lane = t.dag.buffer(port.tensor), port.lane
    ti = t.in_index[buf.tensor]
    index = Int(ti, hm.tensor_bits, base=10)
    sel = (p["host_tensor"] == index) & (p["host_lane"] == Int(lane, hm.lane_bits, base=10))
    dsel = p["dma_we"] & (p["dma_tensor"] == index)
    k = hm.rows_of(ti)
    words = [p["dma_row"][j * hm.in_row_bits + lane * hm.operand_bits:
                          j * hm.in_row_bits + lane * hm.operand_bits + buf.bits] for j in range(k)]
    if buf.tensor not in t.write_addr:
        _write_port(t, buf.tensor, k)
    ih = p["in_half"][ti] if len(hm.input_tensors) > 1 else p["in_half"]
    if merged(t.dag, buf.tensor):
        return _merged_read(t, n, ih, sel, dsel, words, k)
    halves = []
    for h in (0, 1):
        mine = ih if h else ~ih
        dma_mine = p["dma_half"] if h else ~p["dma_half"]
        rdata = m.Wire(f"{n.name}_rdata{h}", buf.bits)
        halves.append(rdata)
        we = (p["host_we"] & sel & mine) | (dsel & dma_mine)
        outreg = n.latency > 1
        bank = mk_bank(buf.bits, buf.depth, outreg) if k == 1 else mk_bank_rows(buf.bits, buf.depth, k, outreg)
        m.Instance(t.use(bank), f"u_bank_{buf.tensor}_{lane}_h{h}", ports=[
            ("clk", p["clk"]), ("we", we if k == 1 else Repeat(we, k) & t.write_mask[buf.tensor]),
            ("waddr", t.bank_addr(t.write_addr[buf.tensor], buf)),
            ("wdata", Mux(p["dma_wsel"], words[0], p["host_wdata"]) if k == 1 else
             Cat(*reversed([Mux(p["dma_wsel"], w, p["host_wdata"][0:buf.bits]) for w in words]))),
            ("raddr", t.bank_addr(t.inp[(n.name, "addr")], buf)), ("rdata", rdata),
        ])
    m.Assign(t.signal[(n.name, "data")](Mux(t.tag_in[buf.tensor][t.when[n.name]], halves[1], halves[0])))


def merged(dag: DAG, tensor: str) -> bool:
    """Whether ``tensor``'s banks hold both halves in one memory: ``merged_halves`` ran and they do
    not fold (:mod:`lego_build.backend.passes.merged_halves`)."""
    buf = dag.buffer(tensor)
    return "merged_halves" in dag.passes and buf.role == "in" and buf.logical_bits == buf.addr_bits


def _merged_read(t, n: Node, ih, sel, dsel, words: list, k: int) -> None:
    """``merged_halves`` (:mod:`lego_build.backend.passes.merged_halves`): the two halves one memory
    of twice the depth, each half a power of two deep, the half its address's top bit: the read's
    the run's tag at its address's cycle (``L_v`` before its word), the write's the DMA's half or
    the host's (``in_half``); the word leaves the memory with no choice behind it."""
    m, p = t.m, t.port
    buf = t.dag.buffer(n.spec(PortSpec).tensor)
    lane = n.spec(PortSpec).lane
    at = t.when[n.name] - n.latency
    assert at >= 0, (n.name, t.when[n.name], n.latency)
    depth = 2 << buf.addr_bits  # both halves, each as deep as its address reaches
    whalf = Mux(p["dma_wsel"], p["dma_half"], ih)
    we = (p["host_we"] & sel) | dsel
    outreg = n.latency > 1
    bank = mk_bank(buf.bits, depth, outreg) if k == 1 else mk_bank_rows(buf.bits, depth, k, outreg)
    m.Instance(t.use(bank), f"u_bank_{buf.tensor}_{lane}", ports=[
        ("clk", p["clk"]), ("we", we if k == 1 else Repeat(we, k) & t.write_mask[buf.tensor]),
        ("waddr", Cat(whalf, t.bank_addr(t.write_addr[buf.tensor], buf))),
        ("wdata", Mux(p["dma_wsel"], words[0], p["host_wdata"]) if k == 1 else
         Cat(*reversed([Mux(p["dma_wsel"], w, p["host_wdata"][0:buf.bits]) for w in words]))),
        ("raddr", Cat(t.tag_in[buf.tensor][at], t.bank_addr(t.inp[(n.name, "addr")], buf))),
        ("rdata", t.signal[(n.name, "data")]),
    ])
