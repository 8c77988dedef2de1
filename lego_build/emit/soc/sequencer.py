"""The tile sequencer of ``lego_soc``: walks the layer's tiles (outer to inner, the reduction
levels innermost, so an output tile stays in its bank half while its reduction tiles
accumulate) and keeps three activities going at once, as a double-buffered level does in the
cost model: the DMA loads tile ``j+1`` into one input half while the array computes tile
``j`` from the other, and writes output tile ``o-1`` back from one output half while the
array accumulates tile ``o`` into the other.

Per tile it writes the array's (shadow) bound registers while the previous tile steps (full
trips, or the remainder trips of a last tile: Ruby's last-iteration bound, seed 002) and
starts it the cycle after the previous tile's last step, so one tile's drain overlaps the
next; a tile's input half is free again at its ``rfin`` (its last bank read), its output tile
ready to store at its ``fin``. Sub-blocks: the tile walkers (:func:`_tile_walkers`), the
input tensors a load moves (:func:`_load_changes`), the halves' and stores' state
(:func:`_state`), its updates (:func:`_updates`) and the array's configuration port
(:func:`_drive_array`).
"""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge

from lego_build.emit.soc.common import ADDR, Ctx, ands, deps, num, ors, pick, wire
from lego_build.emit.soc.walkers import tile_bounds, walker


def _tile_walkers(c: Ctx) -> dict:
    """Two walkers over the tile grid: the load's (every input tensor's tile base) and the
    compute's (the output tile's base), with their tiles' bounds; whether the compute's tile
    accumulates onto an earlier one and whether it ends its output tile."""
    m, hm, r, w = c.m, c.hm, c.regs, c.w
    lv, cw = hm.levels, hm.counter_bits
    nin = len(hm.input_tensors)
    out_t = nin
    ld_next, cp_next = m.Wire("ld_next"), m.Wire("cp_next")
    ld_idx, ld_bases, ld_last = walker(c, "ldw", r["tiles"], cw,
                                       [(ADDR, r["base"][t], r["tile"][t]) for t in range(nin)], w["go"], ld_next)
    cp_idx, (cp_base,), cp_last = walker(c, "cpw", r["tiles"], cw,
                                         [(ADDR, r["base"][out_t], r["tile"][out_t])], w["go"], cp_next)
    c.w["ld_bounds"] = tile_bounds(c, ld_idx, "ld")  # registered
    c.w["ld_bases"] = ld_bases
    cp_b = tile_bounds(c, cp_idx, "cp")
    outer = deps(c, out_t)  # levels of the output
    acc_now = m.Wire("cp_acc_now")
    m.Assign(acc_now(ors([(cp_idx[l] != num(0, cw)) & ~outer[l] for l in range(lv)])))
    ends_out = m.Wire("cp_ends_out")
    m.Assign(ends_out(ands([(cp_idx[l] == r["tiles"][l]) | outer[l] for l in range(lv)])))
    return {"ld_next": ld_next, "cp_next": cp_next, "ld_idx": ld_idx, "ld_last": ld_last, "cp_base": cp_base,
            "cp_last": cp_last, "cp_b": cp_b, "acc_now": acc_now, "ends_out": ends_out}


def _load_changes(c: Ctx, s: dict) -> None:
    """The input tensors the load walker's tile changes: at a step, a level moves when every
    level inside it wraps and it has more than one tile; a tensor none of whose levels moves
    keeps its bank half (its own ping-pong pointer) and is not loaded again."""
    m, hm, r = c.m, c.hm, c.regs
    lv, cw = hm.levels, hm.counter_bits
    nin = len(hm.input_tensors)
    ld_idx = s["ld_idx"]
    dep = [deps(c, t) for t in range(nin)]
    wraps = [ld_idx[l] == r["tiles"][l] for l in range(lv)]
    moves = [ands([wraps[k] for k in range(l + 1, lv)] + [r["tiles"][l] != num(0, cw)]) for l in range(lv)]
    changes = [ors([moves[l] & dep[t][l] for l in range(lv)]) for t in range(nin)]
    s["chg_next"] = wire(m, "ld_chg_next", nin, Cat(*reversed(changes)))
    s["ld_chg"], s["last_half"] = m.Reg("ld_chg", nin), m.Reg("ld_last_half", nin)
    s["ld_mask"], s["ld_tgt"] = m.Reg("ld_mask_r", nin), m.Reg("ld_tgt_r", nin)
    s["slot_half"] = [m.Reg(f"slot_half{h}", nin) for h in (0, 1)]
    s["tgt"] = wire(m, "ld_tgt_next", nin, s["last_half"] ^ s["ld_chg"])
    s["every"] = num((1 << nin) - 1, nin)


def _state(c: Ctx, s: dict) -> None:
    """The halves' flags, the three engines' state and the tiles in flight."""
    m, hm = c.m, c.hm
    lv, cw = hm.levels, hm.counter_bits
    s["in_full"] = [m.Reg(f"in_full{h}") for h in (0, 1)]  # loaded, not yet started
    s["in_use"] = [m.Reg(f"in_use{h}") for h in (0, 1)]  # started, its bank reads not yet done
    s["out_busy"] = [m.Reg(f"out_busy{h}") for h in (0, 1)]
    s["ld_on"], s["ld_half"], s["ld_all"] = m.Reg("ld_on"), m.Reg("ld_half"), m.Reg("ld_all")
    s["ld_go"] = m.Reg("ld_go")
    s["cp_state"] = m.Reg("cp_state", 2)  # 0 idle, 1 programming bounds, 2 start (when the array's steps are over)
    s["cp_half"], s["out_cur"], s["cp_all"] = m.Reg("cp_half"), m.Reg("out_cur"), m.Reg("cp_all")
    s["cp_acc"], s["cp_ends"] = m.Reg("cp_acc"), m.Reg("cp_ends")
    s["prog"] = m.Reg("prog", hm.cfg_addr_bits)
    s["st_on"], s["st_half"], s["st_pending"] = m.Reg("st_on"), m.Reg("st_half"), m.Reg("st_pending")
    s["st_go"] = m.Reg("st_go")
    # the output tile waiting for its store (written when its last compute ends) and the one
    # being stored (copied at the store's start): the store walks its bounds for its whole
    # length, while the next output tile may finish with other (remainder) bounds
    s["pend_base"] = m.Reg("st_pend_base", ADDR)
    s["pend_b"] = [m.Reg(f"st_pend_bound{l}", cw) for l in range(lv)]
    s["st_base"] = m.Reg("st_base", ADDR)
    # the tiles in flight (started, not yet drained; at most two, one per input half, so a
    # tile waits for the drain of the one two back even when its input half was free before):
    # whether each ends its output tile, and that output tile's base and bounds for its store
    s["flight"] = m.Reg("in_flight", 2)
    s["fl_ends"] = [m.Reg(f"fl_ends{h}") for h in (0, 1)]
    s["fl_base"] = [m.Reg(f"fl_base{h}", ADDR) for h in (0, 1)]
    s["fl_b"] = [[m.Reg(f"fl_bound{h}_{l}", cw) for l in range(lv)] for h in (0, 1)]
    s["rfin_half"] = m.Reg("rfin_half")
    # the half of the oldest tile in flight: the started tiles' parity less those in flight
    s["fin_half"] = wire(m, "fin_half", 1, s["cp_half"] ^ s["flight"][0])
    s["st_b"] = [m.Reg(f"st_bound{l}", cw) for l in range(lv)]
    c.w["st_base"], c.w["st_bounds"] = s["st_base"], s["st_b"]


def _at(regs2, half):
    """The register of the pair ``regs2`` for ``half``."""
    return Mux(half, regs2[1], regs2[0])


def _half_flags(c: Ctx, s: dict, accept) -> list:
    """Per half: loaded and not started, started and still read, holding an unstored output tile."""
    w, core = c.w, c.core
    out = []
    for h in (0, 1):
        hh = num(h, 1)
        out += [
            s["in_full"][h]((s["in_full"][h] & ~(accept & (s["cp_half"] == hh)))
                            | (w["ld_done"] & (s["ld_half"] == hh))),
            s["in_use"][h]((s["in_use"][h] & ~(core["rfin"] & (s["rfin_half"] == hh)))
                           | (accept & (s["cp_half"] == hh))),
            s["out_busy"][h]((s["out_busy"][h] & ~(w["st_done"] & (s["st_half"] == hh)))
                             | (accept & ~s["cp_acc"] & (s["out_cur"] == hh))),
        ]
    return out


def _counting(c: Ctx, state: dict, waiting, loaded) -> list:
    """The counters of the last run (:data:`lego_build.ir.soc.COUNTERS`)."""
    w, core = c.w, c.core
    busy, counters = state["busy"], state["counters"]
    return [
        If(busy)(counters["cycles"](counters["cycles"] + 1)),
        If(core["busy"])(counters["compute"](counters["compute"] + 1)),
        If(waiting & ~loaded)(counters["load_wait"](counters["load_wait"] + 1)),
        If(waiting & loaded)(
            counters["store_wait"](counters["store_wait"] + 1)),
        If(w["rd_beat"])(counters["rd_beats"](counters["rd_beats"] + 1)),
        If(w["wr_beat"])(counters["wr_beats"](counters["wr_beats"] + 1)),
    ]


def _updates(c: Ctx, s: dict, ld_can, cp_can, accept, st_can) -> list:
    """The three engines' steps: loads, the compute's programming and start, the tiles in
    flight and their stores."""
    hm, w, core = c.hm, c.w, c.core
    lv, fin, fin_half = hm.levels, core["fin"], s["fin_half"]
    cp_half, fl_ends, fl_base, fl_b = s["cp_half"], s["fl_ends"], s["fl_base"], s["fl_b"]
    flight, ld_half, tgt = s["flight"], s["ld_half"], s["tgt"]
    return [
        # loads: the next tile into the free input half
        If(ld_can)(s["ld_on"](1), s["ld_go"](1), s["ld_mask"](s["ld_chg"]), s["ld_tgt"](tgt), s["last_half"](tgt),
                   If(ld_half)(s["slot_half"][1](tgt)).Else(s["slot_half"][0](tgt))),
        If(w["ld_done"])(s["ld_on"](0), ld_half(~ld_half), If(s["ld_last"])(s["ld_all"](1))),
        If(s["ld_next"])(s["ld_chg"](s["chg_next"])),
        # compute: program the bounds (the array's shadow registers, while it runs the
        # previous tile), start it when its steps are over; a tile is done when it has drained
        If(cp_can)(s["cp_state"](1), s["prog"](0), s["cp_acc"](s["acc_now"]), s["cp_ends"](s["ends_out"])),
        If(s["cp_state"] == num(1, 2))(s["prog"](s["prog"] + 1),
                                        If(s["prog"] == num(lv - 1, hm.cfg_addr_bits))(s["cp_state"](2))),
        If(accept)(
            s["cp_state"](0), cp_half(~cp_half), If(s["cp_last"])(s["cp_all"](1)),
            If(s["cp_ends"])(s["out_cur"](~s["out_cur"])),
            *[If(cp_half == num(h, 1))(fl_ends[h](s["cp_ends"]), fl_base[h](s["cp_base"]),
                                       *[b(x) for b, x in zip(fl_b[h], s["cp_b"])]) for h in (0, 1)]),
        If(core["rfin"])(s["rfin_half"](~s["rfin_half"])),
        If(accept & ~fin)(flight(flight + 1)).Elif(fin & ~accept)(flight(flight - 1)),
        If(fin)(
            If(_at(fl_ends, fin_half))(s["st_pending"](1), s["pend_base"](_at(fl_base, fin_half)),
                                       *[b(Mux(fin_half, fl_b[1][l], fl_b[0][l])) for l, b in enumerate(s["pend_b"])])),
        # stores: the finished output half back to memory
        If(st_can)(s["st_on"](1), s["st_go"](1), s["st_pending"](0), s["st_base"](s["pend_base"]),
                   *[b(x) for b, x in zip(s["st_b"], s["pend_b"])]),
        If(w["st_done"])(s["st_on"](0), s["st_half"](~s["st_half"])),
    ]


def _drive_array(c: Ctx, s: dict, accept) -> None:
    """The array's configuration port (the sequencer's bound writes, or the host's), its start,
    its halves and whether it accumulates."""
    m, hm, w, core = c.m, c.hm, c.w, c.core
    programming = s["cp_state"] == num(1, 2)
    m.Assign(core["cfg_we"](programming | w["host_cfg_we"]))
    m.Assign(core["cfg_addr"](Mux(programming, s["prog"], w["host_cfg_addr"])))
    m.Assign(core["cfg_wdata"](Mux(programming, pick(s["prog"], hm.cfg_addr_bits, s["cp_b"]), w["host_cfg_wdata"])))
    m.Assign(core["start"](accept))
    m.Assign(core["in_half"](Mux(s["cp_half"], s["slot_half"][1], s["slot_half"][0])))
    m.Assign(w["ld_mask"](s["ld_mask"]))
    m.Assign(w["ld_tgt"](s["ld_tgt"]))
    m.Assign(core["out_half"](s["out_cur"]))
    m.Assign(core["acc"](s["cp_acc"]))
    c.w["ld_half"], c.w["st_half"] = s["ld_half"], s["st_half"]


def sequencer(c: Ctx, state: dict) -> None:
    """The sequencer (module docstring); ``state`` is the register file's ``busy`` and counters."""
    m, w, core = c.m, c.w, c.core
    busy = state["busy"]
    s = _tile_walkers(c)
    _load_changes(c, s)
    _state(c, s)
    in_full, cp_state, cp_half = s["in_full"], s["cp_state"], s["cp_half"]
    ld_half, st_on, st_go, st_pending = s["ld_half"], s["st_on"], s["st_go"], s["st_pending"]
    ld_can = busy & ~s["ld_all"] & ~s["ld_on"] & ~s["ld_go"] & ~_at(in_full, ld_half) & ~_at(s["in_use"], ld_half)
    # a tile's bounds are programmed as soon as the previous tile has started; it starts when
    # its inputs are in, its output half is free and the previous tile's steps are over
    ready = _at(in_full, cp_half) & (s["cp_acc"] | ~_at(s["out_busy"], s["out_cur"]))
    cp_can = busy & ~s["cp_all"] & (cp_state == num(0, 2))
    accept = (cp_state == num(2, 2)) & ~core["stepping"] & ready & (s["flight"] != num(2, 2))
    st_can = ~st_on & ~st_go & st_pending
    m.Assign(s["ld_next"](w["ld_done"] & ~s["ld_last"]))
    m.Assign(s["cp_next"](accept & ~s["cp_last"]))
    m.Assign(w["ld_start"](s["ld_go"]))
    m.Assign(w["st_start"](st_go))
    m.Assign(w["finish"](busy & s["ld_all"] & s["cp_all"] & (cp_state == num(0, 2)) & ~core["busy"] & ~st_on & ~st_go
                         & ~st_pending))
    waiting = (cp_state == num(2, 2)) & ~core["stepping"] & ~ready  # the array idles for data
    half_flags = _half_flags(c, s, accept)
    cleared = (*in_full, *s["in_use"], *s["out_busy"], s["ld_on"], ld_half, s["ld_all"], cp_half, s["out_cur"],
               s["cp_all"], st_on, s["st_half"], st_pending, s["last_half"], *s["slot_half"], s["rfin_half"])
    m.Always(Posedge(c.clk))(
        s["ld_go"](0), st_go(0),
        If(c.rst | w["go"])(
            *[f(0) for f in cleared], cp_state(0), s["flight"](0), s["ld_chg"](s["every"]),
            *[ctr(0) for ctr in state["counters"].values()])
        .Else(
            *half_flags,
            *_counting(c, state, waiting, _at(in_full, cp_half)),
            *_updates(c, s, ld_can, cp_can, accept, st_can),
        ))
    _drive_array(c, s, accept)
