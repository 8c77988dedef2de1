"""The address walkers the blocks share: :func:`walker` (nested loops over affine addresses,
no multiplier: the controller's scheme, :mod:`lego_build.emit.ctrl`), a tile's bounds and
rows, and the burst machinery of the DMA's two engines (:func:`burst_geometry`,
:func:`burst_channel`)."""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge

from lego_build.emit.soc.common import ADDR, MAX_BURST, Ctx, add, ands, deps, ndf, num, per_df, pick, wire
from lego_build.ir.host import clog2


def walker(c: Ctx, name: str, lasts: list, cw: int, streams: list, start, step):
    """Nested loops with per-level last indices ``lasts`` (outer to inner) and affine address
    ``streams`` (``(width, base, strides)``): ``start`` loads the bases, and the last indices
    and strides into registers the walk then reads (issue 44: the tile's bounds and the
    tensor's strides are worked out from the configuration before the walk, not on every
    step's path); ``step`` advances one point. ``lasts`` and the strides must hold their
    values in the cycle of ``start``. Returns (counters, addresses, all-last)."""
    m, clk = c.m, c.clk
    lv = len(lasts)
    cnt = [m.Reg(f"{name}_t{l}", cw) for l in range(lv)]
    last_r = [m.Reg(f"{name}_last{l}", cw) for l in range(lv)]
    # wrap[l]: the counter is at its last index, kept in a register as the counter moves (its compare
    # then runs beside the address adder, not in front of it)
    wrap = [m.Reg(f"{name}_wrap{l}") for l in range(lv)]

    def all_wrap(levels):
        return ands([wrap[l] for l in levels])

    # per level, its enable: the step where every inner level wraps, that conjunction a register
    # of its own (``inner``, kept from the wraps' next values; issue 45: as one gate after another,
    # the step, the late signal, ran through a chain of them into the outer levels' enables, the
    # default lego_soc's critical path on an LFE5U-85F, 84.5 MHz), so the step meets it in one gate
    # and fans out to the level's registers
    inner = [m.Reg(f"{name}_inner{l}") for l in range(lv - 1)]
    en = [wire(m, f"{name}_en{l}", 1, step & inner[l] if l < lv - 1 else step) for l in range(lv)]
    wrap_step = [wire(m, f"{name}_wrap_step{l}", 1, Mux(wrap[l], last_r[l] == num(0, cw), cnt[l] + num(1, cw) ==
                                                       last_r[l])) for l in range(lv)]
    wrap_next = [Mux(en[l], wrap_step[l], wrap[l]) for l in range(lv)]
    on_start = [[cnt[l](num(0, cw)), last_r[l](lasts[l]), wrap[l](lasts[l] == num(0, cw))] for l in range(lv)]
    on_step = [[cnt[l](Mux(wrap[l], num(0, cw), cnt[l] + num(1, cw))), wrap[l](wrap_step[l])] for l in range(lv)]
    if inner:
        m.Always(Posedge(clk))(
            If(start)(*[inner[l](ands([lasts[k] == num(0, cw) for k in range(l + 1, lv)])) for l in range(lv - 1)])
            .Else(*[inner[l](ands([wrap_next[k] for k in range(l + 1, lv)])) for l in range(lv - 1)]))
    addrs = []
    for s, (width, base0, strides) in enumerate(streams):
        bases = [m.Reg(f"{name}_b{s}_{l}", width) for l in range(lv)]
        stride_r = [m.Reg(f"{name}_s{s}_{l}", width) for l in range(lv)]
        # each level's next base added beside the others, then the stepping level's chosen (issue 44:
        # the wrap flags' multiplexers after the adders, not in front of them)
        sel = add(c, f"{name}_sum{s}_0", bases[0], stride_r[0], width)
        for l in range(1, lv):
            sel = Mux(wrap[l], sel, add(c, f"{name}_sum{s}_{l}", bases[l], stride_r[l], width))
        nxt = wire(m, f"{name}_next{s}", width, sel)
        for l in range(lv):
            on_start[l] += [bases[l](base0), stride_r[l](strides[l])]
            on_step[l].append(bases[l](nxt))
        addrs.append(bases[-1])
    for l in range(lv):
        m.Always(Posedge(clk))(If(start)(*on_start[l]).Elif(en[l])(*on_step[l]))
    done = m.Wire(f"{name}_last")
    m.Assign(done(all_wrap(range(lv))))
    return cnt, addrs, done


def latched(c: Ctx, name: str, expr, width: int):
    """``expr`` on a register loaded every cycle (one cycle late: for values that hold for longer)."""
    reg = c.m.Reg(name, width)
    c.m.Always(Posedge(c.clk))(reg(expr))
    return reg


def tile_bounds(c: Ctx, idx: list, name: str) -> list:
    """Per level, the last trip index of the tile at tile index ``idx`` (the remainder for a last
    tile), registered: a cycle after the walker's move (issue 45). The sequencer reads a tile's
    bounds two cycles after its walker moves at the earliest (a load: ld_done, ld_can, then
    ld_go, whose engine registers its geometry from them; a compute tile: programmed from the
    cycle after cp_can); from the walkers' counters and the configuration's tile counts through
    the compares into the load geometry's adder, and into the array's configuration port, were
    the default lego_soc's critical paths on an LFE5U-85F (84.8 and 86.5 MHz)."""
    r, cw = c.regs, c.hm.counter_bits
    out = []
    for l in range(c.hm.levels):
        b = c.m.Wire(f"{name}_bound{l}", cw)
        c.m.Assign(b(Mux(idx[l] == r["tiles"][l], r["rem"][l], r["full"][l])))
        out.append(latched(c, f"{name}_bound{l}_r", b, cw))
    return out


def geometry(c: Ctx, name: str, t: int, bounds: list) -> tuple[list, list, object]:
    """Tensor ``t``'s rows of a tile of last trips ``bounds``: per level the last trip its rows
    walk (0 where it does not depend), the same with the run level (rows contiguous in DRAM)
    folded into the run, and the run's last row. Which levels the rows move along and which is
    the run's follow from the configuration alone, registered (issue 45: the row strides'
    compares in front of the geometry and its adder were the default lego_soc's critical path on
    an LFE5U-85F, 93.1 MHz): the host's configuration writes end two cycles before its start."""
    lv, cw = c.hm.levels, c.hm.counter_bits
    slots = sorted({c.sm.slot(t, d) for d in range(ndf(c))})
    slot = num(slots[0], ADDR) if len(slots) == 1 else per_df(c, [num(c.sm.slot(t, d), ADDR) for d in range(ndf(c))])
    dep = [latched(c, f"{name}_dep{t}_{l}", x, 1) for l, x in enumerate(deps(c, t))]
    inner = [latched(c, f"{name}_run_level{t}_{l}", c.regs["row"][t][l] == slot, 1) for l in range(lv)]
    rows_last = [Mux(dep[l], bounds[l], num(0, cw)) for l in range(lv)]
    runs_last = [Mux(inner[l], num(0, cw), rows_last[l]) for l in range(lv)]
    run_rows = num(0, cw)
    for l in range(lv):
        run_rows = Mux(inner[l], bounds[l], run_rows)
    return rows_last, runs_last, run_rows


def pick_strides(table, t_sel, tb: int, tensors: list, lv: int) -> list:
    """Per level, the stride of ``table`` of the tensor ``t_sel`` selects among ``tensors``."""
    return [pick(t_sel, tb, [table[t][l] for t in tensors]) for l in range(lv)]


def burst_geometry(c: Ctx, name: str, t_sel, t_bits: int, tensors: list, bounds: list, fills: list | None = None,
                   rows_used: bool = True):
    """Per-tensor burst geometry of the tile being moved: the walker's last indices (the
    contiguous run level folded into the burst), the run's last beat (its length in beats less one), and the
    beat's bytes as a shift (AxSIZE). A row of at least a bus width is ``slot / bus`` full beats; a
    narrower row shares a beat with the ``fill - 1`` rows after it (``fills``, per tensor;
    :func:`lego_build.backend.interface.fill_rows`): a run of them is one INCR burst of
    ``fill * slot``-byte transfers (a narrow burst when that is less than the bus, AXI4
    A3.4.1), from the transfer that holds the run's first row. Returns also the wire the
    caller drives, per tensor of several rows per beat, with its run's first row's place in
    its transfer (address bits ``log2 slot`` up), and per tensor its registered runs' last
    indices and run rows (:func:`geometry`'s second and third results, for the data side's walk).
    ``rows_used``: the caller reads the rows' last indices (the first result; else not registered)."""
    m, sm = c.m, c.sm
    lv, cw = c.hm.levels, c.hm.counter_bits
    fills = fills or [1] * len(tensors)
    rows_last, runs_last, beats_shift, sizes, run_rows, hi_last, raw_last = [], [], [], [], [], {}, {}
    for t, k in zip(tensors, fills):
        slot = sm.slot_bytes[t]
        rl, ul, last = geometry(c, name, t, bounds)
        # registered (issue 44): a tile's geometry follows from its bounds and the configuration,
        # which hold for at least a cycle before an engine's walk starts (the sequencer sets the
        # bounds, then the start, then the engine restarts), so the walk reads them off registers
        if rows_used:
            rl = [latched(c, f"{name}_rl{t}_{l}", rl[l], cw) for l in range(lv)]
        ul = [latched(c, f"{name}_ul{t}_{l}", ul[l], cw) for l in range(lv)]
        if k > 1:  # the run's last row's transfer and the one after it, for the issuer's last beat
            lk = clog2(k)
            last = wire(m, f"{name}_geo_last{t}", cw, last)
            hi_last[t] = (latched(c, f"{name}_lasthi{t}", last[lk:cw], cw - lk),
                          latched(c, f"{name}_lasthi1_{t}", Cat(num(0, 1), last[lk:cw]) + num(1, cw - lk + 1),
                                  cw - lk + 1))
        raw_last[t] = last
        last = latched(c, f"{name}_last{t}", last, cw)
        rows_last.append(rl)
        runs_last.append(ul)
        run_rows.append(last)
        beats_shift.append([(sm.slot(t, d) // sm.bus_bytes).bit_length() - 1 if slot > sm.bus_bytes else 0
                            for d in range(ndf(c))])  # log2 of the beats per row (a power of two)
        sizes.append((min(slot, sm.bus_bytes) * k).bit_length() - 1)  # log2 of a power of two (1 byte: 0)
    rows = [pick(t_sel, t_bits, [x[l] for x in rows_last]) for l in range(lv)]
    runs = [m.Wire(f"{name}_runs_last{l}", cw) for l in range(lv)]
    for l in range(lv):
        m.Assign(runs[l](pick(t_sel, t_bits, [x[l] for x in runs_last])))
    run_pos = {}  # per tensor of several rows per beat: its run's first row's place in a transfer
    # the run's last beat (its beats less one, what the issuer counts): the rows of the run level
    # times the beats per row, or the transfers its rows (from the first row's place in its
    # transfer on) fill; no adder on the walk's path: for packed rows, floor((pos + last) / k) is
    # last's transfer or the one after it (both registered), chosen by the carry of pos + last's
    # place in its transfer
    rb = cw + 9
    per_tensor = []
    for t, last, shift, k in zip(tensors, run_rows, beats_shift, fills):
        if k > 1:
            lk = clog2(k)
            run_pos[t] = m.Wire(f"{name}_run_pos{t}", lk)
            carry = wire(m, f"{name}_carry{t}", lk + 1, Cat(num(0, 1), run_pos[t]) + Cat(num(0, 1), last[0:lk]))
            c.unused.append((carry[0:lk], lk))
            lo, hi = hi_last[t]
            per_tensor.append(Mux(carry[lk], Cat(num(0, rb - (cw - lk + 1)), hi), Cat(num(0, rb - (cw - lk)), lo)))
        elif len(set(shift)) == 1:  # (last + 1) * 2**z - 1: the row index above z ones
            z = shift[0]
            per_tensor.append(Cat(num(0, 9 - z), last, num((1 << z) - 1, z)) if z else Cat(num(0, 9), last))
        else:  # z per dataflow: the choice registered with the geometry (issue 44: the dataflow select's
            # multiplexer in front of the issuer's compares was lego_mnicoc's worst path, 6.3 ns)
            raw = raw_last[t]
            c.unused.append((last, cw))  # the registered last row: the data side's walk, where a caller has one
            opts = [Cat(num(0, 9 - z), raw, num((1 << z) - 1, z)) if z else Cat(num(0, 9), raw) for z in shift]
            per_tensor.append(latched(c, f"{name}_rlb{t}", per_df(c, opts), rb))
    run_beats = m.Wire(f"{name}_run_last_beat", rb)
    m.Assign(run_beats(pick(t_sel, t_bits, per_tensor)))
    return rows, runs, run_beats, (t_sel, t_bits, sizes), run_pos, (runs_last, run_rows)


def burst_channel(c: Ctx, ch: str, walk_addr, run_last_beat, beat, gate, avail, align: bool = False) -> dict:
    """AR or AW (``ch``) from a burst register (issue 45): the channel's address, length and size
    are flip-flops, loaded with a run's first burst from the walker (``walk_addr``, with
    ``run_last_beat`` beats less one, of the walker's tensor ``beat[0]``) when ``avail`` and the
    register is empty or its run's last burst is being taken, and with the run's next burst when
    a burst that does not end its run is taken. ``valid`` is the register's flag and ``gate``.
    ``beat`` is ``(t_sel, t_bits, shifts)``: per tensor its transfer bytes as a shift; ``align``:
    after a run's first burst the next starts at the transfer after the one holding the address (a
    run that starts mid-transfer). Returns ``hs``, ``take`` (the walker's run moves into the
    register: the caller steps the walker on it), ``run_end``, ``valid`` and ``alen``.

    A burst is ``min(rem, to4k, 256)`` beats (``to4k`` counted from the transfer that holds the
    address, AXI4 A3.4.1). Whether it ends its run and its AxLEN are registered with it, so the
    walker's step (``take``) is a gate of flip-flops and AXI's ready, and the compares run in
    front of the register, not in front of the walker's enables (before, on ``gemmini_like``'s
    8 x 8 on an LFE5U-85F, the walker's address through the compares into its own clock enables
    was the critical path, 48.9 MHz). ``to4k - 1`` (``room``) is the address's beat bits
    inverted. The next burst's outcome follows from the current one's registers in closed form,
    one compare deep: when ``room < 256`` the burst reaches the page's end, the next starts a page
    (``room' = P - 1``, ``P`` the page's beats) with ``rem' = rem - room - 1``, so it ends the run iff
    ``rem <= room + min(P, 256)``, with AxLEN ``rem'`` or ``min(P, 256) - 1``; otherwise it is
    256 beats (``rem >= 256``), ``room' = room - 256``, ``rem' = rem - 256``: it ends the run iff
    ``rem <= room`` and ``rem < 512``, with AxLEN ``rem``'s low byte, or ``room``'s when
    ``room' < 255``, else 255. One cycle more than a combinational channel from a run's start to
    its first burst (:data:`lego_build.mapping.latency.ISSUE`)."""
    m = c.m
    rb = max(run_last_beat.width, 14)  # room + 256 takes 13 bits
    t_sel, t_bits, shifts = beat
    assert all(0 <= z < 12 for z in shifts)
    v, addr_r, rem_r = m.Reg(f"{ch}_v"), m.Reg(f"{ch}_addr_r", ADDR), m.Reg(f"{ch}_rem_r", rb)
    alen_r, ends_r = m.Reg(f"{ch}_alen_r", 8), m.Reg(f"{ch}_ends_r")
    many = len(shifts) > 1
    b_t = m.Reg(f"{ch}_bt", t_bits) if many else t_sel  # the burst's tensor (the walker's moves on)

    def widen(x, bits: int):
        return Cat(num(0, rb - bits), x) if rb > bits else x

    def room_of(tag: str, a, t):
        """The beats from ``a``'s transfer to its 4 KB boundary, less one (12 bits)."""
        return wire(m, f"{ch}_room_{tag}", 12, pick(t, t_bits, [Cat(num(0, z), ~a[z:12]) if z else ~a[0:12]
                                                               for z in shifts]))

    # a run's first burst, of the walker's run
    rlb = wire(m, f"{ch}_run_last", rb, widen(run_last_beat, run_last_beat.width))
    room_f = room_of("first", walk_addr, t_sel)
    ends_f = wire(m, f"{ch}_ends_first", 1, (rlb <= widen(room_f, 12)) & (rlb < num(MAX_BURST, rb)))
    alen_f = Mux(ends_f, rlb[0:8], Mux(room_f < num(255, 12), room_f[0:8], num(MAX_BURST - 1, 8)))
    # the register's burst's successor
    room = room_of("cur", addr_r, b_t)
    to_page = wire(m, f"{ch}_to_page", 1, room[8:12] == num(0, 4))  # it ends at the 4 KB boundary
    nxt = addr_r
    if align:
        nxt = wire(m, f"{ch}_aligned", ADDR, pick(b_t, t_bits, [Cat(addr_r[z:ADDR], num(0, z)) if z else addr_r
                                                                 for z in shifts]))
    page = Cat(addr_r[12:ADDR] + num(1, ADDR - 12), num(0, 12))
    after256 = pick(b_t, t_bits, [Cat(nxt[8 + z:ADDR] + num(1, ADDR - 8 - z), nxt[0:8 + z]) for z in shifts])
    room_w = widen(room, 12)
    split = wire(m, f"{ch}_split", rb, rem_r - room_w - num(1, rb))  # rem' after a page's end
    whole = [min(4096 >> z, MAX_BURST) for z in shifts]  # min(P, 256) per tensor
    ends_page = wire(m, f"{ch}_ends_page", 1, rem_r <= room_w + pick(b_t, t_bits, [num(x, rb) for x in whole]))
    ends_far = wire(m, f"{ch}_ends_far", 1, (rem_r <= room_w) & (rem_r < num(2 * MAX_BURST, rb)))
    alen_page = Mux(ends_page, split[0:8], pick(b_t, t_bits, [num(x - 1, 8) for x in whole]))
    alen_far = Mux(ends_far, rem_r[0:8], Mux(room < num(511, 12), room[0:8], num(MAX_BURST - 1, 8)))

    hs = wire(m, f"{ch}_hs", 1, v & gate & c.mi[f"{ch}ready"])
    run_end = wire(m, f"{ch}_run_end", 1, hs & ends_r)
    take = wire(m, f"{ch}_take", 1, avail & (~v | run_end))
    load = [v(1), addr_r(walk_addr), rem_r(rlb), alen_r(alen_f), ends_r(ends_f)] + ([b_t(t_sel)] if many else [])
    m.Always(Posedge(c.clk))(
        If(c.rst)(v(0))
        .Elif(take)(*load)
        .Elif(hs & ~ends_r)(
            addr_r(Mux(to_page, page, after256)), rem_r(Mux(to_page, split, rem_r - num(MAX_BURST, rb))),
            ends_r(Mux(to_page, ends_page, ends_far)), alen_r(Mux(to_page, alen_page, alen_far)))
        .Elif(hs)(v(0)))
    for name, value in (("valid", v & gate), ("addr", addr_r), ("len", alen_r),
                        ("size", pick(b_t, t_bits, [num(z, 3) for z in shifts])), ("burst", num(1, 2)),
                        ("id", num(0, 1))):
        m.Assign(c.mo[f"{ch}{name}"](value))
    return {"hs": hs, "take": take, "run_end": run_end, "valid": v, "alen": alen_r}
