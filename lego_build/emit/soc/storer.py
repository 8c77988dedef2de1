"""The DMA's write engine of ``lego_soc``: the finished output half's rows back to memory.

The address channel (:func:`_address_side`) walks the output tile's runs, bursts split at 256
beats and 4 KB boundaries, their lengths queued for WLAST; the bank side
(:func:`_bank_reads`) reads one row per cycle from the output half being written back into a
two-row queue; the data side (:func:`_beat_data`) sends each beat's words through the PPU
(:func:`lego_build.emit.soc.ppu.ppu_beat`: one requantise-and-ReLU lane per word of a beat,
one activation table they share, configured with the array's PPU registers), so a layer's
results reach memory post-processed; they stay one word each, sign-extended. One AXI ID (0);
an error response or a foreign ID sets STATUS bit 2.
"""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge

from lego_build.emit.soc.common import ADDR, Ctx, ndf, num, per_df, pick, wire
from lego_build.emit.soc.ppu import ppu_beat
from lego_build.emit.soc.walkers import address_channel, burst_geometry, issuer, walker
from lego_build.ir.host import clog2

LOW = 12  # the DRAM address bits a narrow row's byte lane is taken from
QUEUE = 4  # burst lengths the address channel may run ahead of the data


def _address_side(c: Ctx, t: int, runs_last: list, run_beats, size, beat) -> dict:
    """AW: runs of the output tile's rows; burst lengths queue for WLAST."""
    m, w, cw = c.m, c.w, c.hm.counter_bits
    a = {"on": m.Reg("aw_on"), "restart": m.Reg("aw_restart")}
    aw_step, aw_start = m.Wire("aww_step"), m.Wire("aww_start")
    _, (aw_walk,), aw_walk_last = walker(m, c.clk, "aww", runs_last, cw, [(ADDR, w["st_base"], c.regs["row"][t])],
                                         aw_start, aw_step)
    a["walk_last"] = aw_walk_last
    a["first"], a["addr_r"], a["rem_r"], addr, rem, piece, alen, pbytes = issuer(c, "aw", aw_walk, run_beats, beat)
    a.update(addr=addr, rem=rem, piece=piece, alen=alen, pbytes=pbytes)
    a["q"] = [m.Reg(f"wlen_q{k}", 8) for k in range(QUEUE)]
    a["q_wr"], a["q_rd"], a["q_n"] = m.Reg("wlen_wr", 2), m.Reg("wlen_rd", 2), m.Reg("wlen_n", 3)
    a["hs"], a["run_end"] = address_channel(c, "aw", a["on"] & ~a["restart"] & (a["q_n"] < num(QUEUE, 3)),
                                            aw_walk_last, aw_step, aw_start, a["restart"], (addr, rem, piece, alen),
                                            size)
    return a


def _bank_reads(c: Ctx, t: int, rows_last: list) -> dict:
    """Rows out of the bank half (read latency 1) into a two-row queue, each with the low bits
    of its DRAM address."""
    m, hm, r, w, core = c.m, c.hm, c.regs, c.w, c.core
    cw, aw = hm.counter_bits, hm.addr_bits
    b = {"on": m.Reg("rr_on"), "restart": m.Reg("rr_restart"), "pend": m.Reg("rr_pend")}
    rr_step, rr_start = m.Wire("rrw_step"), m.Wire("rrw_start")
    _, (bank_addr, b["dram_low"]), b["last"] = walker(
        m, c.clk, "rrw", rows_last, cw,
        [(aw, num(0, aw), r["bank"][t]), (LOW, w["st_base"][0:LOW], [x[0:LOW] for x in r["row"][t]])],
        rr_start, rr_step)
    b["rowq"] = [m.Reg(f"wrow_q{k}", hm.out_row_bits) for k in range(2)]
    b["offq"] = [m.Reg(f"woff_q{k}", LOW) for k in range(2)]
    b["pend_off"] = m.Reg("rr_pend_off", LOW)
    b["wr"], b["rd"], b["n"] = m.Reg("wrow_wr"), m.Reg("wrow_rd"), m.Reg("wrow_n", 2)
    issue = b["issue"] = m.Wire("rr_issue")
    m.Assign(issue(b["on"] & ~b["restart"] & ((b["n"] + Cat(num(0, 1), b["pend"])) < num(2, 2))))
    m.Assign(rr_step(issue & ~b["last"]))
    m.Assign(rr_start(b["restart"]))
    m.Assign(core["dma_raddr"](bank_addr))
    m.Assign(core["dma_rhalf"](w["st_half"]))
    m.Assign(core["dma_ren"](b["on"]))
    return b


def _wide_beat(c: Ctx, t: int, values: list, w_beat, bi: int) -> tuple:
    """A row of a bus width or more: its words (every lane, or under a dataflow that packs the row
    the first lane of each distinct word, :meth:`SocMap.lane_of`, one multiplexer per word over
    the dataflows), a beat's worth at a time through the PPU; beats past the words are zero.
    Returns (data, strobes, the beat ends the row)."""
    m, sm, ob = c.m, c.sm, c.hm.out_bits
    bw, bb, wb = sm.bus_bits, sm.bus_bytes, sm.word_bytes[t]
    per_beat = min(sm.slot_bytes[t], bb) // wb  # lanes in one beat: the PPU's lanes
    firsts = [sm.lane_of(t, d) for d in range(ndf(c))]
    nwords = max(len(f) for f in firsts)
    packed = []
    for p in range(nwords):
        opts = [f[p] if p < len(f) else -1 for f in firsts]
        packed.append(values[opts[0]] if len(set(opts)) == 1 else
                      per_df(c, [values[x] if x >= 0 else num(0, ob) for x in opts]))
    referenced = {x for f in firsts for x in f}
    c.unused += [(values[i], ob) for i in range(sm.lanes[t]) if i not in referenced]
    nbs = [max(1, sm.slot(t, d) // bb) for d in range(ndf(c))]
    reals = [-(-len(f) // per_beat) for f in firsts]  # beats that hold words (the rest is padding)
    nb_real = max(reals)
    chunks = [packed[k * per_beat:(k + 1) * per_beat] for k in range(nb_real)]
    if nb_real > 1:
        sel = [pick(w_beat, bi, [ch[i] if i < len(ch) else num(0, ob) for ch in chunks]) for i in range(per_beat)]
        sel = [wire(m, f"w_lane{i}", ob, x) for i, x in enumerate(sel)]
    else:
        sel = chunks[0]
    words = ppu_beat(c, "w", sel, ob, wb * 8)
    used = Cat(*reversed(words))
    pad_bits = bw - len(words) * wb * 8
    data = Cat(num(0, pad_bits), used) if pad_bits else used
    pads = [r < n for r, n in zip(reals, nbs)]
    beat = Mux(w_beat < per_df(c, [num(r, bi) for r in reals]), data, num(0, bw)) if any(pads) else data
    row_last = per_df(c, [w_beat == num(n - 1, bi) for n in nbs]) if len(set(nbs)) > 1 else \
        w_beat == num(nbs[0] - 1, bi)
    return beat, num((1 << bb) - 1, bb), row_last


def _narrow_beat(c: Ctx, t: int, values: list, head_off) -> tuple:
    """A row narrower than the bus: its words through the PPU, shifted to the row's byte lanes.
    Returns (data, strobes, the beat ends the row)."""
    m, sm = c.m, c.sm
    bw, bb, wb, slot = sm.bus_bits, sm.bus_bytes, sm.word_bytes[t], sm.slot_bytes[t]
    words = ppu_beat(c, "w", values, c.hm.out_bits, wb * 8)
    pad = slot * 8 - sm.lanes[t] * wb * 8
    row_bytes = wire(m, "w_row_bytes", slot * 8, Cat(*([num(0, pad)] if pad else []), *reversed(words)))
    sh = Cat(head_off[0:clog2(bb)], num(0, 3))
    beat = Cat(num(0, bw - slot * 8), row_bytes) << sh
    strb = Cat(num(0, bb - slot), num((1 << slot) - 1, slot)) << head_off[0:clog2(bb)]
    return beat, strb, num(1, 1)


def _beat_data(c: Ctx, t: int, b: dict) -> dict:
    """Write data: the head row's beats."""
    m, hm, sm = c.m, c.hm, c.sm
    slot, bb = sm.slot_bytes[t], sm.bus_bytes
    nb = max(1, slot // bb)
    bi = clog2(nb + 1)
    d = {"w_beat": m.Reg("w_beat", bi), "w_in": m.Reg("w_in_burst", 8)}
    head = wire(m, "w_head", hm.out_row_bits, Mux(b["rd"], b["rowq"][1], b["rowq"][0]))
    head_off = wire(m, "w_head_off", LOW, Mux(b["rd"], b["offq"][1], b["offq"][0]))
    if slot >= bb:
        c.unused.append((head_off, LOW))
    elif clog2(bb) < LOW:  # a narrow row's byte lane within the beat: the low address bits only
        c.unused.append((head_off[clog2(bb):LOW], LOW - clog2(bb)))
    ob = hm.out_bits
    values = [head[i * ob:(i + 1) * ob] for i in range(sm.lanes[t])]
    if slot >= bb:
        d["beat"], d["strb"], d["row_last"] = _wide_beat(c, t, values, d["w_beat"], bi)
    else:
        d["beat"], d["strb"], d["row_last"] = _narrow_beat(c, t, values, head_off)
    return d


def storer(c: Ctx) -> None:
    """The write engine (module docstring): its three sides, the write channel and the done
    flag once every burst's response is in."""
    m, hm, w, core, mi, mo = c.m, c.hm, c.w, c.core, c.mi, c.mo
    t = len(hm.input_tensors)
    rows_last, runs_last, run_beats, size, beat, _ = burst_geometry(c, "aw", num(0, 1), 1, [t], w["st_bounds"])
    a = _address_side(c, t, runs_last, run_beats, size, beat)
    b = _bank_reads(c, t, rows_last)
    d = _beat_data(c, t, b)
    q, q_wr, q_rd, q_n, aw_hs = a["q"], a["q_wr"], a["q_rd"], a["q_n"], a["hs"]
    rq_wr, rq_rd, rq_n, rr_pend = b["wr"], b["rd"], b["n"], b["pend"]
    w_beat, w_in, row_last = d["w_beat"], d["w_in"], d["row_last"]
    wvalid = m.Wire("w_valid")
    m.Assign(wvalid((rq_n != num(0, 2)) & (q_n != num(0, 3))))
    wlast = m.Wire("w_last")
    m.Assign(wlast(w_in == pick(q_rd, 2, q)))
    w_hs = m.Wire("w_hs")
    m.Assign(w_hs(wvalid & mi["wready"]))
    m.Assign(mo["wvalid"](wvalid))
    m.Assign(mo["wdata"](d["beat"]))
    m.Assign(mo["wstrb"](d["strb"]))
    m.Assign(mo["wlast"](wlast))
    m.Assign(mo["bready"](num(1, 1)))
    m.Assign(w["wr_beat"](w_hs))
    pop_row = w_hs & row_last
    bursts = m.Reg("b_pending", 16)
    b_hs = mi["bvalid"]
    done = m.Reg("st_done_r")
    st_on = m.Reg("st_on_r")
    m.Always(Posedge(c.clk))(
        done(0), rr_pend(0),
        If(c.rst)(a["on"](0), a["restart"](0), b["on"](0), b["restart"](0), q_n(0), q_wr(0), q_rd(0), rq_n(0),
                  rq_wr(0), rq_rd(0), w_beat(0), w_in(0), bursts(0), st_on(0), a["first"](1))
        .Else(
            If(w["st_start"])(a["on"](1), a["restart"](1), b["on"](1), b["restart"](1), st_on(1), a["first"](1)),
            If(a["restart"])(a["restart"](0)),
            If(b["restart"])(b["restart"](0)),
            # address channel
            If(aw_hs)(
                *[If(q_wr == num(k, 2))(q[k](a["alen"][0:8])) for k in range(QUEUE)],
                q_wr(q_wr + 1),
                If(a["run_end"])(a["first"](1), If(a["walk_last"])(a["on"](0)))
                .Else(a["first"](0), a["addr_r"](a["addr"] + a["pbytes"]), a["rem_r"](a["rem"] - a["piece"]))),
            If(aw_hs & ~(w_hs & wlast))(q_n(q_n + 1)),
            If(~aw_hs & w_hs & wlast)(q_n(q_n - 1)),
            If(aw_hs & ~(b_hs))(bursts(bursts + 1)),
            If(~aw_hs & b_hs)(bursts(bursts - 1)),
            # bank reads
            If(b["issue"])(rr_pend(1), b["pend_off"](b["dram_low"]), If(b["last"])(b["on"](0))),
            If(rr_pend)(*[If(rq_wr == num(k, 1))(b["rowq"][k](core["dma_rrow"]), b["offq"][k](b["pend_off"]))
                          for k in (0, 1)], rq_wr(~rq_wr)),
            If(rr_pend & ~pop_row)(rq_n(rq_n + 1)),
            If(~rr_pend & pop_row)(rq_n(rq_n - 1)),
            # write data
            If(w_hs)(
                If(wlast)(w_in(0), q_rd(q_rd + 1)).Else(w_in(w_in + 1)),
                If(row_last)(w_beat(0), rq_rd(~rq_rd)).Else(w_beat(w_beat + 1))),
            If(st_on & ~a["on"] & ~a["restart"] & ~b["on"] & ~b["restart"] & ~rr_pend & (rq_n == num(0, 2))
               & (q_n == num(0, 3)) & (bursts == num(0, 16)) & ~w["st_start"])(st_on(0), done(1)),
        ))
    m.Assign(w["st_done"](done))
    m.Assign(w["err"](c.w["r_err"] | (b_hs & ((mi["bresp"] != num(0, 2)) | mi["bid"]))))
