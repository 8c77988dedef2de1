"""Folded banks in ``lego_top``: the banks a dataflow leaves idle deepen the lanes it uses.

Under each dataflow, bank ``j`` of a folding tensor is slice ``s`` of a used lane ``u``
(:func:`lego_build.ir.fold.fold_groups`), or idle. Every port keeps a lane's *logical*
address ``a``: slice ``a mod G`` (the low bits) holds the word at row ``a div G``. So

* an input bank is written by a DMA row (lane ``u``'s word) or a host word to lane ``u`` whose
  address's slice is ``s``, and read at lane ``u``'s address; lane ``u``'s word is its slice's
  bank output, picked by the address's low bits registered with the read (latency 1);
* an output bank takes lane ``u``'s writes and read-modify-write reads whose address's slice
  is ``s``; the DMA's and the host's reads of lane ``u`` pick the slice of their address.

The selects are per dataflow (``dfsel``): one multiplexer input per distinct source.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from veriloggen import Int, Module, Mux, Posedge

from lego_build.ir.dag import DAG, BufferSpec, PortSpec
from lego_build.ir.fold import fold_factor, fold_groups
from lego_build.ir.host import HostMap
from rtl_templates_free import mk_bank, mk_rmw

Role = tuple[int, int, int]  # (used lane, slice, slice bits)


def df_is(sel, indices, bits: int):
    """``sel`` (the dataflow select) is one of ``indices``."""
    cond = None
    for d in indices:
        term = sel == Int(d, bits, base=10)
        cond = term if cond is None else (cond | term)
    return cond


@dataclass
class Banks:
    """What ``mk_top`` has made that the folded banks connect to."""

    m: Module
    hm: HostMap
    dag: DAG
    use: Callable  # registers a submodule, returns its stub
    port: dict  # lego_top's ports by name
    inp: dict  # (node, port) -> the signal driving it
    when: dict  # node -> its scheduled cycle
    tag_in: dict  # input tensor -> its half tag, delayed per cycle
    tag_out: list
    tag_acc: list
    unused: list  # (bits, width) that no logic reads
    df: object = None  # the running dataflow's select (``dfsel``)
    cut: dict = field(default_factory=dict)  # (signal, width) -> its low bits as a wire
    df_used: bool = False  # some bank select depends on the dataflow

    def logical(self, sig, bits: int):
        """``sig`` (the address generators' width) cut to ``bits``, the rest marked unused."""
        if bits == self.hm.addr_bits:
            return sig
        key = (sig.name, bits)
        if key not in self.cut:
            self.unused.append((sig[bits:self.hm.addr_bits], self.hm.addr_bits - bits))
            self.cut[key] = self.m.Wire(f"{sig.name}_l{bits}", bits)
            self.m.Assign(self.cut[key](sig[0:bits]))
        return self.cut[key]

    def per_df(self, keyed: list[tuple[object, Callable]]):
        """``keyed[d] = (key, make)``: ``make()`` under dataflow ``d``, one input per distinct key."""
        groups: dict = {}
        for d, (key, make) in enumerate(keyed):
            groups.setdefault(key, (make, []))[1].append(d)
        order = list(groups.values())
        expr = order[-1][0]()
        self.df_used |= len(order) > 1
        for make, dfs in reversed(order[:-1]):
            expr = Mux(df_is(self.df, dfs, self.hm.df_bits), make(), expr)
        return expr


def roles(buf: BufferSpec) -> list[dict[int, Role]]:
    """Per dataflow: bank lane -> (used lane, slice, slice bits); idle banks are absent."""
    out = []
    for pack in buf.packs:
        g = fold_factor(pack).bit_length() - 1
        out.append({j: (u, s, g) for u, banks in fold_groups(pack).items() for s, j in enumerate(banks)})
    return out


def _slice_bits(role: list[dict[int, Role]], u: int) -> int:
    """The most slice bits lane ``u`` uses as a used lane under any dataflow."""
    return max((r[u][2] for r in role if r.get(u, (None,))[0] == u), default=0)


def _select(bits, options: list):
    """``options[v]`` for the value ``v`` of ``bits``: a binary tree of multiplexers."""
    level, b = list(options), 0
    while len(level) > 1:
        level = [Mux(bits[b], level[i + 1], level[i]) for i in range(0, len(level), 2)]
        b += 1
    return level[0]


def _lane_word(role: list[dict[int, Role]], u: int, word: Callable, slice_q, c: Banks):
    """Lane ``u``'s word under the running dataflow: its slice's bank output, or its own bank's."""
    def banks(r) -> tuple[int, ...]:
        """Lane ``u``'s banks by slice under a dataflow (its own bank alone where it does not fold);
        two dataflows share a multiplexer input only when these are the same banks."""
        if r.get(u, (None,))[0] != u or not r[u][2]:
            return (u,)
        return tuple(j for _, j in sorted((s, j) for j, (v, s, _) in r.items() if v == u))

    def under(group):
        return word(u) if len(group) == 1 else _select(slice_q, [word(j) for j in group])
    return c.per_df([(banks(r), lambda g=banks(r): under(g)) for r in role])


def fold_input(c: Banks, t: str, ti: int, out: Callable) -> None:
    """Input tensor ``t``'s (index ``ti``) banks; ``out(lane, expr)`` drives a read node's data."""
    m, hm, p = c.m, c.hm, c.port
    buf = c.dag.buffer(t)
    ab, role = buf.addr_bits, roles(buf)
    reads = {n.spec(PortSpec).lane: n for n in c.dag.nodes if n.kind == "read" and n.spec(PortSpec).tensor == t}
    index = Int(ti, hm.tensor_bits, base=10)
    waddr = m.Wire(f"bank_waddr_{t}", hm.addr_bits)
    m.Assign(waddr(Mux(p["dma_wsel"], p["dma_addr"], p["host_addr"])))
    wl = c.logical(waddr, buf.logical_bits)
    words = [p["dma_row"][u * hm.operand_bits:u * hm.operand_bits + buf.bits] for u in range(buf.lanes)]
    ih = p["in_half"][ti] if len(hm.input_tensors) > 1 else p["in_half"]
    bits = {u: _slice_bits(role, u) for u in range(buf.lanes)}
    raddr = {u: c.logical(c.inp[(reads[u].name, "addr")], ab + bits[u]) for u in range(buf.lanes)}
    slice_q = {}
    for u in (u for u in range(buf.lanes) if bits[u]):  # the slice read, when its word leaves the bank
        q = raddr[u][0:bits[u]]
        for k in range(reads[u].latency):
            slice_q[u] = m.Reg(f"{reads[u].name}_slice_q" + (f"{k}" if k else ""), bits[u])
            m.Always(Posedge(p["clk"]))(slice_q[u](q))
            q = slice_q[u]
    outreg = max(n.latency for n in reads.values()) > 1  # registered_reads: each bank's word registered once more

    def write_enable(u: int, s: int, g: int, h: int):
        mine, dma_mine = (ih, p["dma_half"]) if h else (~ih, ~p["dma_half"])
        lane = (p["host_tensor"] == index) & (p["host_lane"] == Int(u, hm.lane_bits, base=10))
        we = (p["host_we"] & lane & mine) | (p["dma_we"] & (p["dma_tensor"] == index) & dma_mine)
        return we & (wl[0:g] == Int(s, g, base=10)) if g else we

    halves = {}
    for j in range(buf.lanes):
        own = (j, 0, 0)  # an idle bank: never written, read at its own lane's address
        for h in (0, 1):
            halves[(j, h)] = m.Wire(f"rd_{t}_{j}_rdata{h}", buf.bits)
            we = c.per_df([(r[j], lambda v=r[j]: write_enable(*v, h)) if j in r else (None, lambda: Int(0, 1))
                           for r in role])
            wdata = c.per_df([(r.get(j, own)[0],
                               lambda u=r.get(j, own)[0]: Mux(p["dma_wsel"], words[u], p["host_wdata"]))
                              for r in role])
            row_w = c.per_df([(r.get(j, own)[2], lambda g=r.get(j, own)[2]: wl[g:g + ab]) for r in role])
            row_r = c.per_df([(r.get(j, own)[::2], lambda u=r.get(j, own)[0], g=r.get(j, own)[2]: raddr[u][g:g + ab])
                              for r in role])
            m.Instance(c.use(mk_bank(buf.bits, buf.depth, outreg)), f"u_bank_{t}_{j}_h{h}", ports=[
                ("clk", p["clk"]), ("we", we), ("waddr", row_w), ("wdata", wdata), ("raddr", row_r),
                ("rdata", halves[(j, h)])])
    for u, n in reads.items():
        tag = c.tag_in[t][c.when[n.name]]
        out(n.name, _lane_word(role, u, lambda j, tag=tag: Mux(tag, halves[(j, 1)], halves[(j, 0)]),
                               slice_q.get(u), c))


def fold_output(c: Banks, out_rdata: list, dma_words: list) -> None:
    """The output tensor's banks; appends each lane's host-read and DMA-read word."""
    m, hm, p = c.m, c.hm, c.port
    buf = c.dag.buffer(hm.output_tensor)
    ab, role = buf.addr_bits, roles(buf)
    gmax = buf.logical_bits - ab
    writes = {n.spec(PortSpec).lane: n for n in c.dag.nodes if n.kind == "write"}
    lane = {}
    for u, n in writes.items():
        g = _slice_bits(role, u)
        waddr = c.logical(c.inp[(n.name, "addr")], ab + g)
        we_q, addr_q, data_q = m.Reg(f"{n.name}_we_q"), m.Reg(f"{n.name}_addr_q", ab + g), \
            m.Reg(f"{n.name}_data_q", buf.bits)
        m.Always(Posedge(p["clk"]))(we_q(c.inp[(n.name, "we")]), addr_q(waddr), data_q(c.inp[(n.name, "data")]))
        lane[u] = (c.inp[(n.name, "we")], waddr, we_q, addr_q, data_q, c.when[n.name])
    dma_l, rd_l = c.logical(p["dma_raddr"], buf.logical_bits), c.logical(p["rd_addr"], buf.logical_bits)
    dma_slice, rd_slice = m.Reg("dma_rslice_q", gmax), m.Reg("rd_slice_q", gmax)
    m.Always(Posedge(p["clk"]))(dma_slice(dma_l[0:gmax]), rd_slice(rd_l[0:gmax]))

    def ports(u: int, s: int, g: int, h: int) -> tuple:
        """(we, waddr, raddr) of a bank that is slice ``s`` of lane ``u``, half ``h``."""
        we, waddr, we_q, addr_q, data_q, d = lane[u]
        mine, mine_q = (c.tag_out[d], c.tag_out[d + 1]) if h else (~c.tag_out[d], ~c.tag_out[d + 1])
        dma_mine = p["dma_rhalf"] if h else ~p["dma_rhalf"]

        def hit(a):
            return a[0:g] == Int(s, g, base=10) if g else Int(1, 1)
        return (we_q & mine_q & hit(addr_q), addr_q[g:g + ab],
                Mux(we & mine & hit(waddr), waddr[g:g + ab],
                    Mux(p["dma_ren"] & dma_mine, dma_l[g:g + ab], rd_l[g:g + ab])))

    def written(j: int, halves: tuple):
        """What bank ``j`` writes: one read-modify-write adder per bank, shared by its two halves
        and every dataflow (issue 44: one per half and per writing lane made 992 32-bit adders in
        lego_mnicoc's 16 x 16 array, 256 now). Only the half that the writing lane's output tag names is
        written, so the sum reads that half; a dataflow that leaves the bank idle writes nothing
        and shares another's multiplexer input."""
        users = [r[j][0] if j in r else None for r in role]
        busy = next(u for u in users if u is not None)
        users = [busy if u is None else u for u in users]

        def by_lane(make):
            return c.per_df([(u, lambda u=u: make(*lane[u][4:])) for u in users])
        addend = m.Wire(f"wr_{hm.output_tensor}_{j}_addend", buf.bits)
        m.Assign(addend(by_lane(lambda data_q, d: data_q)))
        out = m.Wire(f"wr_{hm.output_tensor}_{j}_wdata", buf.bits)
        m.Instance(c.use(mk_rmw(buf.bits)), f"u_rmw_{hm.output_tensor}_{j}", ports=[
            ("acc", by_lane(lambda data_q, d: c.tag_acc[d + 1])), ("half", by_lane(lambda data_q, d: c.tag_out[d + 1])),
            ("rd0", halves[0]), ("rd1", halves[1]), ("addend", addend), ("wdata", out)])
        return out

    halves = {}
    for j in range(buf.lanes):
        for h in (0, 1):
            halves[(j, h)] = m.Wire(f"wr_{hm.output_tensor}_{j}_rdata{h}", buf.bits)
    for j in range(buf.lanes):
        wdata = written(j, (halves[(j, 0)], halves[(j, 1)])) if any(j in r for r in role) else Int(0, buf.bits)
        for h in (0, 1):
            dma_mine = p["dma_rhalf"] if h else ~p["dma_rhalf"]
            idle = (Int(0, 1), dma_l[0:ab], Mux(p["dma_ren"] & dma_mine, dma_l[0:ab], rd_l[0:ab]))

            def pick(k, j=j, h=h, idle=idle):  # a bank no lane writes under a dataflow: idle
                return c.per_df([(r[j], lambda v=r[j]: ports(*v, h)[k]) if j in r else (None, lambda: idle[k])
                                 for r in role])
            m.Instance(c.use(mk_bank(buf.bits, buf.depth)), f"u_bank_{hm.output_tensor}_{j}_h{h}", ports=[
                ("clk", p["clk"]), ("we", pick(0)), ("waddr", pick(1)), ("wdata", wdata), ("raddr", pick(2)),
                ("rdata", halves[(j, h)])])
    for u, n in writes.items():
        for name, half, slice_q, into in ((f"{n.name}_rdata", p["out_half"], rd_slice, out_rdata),
                                          (f"{n.name}_dma_word", p["dma_rhalf"], dma_slice, dma_words)):
            if into is dma_words and hm.row_prefetch:  # each half's word (lego_build.emit.top._read_path)
                pair = tuple(m.Wire(f"{name}{h}", buf.bits) for h in (0, 1))
                for h in (0, 1):
                    m.Assign(pair[h](_lane_word(role, u, lambda j, h=h: halves[(j, h)], slice_q, c)))
                into.append((u, pair))
                continue
            w = m.Wire(name, buf.bits)
            m.Assign(w(_lane_word(role, u, lambda j, half=half: Mux(half, halves[(j, 1)], halves[(j, 0)]),
                                  slice_q, c)))
            into.append((u, w))
