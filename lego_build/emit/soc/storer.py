"""The DMA's write engine of ``lego_soc``: the finished output half's rows back to memory.

The address channel (:func:`_address_side`) walks the output tile's runs, bursts split at 256
beats and 4 KB boundaries, their lengths queued for WLAST; the bank side
(:func:`_bank_reads`) holds the head row at the output half's read address, the next row's
read issued with the head's last beat; the data side (:func:`_beat_data`) takes each beat's
words into a write path of ``PPU_STAGES + 2`` register stages (the latency model's
``WRITE_PATH``, issue 44: the beat multiplexer's registers, the PPU's pipelined lanes,
:func:`lego_build.emit.soc.ppu.ppu_lanes`, their tables' registered reads, the output register that
drives AXI W), a stall-all pipeline that moves whenever the skid register beside its output register is
empty (the output register takes from the skid first; issue 45), so
a layer's results reach memory post-processed at one beat a cycle, rows of one beat included;
they stay one word each, sign-extended. One AXI ID (0); an
error response or a foreign ID sets STATUS bit 2.
"""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge

from lego_build.emit.soc.common import ADDR, Ctx, ndf, num, ors, per_df, pick, tree_pick, wire
from lego_build.emit.soc.ppu import ppu_lanes, ppu_tables, staged
from lego_build.emit.soc.walkers import burst_channel, burst_geometry, walker
from lego_build.errors import ConfigError
from lego_build.ir import outshare
from lego_build.ir.host import clog2
from rtl_templates_free.primitives import PPU_STAGES

LOW = 12  # the DRAM address bits a narrow row's byte lane is taken from
QUEUE = 4  # burst lengths the address channel may run ahead of the data


def _address_side(c: Ctx, t: int, runs_last: list, run_beats, beat) -> dict:
    """AW: runs of the output tile's rows; burst lengths queue for WLAST."""
    m, w, cw = c.m, c.w, c.hm.counter_bits
    a = {"on": m.Reg("aw_on"), "restart": m.Reg("aw_restart")}
    aw_step, aw_start = m.Wire("aww_step"), m.Wire("aww_start")
    _, (aw_walk,), aw_walk_last = walker(c, "aww", runs_last, cw, [(ADDR, w["st_base"], c.regs["row"][t])],
                                         aw_start, aw_step)
    a["walk_last"] = aw_walk_last
    a["q"] = [m.Reg(f"wlen_q{k}", 8) for k in range(QUEUE)]
    a["q_wr"], a["q_rd"], a["q_n"] = m.Reg("wlen_wr", 2), m.Reg("wlen_rd", 2), m.Reg("wlen_n", 3)
    a.update(burst_channel(c, "aw", aw_walk, run_beats, beat, a["q_n"] < num(QUEUE, 3), a["on"] & ~a["restart"]))
    m.Assign(aw_step(a["take"] & ~aw_walk_last))
    m.Assign(aw_start(a["restart"]))
    return a


def _bank_reads(c: Ctx, t: int, rows_last: list) -> dict:
    """The output half's rows read in place (issue 44): the bank half's read address holds the
    head row while its beats are taken, so the banks' outputs are the row (read latency 1), and
    moves to the walker's next row in the cycle the head's last beat is taken, so that row's
    first beat follows without a bubble. A row register (two of them, a queue, before) would be
    a flip-flop per output bit of the array: lego_mnicoc's 16 x 16 kept 16,384. With
    ``row_prefetch`` (FPGA targets), :func:`_prefetched_reads` instead. Returns the head row
    (``row``, ``off``, ``valid``), ``pop`` (driven by the write path), whether a row is still to
    come (``busy``) and the engine's registers, statements and resets (``on``, ``restart``,
    ``update``, ``resets``)."""
    m, hm, r, w, core = c.m, c.hm, c.regs, c.w, c.core
    cw, aw = hm.counter_bits, hm.addr_bits
    b = {"on": m.Reg("rr_on"), "restart": m.Reg("rr_restart")}
    if not hm.row_prefetch:
        b["valid"] = m.Reg("rr_valid")
    rr_step, rr_start = m.Wire("rrw_step"), m.Wire("rrw_start")
    _, (walk_addr, walk_low), last = walker(
        c, "rrw", rows_last, cw,
        [(aw, num(0, aw), r["bank"][t]), (LOW, w["st_base"][0:LOW], [x[0:LOW] for x in r["row"][t]])],
        rr_start, rr_step)
    m.Assign(rr_start(b["restart"]))
    m.Assign(core["dma_rhalf"](w["st_half"]))
    if hm.row_prefetch:
        return _prefetched_reads(c, t, b, walk_addr, walk_low, last, rr_step)
    head, b["off"] = m.Reg("rr_head", aw), m.Reg("rr_head_off", LOW)
    b["pop"] = m.Wire("rr_pop")  # the head row's last beat is taken (driven by the write path)
    load = m.Wire("rr_load")  # the walker's row becomes the head
    m.Assign(load(b["on"] & ~b["restart"] & (~b["valid"] | b["pop"])))
    m.Assign(rr_step(load & ~last))
    if hm.out_share:  # shared output lanes: the bank row of the beat taken next (lego_build.ir.outshare)
        b["beat_next"] = m.Wire("rr_beat_next", _beat_bits(c, t))  # driven by the write path
        row = wire(m, "rr_row", aw, Mux(load, walk_addr, head))
        m.Assign(core["dma_raddr"](_sub_row(c, t, row, b["beat_next"], _beat_bits(c, t), "beats")))
    else:
        m.Assign(core["dma_raddr"](Mux(load, walk_addr, head)))
    m.Assign(core["dma_ren"](b["on"] | b["valid"]))
    b["row"], b["busy"], b["resets"] = core["dma_rrow"], b["valid"], [b["valid"](0)]
    b["update"] = [If(load)(b["valid"](1), head(walk_addr), b["off"](walk_low), If(last)(b["on"](0)))
                   .Elif(b["pop"])(b["valid"](0))]
    return b


def _beat_bits(c: Ctx, t: int) -> int:
    """Bits of the beat counter of an output row (``w_beat``)."""
    return clog2(max(1, c.sm.slot_bytes[t] // c.sm.bus_bytes) + 1)


def _beat_slots(c: Ctx, t: int) -> list[tuple[int, tuple[int, ...]]]:
    """Per dataflow, a shared output lane's slot bits and the slot of each beat of a DRAM row
    (:func:`lego_build.ir.outshare.beat_rows`)."""
    hm, sm = c.hm, c.sm
    per_beat = min(sm.slot_bytes[t], sm.bus_bytes) // sm.word_bytes[t]
    out = []
    for d in range(ndf(c)):
        pack = hm.packs[t][d] if hm.packs else ()
        out.append((outshare.shift(hm.out_share, pack),
                    outshare.beat_rows(outshare.word_sources(hm.out_share, pack, sm.word_of(t, d)), per_beat,
                                       max(1, sm.slot(t, d) // sm.bus_bytes))))
    return out


def _sub_row(c: Ctx, t: int, row, index, bits: int, table: str):
    """A shared output lane's bank row ``{row, slot}`` of the DRAM row whose logical address is
    ``row``, under the running dataflow: the slot of beat ``index`` (``table`` "beats") or of its
    ``index``-th bank read (``table`` "reads", :func:`lego_build.ir.outshare.bank_reads`)."""
    aw, forms, top = c.hm.addr_bits, [], 0
    for sh, rows in _beat_slots(c, t):
        top = max(top, sh)
        slots = rows if table == "beats" else outshare.bank_reads(rows)
        slot = tree_pick(index, bits, [num(j, sh) for j in slots]) if sh else None
        forms.append(Cat(row[0:aw - sh], slot) if sh else row)
    if top:
        c.unused.append((row[aw - top:aw], top))
    return per_df(c, forms)


def _read_ends(c: Ctx, t: int, beat, bits: int):
    """A shared output lane's beats that end a bank read of their row, under the running dataflow
    (the row's last beat among them)."""
    ends = []
    for _, rows in _beat_slots(c, t):
        flags = [b == len(rows) - 1 or rows[b + 1] != j for b, j in enumerate(rows)]
        ends.append(tree_pick(beat, bits, [num(int(f), 1) for f in flags]))
    return per_df(c, ends)


def _prefetched_reads(c: Ctx, t: int, b: dict, walk_addr, walk_low, last, rr_step) -> dict:
    """``row_prefetch`` (:mod:`lego_build.backend.passes.row_prefetch`): the banks' read address is
    the row walker's register; a row is read ahead (``rr_issue``) whenever the two-row queue has
    room for it and the one in flight, a take of the head's last beat making room in its own
    cycle; the row the banks return a cycle later goes into the queue's free entry, both halves'
    words (each block RAM's output straight into a flip-flop), and beats are taken from its head,
    the store's half chosen there. Entries and pointers are registers, so the take reaches the
    walker's enables only, never the banks. With shared output lanes the queue holds bank rows, a
    DRAM row's bank reads issued in turn (``rr_k``, the walker stepping after the last), each taken
    off the queue with the last beat it serves (:func:`_read_ends`)."""
    m, core, row_bits = c.m, c.core, 2 * c.hm.out_row_bits
    fly, n = m.Reg("rr_fly"), m.Reg("rr_n", 2)  # a row in flight (read last cycle); rows queued
    fly_off = m.Reg("rr_fly_off", LOW)
    wp, rp = m.Reg("rr_wp"), m.Reg("rr_rp")
    rows = [m.Reg(f"rr_row{k}", row_bits) for k in (0, 1)]
    offs = [m.Reg(f"rr_off{k}", LOW) for k in (0, 1)]
    b["pop"] = m.Wire("rr_pop")
    full = wire(m, "rr_full", 1, n[1] | (n[0] & fly))  # two rows queued, or one and one in flight
    issue = wire(m, "rr_issue", 1, b["on"] & ~b["restart"] & (~full | b["pop"]))
    row_done, sub = issue, []
    if c.hm.out_share:  # shared output lanes: a DRAM row's bank reads in turn
        reads = [len(outshare.bank_reads(rows_)) for _, rows_ in _beat_slots(c, t)]
        kb = clog2(max(reads) + 1)
        k = m.Reg("rr_k", kb)
        k_last = wire(m, "rr_k_last", 1, per_df(c, [k == num(r - 1, kb) for r in reads]))
        row_done = wire(m, "rr_row_done", 1, issue & k_last)
        sub = [If(issue)(k(Mux(k_last, num(0, kb), k + 1)))]
        b["resets_k"] = [k(0)]
        m.Assign(core["dma_raddr"](_sub_row(c, t, walk_addr, k, kb, "reads")))
        b["read_ends"] = lambda beat, bits: _read_ends(c, t, beat, bits)
    else:
        m.Assign(core["dma_raddr"](walk_addr))
    m.Assign(rr_step(row_done & ~last))
    m.Assign(core["dma_ren"](b["on"]))
    head = wire(m, "rr_head_rows", row_bits, Mux(rp, rows[1], rows[0]))
    half = row_bits // 2
    b["row"] = wire(m, "rr_head_row", half, Mux(c.w["st_half"], head[half:row_bits], head[0:half]))
    b["off"] = wire(m, "rr_head_off", LOW, Mux(rp, offs[1], offs[0]))
    b["valid"] = wire(m, "rr_valid", 1, n != num(0, 2))
    b["busy"] = fly | b["valid"]
    b["resets"] = [fly(0), n(0), wp(0), rp(0), *b.pop("resets_k", [])]
    b["update"] = [
        fly(issue), *([If(issue)(fly_off(walk_low)), If(row_done & last)(b["on"](0)), *sub] if sub else
                      [If(issue)(fly_off(walk_low), If(last)(b["on"](0)))]),
        If(fly)(*[If(wp == num(k, 1))(rows[k](core["dma_rrow"]), offs[k](fly_off)) for k in (0, 1)], wp(~wp)),
        If(b["pop"])(rp(~rp)),
        If(fly & ~b["pop"])(n(n + 1)).Elif(~fly & b["pop"])(n(n - 1)),
    ]
    return b


def _wide_beat(c: Ctx, t: int, values: list, w_beat, bi: int, adv, banks: list | None = None) -> tuple:
    """A row of a bus width or more: its words (every lane, or under a dataflow that packs the row
    the first lane of each distinct word, :meth:`SocMap.lane_of`), a beat's worth at a time into
    the first stage (per lane of the beat a multiplexer tree over the beats, then one over the
    dataflows), then through the PPU; beats
    past the words are zero. Returns (the first stage's words, the data after the PPU,
    strobes, the beat ends the row)."""
    m, sm, ob = c.m, c.sm, c.hm.out_bits
    bw, bb, wb = sm.bus_bits, sm.bus_bytes, sm.word_bytes[t]
    per_beat = min(sm.slot_bytes[t], bb) // wb  # lanes in one beat: the PPU's lanes
    firsts = [sm.lane_of(t, d) for d in range(ndf(c))]
    referenced = {x for f in firsts for x in f}
    if banks is None:
        c.unused += [(values[i], ob) for i in range(sm.lanes[t]) if i not in referenced]
    else:  # shared output lanes: ``values`` are the ports' words, a lane's ports one bank word
        seen = {id(values[x]) for x in referenced}
        c.unused += [(w, ob) for w in banks if id(w) not in seen]
    nbs = [max(1, sm.slot(t, d) // bb) for d in range(ndf(c))]
    reals = [-(-len(f) // per_beat) for f in firsts]  # beats that hold words (the rest is padding)
    nb_real = max(reals)
    # per lane of the beat, per dataflow, the lane of the row each beat takes it from (-1: none);
    # the beat's tree first, the dataflow's choice last (issue 44: a dataflow multiplexer per word of
    # the row in front of a 64-beat chain was lego_mnicoc's write path, 6.1 ns)
    sel = []
    for i in range(per_beat):
        srcs = [tuple(f[p] if p < len(f) else -1 for p in range(i, nb_real * per_beat, per_beat)) for f in firsts]
        by_df = {}
        for src in srcs:
            if src not in by_df:
                by_df[src] = tree_pick(w_beat, bi, [values[x] if x >= 0 else num(0, ob) for x in src],
                                       merge=banks is not None)
        sel.append(per_df(c, [by_df[src] for src in srcs]))
    first = [m.Reg(f"w_s1_lane{i}", ob) for i in range(per_beat)]
    loads = [r(x) for r, x in zip(first, sel)]
    pads = [r < n for r, n in zip(reals, nbs)]
    zero = None
    if any(pads):  # a padding beat: zero data, its flag along the pipeline
        z1 = m.Reg("w_s1_zero")
        loads.append(z1(~(w_beat < per_df(c, [num(r, bi) for r in reals]))))
        zero = staged(c, "w_zero", z1, 1, PPU_STAGES, adv)[-1]
    m.Always(Posedge(c.clk))(If(adv)(*loads))
    words = ppu_tables(c, "w", ppu_lanes(c, "w", first, ob, adv), ob, wb * 8, adv)
    used = Cat(*reversed(words))
    pad_bits = bw - len(words) * wb * 8
    data = Cat(num(0, pad_bits), used) if pad_bits else used
    beat = Mux(zero, num(0, bw), data) if zero is not None else data
    row_last = per_df(c, [w_beat == num(n - 1, bi) for n in nbs]) if len(set(nbs)) > 1 else \
        w_beat == num(nbs[0] - 1, bi)
    return beat, num((1 << bb) - 1, bb), row_last


def _narrow_beat(c: Ctx, t: int, values: list, head_off, adv) -> tuple:
    """A row narrower than the bus: its words into the first stage, through the PPU, then shifted
    to the row's byte lanes (its offset along the pipeline). Returns (data, strobes, the beat
    ends the row)."""
    m, sm, ob = c.m, c.sm, c.hm.out_bits
    bw, bb, wb, slot = sm.bus_bits, sm.bus_bytes, sm.word_bytes[t], sm.slot_bytes[t]
    first = [m.Reg(f"w_s1_lane{i}", ob) for i in range(len(values))]
    off1 = m.Reg("w_s1_off", clog2(bb))
    m.Always(Posedge(c.clk))(If(adv)(*[r(x) for r, x in zip(first, values)], off1(head_off[0:clog2(bb)])))
    off = staged(c, "w_off", off1, clog2(bb), PPU_STAGES, adv)[-1]
    words = ppu_tables(c, "w", ppu_lanes(c, "w", first, ob, adv), ob, wb * 8, adv)
    pad = slot * 8 - sm.lanes[t] * wb * 8
    row_bytes = wire(m, "w_row_bytes", slot * 8, Cat(*([num(0, pad)] if pad else []), *reversed(words)))
    beat = Cat(num(0, bw - slot * 8), row_bytes) << Cat(off, num(0, 3))
    strb = Cat(num(0, bb - slot), num((1 << slot) - 1, slot)) << off
    return beat, strb, num(1, 1)


def _beat_data(c: Ctx, t: int, b: dict, adv) -> dict:
    """Write data: the head row's beats into the write path (``adv``: every stage moves)."""
    m, hm, sm = c.m, c.hm, c.sm
    slot, bb = sm.slot_bytes[t], sm.bus_bytes
    nb = max(1, slot // bb)
    bi = clog2(nb + 1)
    d = {"w_beat": m.Reg("w_beat", bi), "w_in": m.Reg("w_in_burst", 8)}
    head, head_off = b["row"], b["off"]
    if slot >= bb:
        c.unused.append((head_off, LOW))
    elif clog2(bb) < LOW:  # a narrow row's byte lane within the beat: the low address bits only
        c.unused.append((head_off[clog2(bb):LOW], LOW - clog2(bb)))
    ob = hm.out_bits
    if hm.out_share:  # a bank word per shared lane, each its ports' word (lego_build.ir.outshare)
        if slot < bb:
            raise ConfigError(f"arch.out_lanes: output rows of {slot} B are narrower than a bus beat "
                              f"({bb} B); shared output lanes need rows of a beat or more: set arch.out_lanes=0")
        banks = [head[i * ob:(i + 1) * ob] for i in range(hm.out_banks)]
        values = [banks[lane] for lane in hm.out_share]
        d["beat"], d["strb"], d["row_last"] = _wide_beat(c, t, values, d["w_beat"], bi, adv, banks)
        return d
    values = [head[i * ob:(i + 1) * ob] for i in range(sm.lanes[t])]
    if slot >= bb:
        d["beat"], d["strb"], d["row_last"] = _wide_beat(c, t, values, d["w_beat"], bi, adv)
    else:
        d["beat"], d["strb"], d["row_last"] = _narrow_beat(c, t, values, head_off, adv)
    return d


def storer(c: Ctx) -> None:
    """The write engine (module docstring): its three sides, the write channel and the done
    flag once every burst's response is in."""
    m, hm, w, mi, mo = c.m, c.hm, c.w, c.mi, c.mo
    t = len(hm.input_tensors)
    rows_last, runs_last, run_beats, beat, _, _ = burst_geometry(c, "aw", num(0, 1), 1, [t], w["st_bounds"])
    a = _address_side(c, t, runs_last, run_beats, beat)
    b = _bank_reads(c, t, rows_last)
    # the write path: a beat is taken from the head row into the first stage, moves through the
    # PPU's lanes and leaves from the output register (AXI W driven by registers); every stage
    # moves while the skid register beside the output register is empty (a stall-all pipeline whose
    # enable is a flip-flop, issue 45: with AXI's ready in it, ready through the head row's read
    # address into the output banks was the default lego_soc's critical path on an LFE5U-85F)
    out_v, skid_v = m.Reg("w_out_valid"), m.Reg("w_skid_valid")
    adv = wire(m, "w_adv", 1, ~skid_v)
    d = _beat_data(c, t, b, adv)
    q, q_wr, q_rd, q_n, aw_hs = a["q"], a["q_wr"], a["q_rd"], a["q_n"], a["hs"]
    w_beat, w_in, row_last = d["w_beat"], d["w_in"], d["row_last"]
    wlast = wire(m, "w_last", 1, w_in == pick(q_rd, 2, q))
    take = wire(m, "w_take", 1, adv & b["valid"] & (q_n != num(0, 3)))
    v1, last1 = m.Reg("w_s1_valid"), m.Reg("w_s1_last")
    valids = [v1, *staged(c, "w_valid", v1, 1, PPU_STAGES, adv, reset=True)]
    last_end = staged(c, "w_last", last1, 1, PPU_STAGES, adv)[-1]
    outs = [(m.Reg(f"w_{p}_data", c.sm.bus_bits), m.Reg(f"w_{p}_strb", c.sm.bus_bytes), m.Reg(f"w_{p}_last"))
            for p in ("out", "skid")]
    (out_data, out_strb, out_last), skid = outs
    beat = (d["beat"], d["strb"], last_end)
    free = mi["wready"] | ~out_v  # the output register is free after this cycle
    m.Always(Posedge(c.clk))(
        If(c.rst)(v1(0), out_v(0), skid_v(0))
        .Else(
            If(adv)(v1(take), last1(wlast)),
            If(free)(
                If(skid_v)(out_v(1), skid_v(0), *[r(x) for r, x in zip(outs[0], skid)])
                .Else(out_v(valids[-1]), *[r(x) for r, x in zip(outs[0], beat)]))
            .Elif(adv)(skid_v(valids[-1]), *[r(x) for r, x in zip(skid, beat)])))
    w_hs = wire(m, "w_hs", 1, out_v & mi["wready"])
    m.Assign(mo["wvalid"](out_v))
    m.Assign(mo["wdata"](out_data))
    m.Assign(mo["wstrb"](out_strb))
    m.Assign(mo["wlast"](out_last))
    m.Assign(mo["bready"](num(1, 1)))
    m.Assign(w["wr_beat"](w_hs))
    # the head row (with shared output lanes and a queue, the head bank row) is done with its last beat
    m.Assign(b["pop"](take & (b["read_ends"](w_beat, w_beat.width) if "read_ends" in b else row_last)))
    if "beat_next" in b:  # shared output lanes: the banks hold the bank row of the beat taken next
        m.Assign(b["beat_next"](Mux(take, Mux(row_last, num(0, w_beat.width), w_beat + 1), w_beat)))
    bursts = m.Reg("b_pending", 16)
    b_hs = mi["bvalid"]
    done = m.Reg("st_done_r")
    st_on = m.Reg("st_on_r")
    m.Always(Posedge(c.clk))(
        done(0),
        If(c.rst)(a["on"](0), a["restart"](0), b["on"](0), b["restart"](0), *b["resets"], q_n(0), q_wr(0),
                  q_rd(0), w_beat(0), w_in(0), bursts(0), st_on(0))
        .Else(
            If(w["st_start"])(a["on"](1), a["restart"](1), b["on"](1), b["restart"](1), st_on(1)),
            If(a["restart"])(a["restart"](0)),
            If(b["restart"])(b["restart"](0)),
            # address channel
            If(aw_hs)(
                *[If(q_wr == num(k, 2))(q[k](a["alen"])) for k in range(QUEUE)],
                q_wr(q_wr + 1)),
            If(a["take"] & a["walk_last"])(a["on"](0)),
            If(aw_hs & ~(take & wlast))(q_n(q_n + 1)),
            If(~aw_hs & take & wlast)(q_n(q_n - 1)),
            If(aw_hs & ~(b_hs))(bursts(bursts + 1)),
            If(~aw_hs & b_hs)(bursts(bursts - 1)),
            # bank reads: the head row, held at the banks' read address (or read ahead into a queue)
            *b["update"],
            # write data (taken into the write path)
            If(take)(
                If(wlast)(w_in(0), q_rd(q_rd + 1)).Else(w_in(w_in + 1)),
                If(row_last)(w_beat(0)).Else(w_beat(w_beat + 1))),
            If(st_on & ~a["on"] & ~a["restart"] & ~a["valid"] & ~b["on"] & ~b["restart"] & ~b["busy"]
               & (q_n == num(0, 3)) & (bursts == num(0, 16)) & ~w["st_start"] & ~ors(valids) & ~out_v & ~skid_v)(
                st_on(0), done(1)),
        ))
    m.Assign(w["st_done"](done))
    m.Assign(w["err"](c.w["r_err"] | (b_hs & ((mi["bresp"] != num(0, 2)) | mi["bid"]))))
