"""The DMA's read engine of ``lego_soc``: every input tensor's rows of the tile, into the free
input half.

The address channel (:func:`_address_side`) walks the tile's runs (rows contiguous in DRAM),
a burst or more each, split at 256 beats and 4 KB boundaries, at most ``max_outstanding`` in
flight; one AXI ID (0), so responses come back in order, and an error response or a foreign ID
sets STATUS bit 2. The data channel (:func:`_data_side`) walks the same runs and counts the
rows of the current one. A beat brings part of a row (a row wider than the bus: the row is
written at its last beat), one row (a narrow beat), or up to ``fill`` rows of the run
(``hm.fill_rows``, :func:`lego_build.backend.interface.fill_rows`), which the banks take in
one write (:func:`rtl_templates_free.primitives.mk_bank_rows`, sub-banks interleaved by
address): slot ``j`` of ``dma_row`` holds the row whose bank address is ``j`` modulo the fill,
at or after ``dma_addr``, and ``dma_mask`` bit ``j`` says it is there. A run's rows are
consecutive bank addresses (its level is the tensor's innermost in the bank layout too), so a
tile's load can outrun the array, which reads one row per cycle.
"""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge

from lego_build.emit.soc.common import ADDR, Ctx, bit, first_set, ndf, num, ors, per_df, pick, wire
from lego_build.emit.soc.walkers import burst_channel, burst_geometry, pick_strides, walker
from lego_build.ir.host import clog2


def _after(c: Ctx, bits: list, name: str, t_sel):
    """(another masked tensor follows ``t_sel``, its index)."""
    m, nin = c.m, len(bits)
    tb = clog2(nin + 1)
    has, idx = [], []
    for t in range(nin):
        later = list(range(t + 1, nin))
        has.append(ors([bits[u] for u in later]) if later else num(0, 1))
        idx.append(first_set(bits, later, tb) if later else num(nin - 1, tb))
    return wire(m, f"{name}_more", 1, pick(t_sel, tb, has)), wire(m, f"{name}_next_t", tb, pick(t_sel, tb, idx))


def _address_side(c: Ctx, ld: dict) -> None:
    """AR: the runs of every tensor of the load, a burst or more each."""
    m, hm, sm, r, w, mi, mo = c.m, c.hm, c.sm, c.regs, c.w, c.mi, c.mo
    lv, cw, tb, tensors, fills = hm.levels, hm.counter_bits, ld["tb"], ld["tensors"], ld["fills"]
    ar_t, ar_on, ar_restart = m.Reg("ar_t", tb), m.Reg("ar_on"), m.Reg("ar_restart")
    ar_more, ar_next_t = _after(c, ld["bits"], "ar", ar_t)
    _, runs_last, run_beats, beat, run_pos, ld["geo"] = burst_geometry(
        c, "ar", ar_t, tb, tensors, w["ld_bounds"], fills, rows_used=False)
    ar_step, ar_start = m.Wire("arw_step"), m.Wire("arw_start")
    _, (ar_walk,), ar_walk_last = walker(
        c, "arw", runs_last, cw, [(ADDR, pick(ar_t, tb, w["ld_bases"]), pick_strides(r["row"], ar_t, tb, tensors, lv))],
        ar_start, ar_step)
    for t, pos in run_pos.items():
        ls = sm.slot_bytes[t].bit_length() - 1  # log2 of a power of two
        m.Assign(pos(ar_walk[ls:ls + clog2(fills[t])]))
    ob = clog2(sm.max_outstanding + 1)
    outstanding = m.Reg("ar_outstanding", ob)
    ch = burst_channel(c, "ar", ar_walk, run_beats, beat, outstanding < num(sm.max_outstanding, ob),
                       ar_on & ~ar_restart, align=bool(run_pos))
    ar_hs, take = ch["hs"], ch["take"]
    m.Assign(ar_step(take & ~ar_walk_last))
    m.Assign(ar_start(ar_restart))
    r_hs = m.Wire("r_hs")
    m.Assign(r_hs(mi["rvalid"] & mo["rready"]))
    r_burst_end = r_hs & mi["rlast"]
    m.Always(Posedge(c.clk))(
        If(c.rst)(ar_on(0), ar_restart(0), outstanding(0))
        .Else(
            If(ar_hs & ~r_burst_end)(outstanding(outstanding + 1)),
            If(~ar_hs & r_burst_end)(outstanding(outstanding - 1)),
            If(w["ld_start"])(ar_on(ld["any"]), ar_t(ld["first_t"]), ar_restart(ld["any"])),
            If(ar_restart)(ar_restart(0)),
            # the walker's last run moves into the burst register: the next tensor's walk, or none
            If(take & ar_walk_last)(If(~ar_more)(ar_on(0)).Else(ar_t(ar_next_t), ar_restart(1)))))
    ld["r_hs"] = r_hs


def _run_walker(c: Ctx, ld: dict) -> dict:
    """R: the runs again (their bank address and the low bits of their DRAM address), and the
    rows of the current one already written."""
    m, hm, r, w = c.m, c.hm, c.regs, c.w
    lv, cw, aw, tb, tensors = hm.levels, hm.counter_bits, hm.addr_bits, ld["tb"], ld["tensors"]
    d = {"t": m.Reg("r_t", tb), "on": m.Reg("r_on"), "restart": m.Reg("r_restart")}
    r_t = d["t"]
    d["more"], d["next_t"] = _after(c, ld["bits"], "r", r_t)
    d["step"], d["start"] = m.Wire("rw_step"), m.Wire("rw_start")
    low = 12
    runs_t, last_t = ld["geo"]  # the address side's registered geometry (issue 44: not the bounds' logic again)
    r_runs = [wire(m, f"rw_runs_last{l}", cw, pick(r_t, tb, [g[l] for g in runs_t])) for l in range(lv)]
    r_run_last = wire(m, "r_run_last", cw, pick(r_t, tb, last_t))
    _, (run_bank, d["run_low"]), d["walk_last"] = walker(
        c, "rw", r_runs, cw,
        [(aw, num(0, aw), pick_strides(r["bank"], r_t, tb, tensors, lv)),
         (low, pick(r_t, tb, [x[0:low] for x in w["ld_bases"]]),
          [pick(r_t, tb, [r["row"][t][l][0:low] for t in tensors]) for l in range(lv)])],
        d["start"], d["step"])
    r_i = d["i"] = m.Reg("r_i", cw)  # rows of the run already written
    # rows of the run after the first of this beat: r_run_last - r_i, kept in a register that counts
    # down beside r_i (issue 44: not a subtraction in front of the beat's compares)
    d["left"] = m.Reg("r_left", cw)
    d["run_last"] = r_run_last
    d["bank_addr"] = wire(m, "r_bank_addr", aw, run_bank + (r_i[0:aw] if aw <= cw else Cat(num(0, aw - cw), r_i)))
    if aw < cw:
        c.unused.append((r_i[aw:cw], cw - aw))
    return d


def _wide_rows(c: Ctx, d: dict, t: int, beat: dict) -> tuple:
    """A row of ``t`` of a bus width or more: its beats gathered; (ends a row, its lanes)."""
    m, sm, bw, bb = c.m, c.sm, c.sm.bus_bits, c.sm.bus_bytes
    r_beat, slots, bi, rdata = beat["r_beat"], beat["slots"], beat["bi"], c.mi["rdata"]
    nb = max(1, sm.slot_bytes[t] // bb)
    nbs = [max(1, sm.slot(t, df) // bb) for df in range(ndf(c))]  # fewer under a dataflow whose row is packed
    if set(nbs) == {nb}:
        bytes_ = wire(m, f"r_bytes{t}", nb * bw, Cat(rdata, *reversed(slots[:nb - 1])) if nb > 1 else rdata)
        row_end = r_beat == num(nb - 1, bi)
    else:  # the row's last beat lands at its own place; the places after it are not read
        parts = [Mux(r_beat == num(k, bi), rdata, slots[k]) for k in range(nb - 1)] + [rdata]
        bytes_ = wire(m, f"r_bytes{t}", nb * bw, Cat(*reversed(parts)))
        row_end = per_df(c, [r_beat == num(n - 1, bi) for n in nbs])
    return row_end, [_lanes_in(c, t, bytes_, nb * bw)]


def _narrow_rows(c: Ctx, d: dict, t: int, k: int) -> tuple:
    """Up to ``k`` rows of ``t`` in the beat, from the current row's place in its transfer on:
    (their lanes, the current row's place and its bits, or None for one row a beat)."""
    m, sm, bw, bb = c.m, c.sm, c.sm.bus_bits, c.sm.bus_bytes
    slot, lb, r_i = sm.slot_bytes[t], clog2(bb), d["i"]
    ls, lk = slot.bit_length() - 1, (clog2(k) if k > 1 else 0)  # log2 of powers of two
    at = wire(m, f"r_at{t}", lb, d["run_low"][0:lb] + (Cat(r_i[0:lb - ls], num(0, ls)) if ls else r_i[0:lb]))
    win = wire(m, f"r_win{t}", bw, c.mi["rdata"] >> Cat(at[ls + lk:lb], num(0, ls + lk + 3))
               if ls + lk < lb else c.mi["rdata"])
    if ls:
        c.unused.append((at[0:ls], ls))
    if k * slot < bb:
        c.unused.append((win[k * slot * 8:bw], bw - k * slot * 8))
    rows = [_lanes_in(c, t, wire(m, f"r_row{t}_{q}", slot * 8, win[q * slot * 8:(q + 1) * slot * 8]), slot * 8)
            for q in range(k)]
    return rows, ((at[ls:ls + lk], lk) if k > 1 else None)


def _beat_rows(c: Ctx, ld: dict, d: dict) -> dict:
    """Per input tensor, what a beat brings: whether it ends a row, the rows after the first it
    holds, the rows in the banks' write slots and their mask."""
    m, hm, sm = c.m, c.hm, c.sm
    cw, bw, bb = hm.counter_bits, sm.bus_bits, sm.bus_bytes
    beats_max = max(max(1, sm.slot_bytes[t] // bb) for t in ld["tensors"])
    bi = clog2(beats_max + 1)
    beat = {"bi": bi, "r_beat": m.Reg("r_beat", bi)}
    beat["slots"] = [m.Reg(f"r_slot{k}", bw) for k in range(beats_max - 1)]
    # per tensor: the beat ends a row; rows after it; the run's last row is in it; slots
    row_end_t, more_t, fin_t, data_t, mask_t = [], [], [], [], []
    for t, k in zip(ld["tensors"], ld["fills"]):
        if sm.slot_bytes[t] >= bb:
            row_end, rows = _wide_rows(c, d, t, beat)
            span = None
        else:
            rows, span = _narrow_rows(c, d, t, k)
            row_end = num(1, 1)
        row_end_t.append(row_end)
        if span is None:  # one row: it ends the run when it is the run's last
            more_t.append(num(0, clog2(hm.fill)))
            fin_t.append(d["left"] == num(0, cw))
            data_t.append(rows)
            mask_t.append([num(1, 1)])
            continue
        pos, lk = span
        a = d["bank_addr"][0:lk]
        room = wire(m, f"r_room{t}", lk, num(k - 1, lk) - pos)  # rows after the first that the beat holds
        fits = wire(m, f"r_fits{t}", 1, Cat(num(0, cw - lk), room) >= d["left"] if cw > lk else room >= d["left"])
        more = wire(m, f"r_more{t}", lk, Mux(fits, d["left"][0:lk], room))
        fin_t.append(fits)  # the rows it holds reach the run's last: more == left exactly when it fits
        rot = wire(m, f"r_rot{t}", lk, pos - a)
        data_t.append([pick(rot, lk, [rows[(j + q) % k] for q in range(k)]) for j in range(k)])
        mask_t.append([wire(m, f"r_e{t}_{j}", lk, num(j, lk) - a) <= more for j in range(k)])
        more_t.append(Cat(num(0, clog2(hm.fill) - lk), more) if clog2(hm.fill) > lk else more)
    return {**beat, "row_end": row_end_t, "more": more_t, "fin": fin_t, "data": data_t, "mask": mask_t}


def _data_side(c: Ctx, ld: dict) -> None:
    """R: each beat's rows into the banks (one write of up to ``fill`` rows), the run and the
    load done when their last row is in."""
    m, hm, w, core, mi, mo = c.m, c.hm, c.w, c.core, c.mi, c.mo
    cw, aw, tb, nin = hm.counter_bits, hm.addr_bits, ld["tb"], len(ld["tensors"])
    d = _run_walker(c, ld)
    r_t, r_on, r_restart, r_i, r_hs = d["t"], d["on"], d["restart"], d["i"], ld["r_hs"]
    beat = _beat_rows(c, ld, d)
    r_beat, slots, bi = beat["r_beat"], beat["slots"], beat["bi"]
    fb = clog2(hm.fill)
    r_more_rows = wire(m, "r_more_rows", fb, pick(r_t, tb, beat["more"]))
    # the beat holds the run's last row: one compare per tensor (issue 45: not the rows it holds,
    # chosen, then compared with the rows left, in front of the walker's step)
    run_fin = wire(m, "r_run_fin", 1, pick(r_t, tb, beat["fin"]))
    row_end = m.Wire("r_row_end")
    m.Assign(row_end(r_hs & pick(r_t, tb, beat["row_end"])))
    m.Assign(d["step"](row_end & run_fin & ~d["walk_last"]))
    m.Assign(d["start"](r_restart))
    m.Assign(mo["rready"](r_on & ~r_restart))
    slot_rows = [pick(r_t, tb, [x[j] if j < len(x) else num(0, hm.in_row_bits) for x in beat["data"]])
                 for j in range(hm.fill)]
    dma_we, dma_addr = m.Reg("dma_we_r"), m.Reg("dma_addr_r", aw)
    dma_tensor, dma_row = m.Reg("dma_tensor_r", hm.tensor_bits), m.Reg("dma_row_r", hm.fill * hm.in_row_bits)
    done = m.Reg("ld_done_r")
    writes = [dma_we(1), dma_addr(d["bank_addr"]), dma_tensor(r_t[0:hm.tensor_bits]),
              dma_row(Cat(*reversed(slot_rows)))]
    if hm.fill > 1:
        dma_mask = m.Reg("dma_mask_r", hm.fill)
        writes.append(dma_mask(pick(r_t, tb, [Cat(*reversed(mk + [num(0, 1)] * (hm.fill - len(mk))))
                                              for mk in beat["mask"]])))
        m.Assign(core["dma_mask"](dma_mask))
    any_ = ld["any"]
    left = d["left"]
    taken = wire(m, "r_taken", cw, Cat(num(0, cw - fb), r_more_rows) + num(1, cw) if cw > fb else
                 r_more_rows + num(1, cw))  # the rows this beat wrote
    m.Always(Posedge(c.clk))(
        dma_we(0), done(0),
        If(c.rst)(r_on(0), r_restart(0), r_beat(0), r_i(0))
        .Else(
            If(w["ld_start"])(r_on(any_), r_t(ld["first_t"]), r_restart(any_), r_beat(0), r_i(0), If(~any_)(done(1))),
            If(r_restart)(r_restart(0), left(d["run_last"])),
            If(r_hs)(
                *[If(r_beat == num(k, bi))(slots[k](mi["rdata"])) for k in range(len(slots))],
                If(row_end)(
                    r_beat(0), *writes,
                    If(run_fin)(
                        r_i(0), left(d["run_last"]),
                        If(d["walk_last"])(If(~d["more"])(r_on(0), done(1)).Else(r_t(d["next_t"]), r_restart(1))))
                    .Else(r_i(r_i + taken), left(left - taken)))
                .Else(r_beat(r_beat + 1)))))
    m.Assign(w["rd_beat"](r_hs))
    m.Assign(w["ld_done"](done))
    m.Assign(core["dma_we"](dma_we))
    m.Assign(core["dma_half"](pick(dma_tensor, hm.tensor_bits, [bit(w["ld_tgt"], t, nin) for t in range(nin)])))
    m.Assign(core["dma_tensor"](dma_tensor))
    m.Assign(core["dma_addr"](dma_addr))
    m.Assign(core["dma_row"](dma_row))
    c.w["r_err"] = r_hs & ((mi["rresp"] != num(0, 2)) | mi["rid"])  # an error, or a response not for our ID


def _lanes_in(c: Ctx, t: int, row_bytes, width: int):
    """The DMA row of input tensor ``t``: each lane's word from its bytes (``width`` bits of
    them), packed at ``operand_bits``: lane ``i`` takes word ``i``, or, where the dataflow packs
    the row, the word it shares (``SocMap.word_of``: one multiplexer per lane over the
    dataflows); the bytes between and after the words are unused."""
    hm, sm = c.hm, c.sm
    wb = sm.word_bytes[t]
    maps = [sm.word_of(t, d) for d in range(ndf(c))]
    words = [row_bytes[i * wb * 8:i * wb * 8 + hm.operand_bits] for i in range(sm.lanes[t])]
    lanes = []
    for lane in range(sm.lanes[t]):
        valid = [mp[lane] for mp in maps if mp[lane] >= 0]
        opts = [mp[lane] if mp[lane] >= 0 else valid[0] if valid else lane for mp in maps]
        lanes.append(words[opts[0]] if len(set(opts)) == 1 else per_df(c, [words[p] for p in opts]))
    read = {p for mp in maps for p in mp if p >= 0} if any(mp != tuple(range(sm.lanes[t])) for mp in maps) \
        else set(range(sm.lanes[t]))
    gaps = [(i * wb * 8 + (hm.operand_bits if i in read else 0), (i + 1) * wb * 8) for i in range(sm.lanes[t])]
    gaps.append((sm.lanes[t] * wb * 8, width))
    c.unused += [(row_bytes[lo:hi], hi - lo) for lo, hi in gaps if hi > lo]
    pad = hm.in_row_bits - sm.lanes[t] * hm.operand_bits
    return Cat(*([num(0, pad)] if pad else []), *reversed(lanes))


def loader(c: Ctx) -> None:
    """The read engine (module docstring): the tensors of this load (``w["ld_mask"]``), the
    first and the one after each, then its address and data channels."""
    m, hm = c.m, c.hm
    nin = len(hm.input_tensors)
    tb = clog2(nin + 1)
    tensors = list(range(nin))
    mask = c.w["ld_mask"]
    bits = [bit(mask, t, nin) for t in range(nin)]
    ld = {"tb": tb, "tensors": tensors, "fills": [hm.rows_of(t) for t in tensors], "bits": bits,
          "any": wire(m, "ld_any", 1, ors(bits)), "first_t": wire(m, "ld_first_t", tb, first_set(bits, tensors, tb))}
    _address_side(c, ld)
    _data_side(c, ld)
