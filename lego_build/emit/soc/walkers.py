"""The address walkers the blocks share: :func:`walker` (nested loops over affine addresses,
no multiplier: the controller's scheme, :mod:`lego_build.emit.ctrl`), a tile's bounds and
rows, and the burst machinery of the DMA's two engines (:func:`burst_geometry`,
:func:`issuer`, :func:`address_channel`)."""
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

    # per level, its enable: the step where every inner level wraps (issue 44: the step, the late
    # signal, meets the registers' wrap flags in one gate, then fans out to the level's registers)
    en = [wire(m, f"{name}_en{l}", 1, step & all_wrap(range(l + 1, lv)) if l < lv - 1 else step)
          for l in range(lv)]
    on_start = [[cnt[l](num(0, cw)), last_r[l](lasts[l]), wrap[l](lasts[l] == num(0, cw))] for l in range(lv)]
    on_step = [[cnt[l](Mux(wrap[l], num(0, cw), cnt[l] + num(1, cw))),
                wrap[l](Mux(wrap[l], last_r[l] == num(0, cw), cnt[l] + num(1, cw) == last_r[l]))]
               for l in range(lv)]
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
    """Per level, the last trip index of the tile at tile index ``idx``: the remainder for a last tile."""
    r = c.regs
    out = []
    for l in range(c.hm.levels):
        b = c.m.Wire(f"{name}_bound{l}", c.hm.counter_bits)
        c.m.Assign(b(Mux(idx[l] == r["tiles"][l], r["rem"][l], r["full"][l])))
        out.append(b)
    return out


def geometry(c: Ctx, t: int, bounds: list) -> tuple[list, list, object]:
    """Tensor ``t``'s rows of a tile of last trips ``bounds``: per level the last trip its rows
    walk (0 where it does not depend), the same with the run level (rows contiguous in DRAM)
    folded into the run, and the run's last row."""
    lv, cw = c.hm.levels, c.hm.counter_bits
    slots = sorted({c.sm.slot(t, d) for d in range(ndf(c))})
    slot = num(slots[0], ADDR) if len(slots) == 1 else per_df(c, [num(c.sm.slot(t, d), ADDR) for d in range(ndf(c))])
    dep = deps(c, t)
    inner = [c.regs["row"][t][l] == slot for l in range(lv)]
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
    contiguous run level folded into the burst), the run's last beat (its length in beats less one), AxSIZE, and the
    beat's bytes as a shift. A row of at least a bus width is ``slot / bus`` full beats; a
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
        rl, ul, last = geometry(c, t, bounds)
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
    size = m.Wire(f"{name}_size", 3)
    m.Assign(size(pick(t_sel, t_bits, [num(z, 3) for z in sizes])))
    return rows, runs, run_beats, size, (t_sel, t_bits, sizes), run_pos, (runs_last, run_rows)


def issuer(c: Ctx, name: str, walker_addr, run_last_beat, beat, align: bool = False) -> dict:
    """Address channel of one engine: the current run's next burst (split at 256 beats and at
    4 KB): its address, the beats left in the run less one (``run_last_beat`` at a run's
    start), AxLEN, whether it ends the run, and the address and beats left after it. ``beat``
    is ``(t_sel, t_bits, shifts)``: the selected tensor's transfer bytes as a shift; ``advance``:
    the register loads that move it to the run's next burst (the caller's, on a handshake that does
    not end the run); ``align``:
    the next burst starts at the transfer after the one holding the address (a run that starts
    mid-transfer).

    The burst is ``min(rem, to4k, 256)`` beats (``to4k`` counted from the transfer that holds
    the address, AXI4 A3.4.1); issue 44 computes its three outcomes side by side instead of
    choosing the length and then subtracting it: ``to4k - 1`` is the address's beat bits
    inverted, the run ends when ``rem - 1 <= to4k - 1`` and ``rem - 1 < 256`` (the beats left are
    kept less one, so these compare registers), a 4 KB split leaves the next page's base (an
    increment of the page number) and ``rem - to4k``, a 256-beat split ``addr + 256 beats`` (an
    increment above the beat bits) and ``rem - 256``."""
    m = c.m
    rb = run_last_beat.width
    t_sel, t_bits, shifts = beat
    assert all(0 <= z < 12 for z in shifts)
    first = m.Reg(f"{name}_first")
    addr_r = m.Reg(f"{name}_addr_r", ADDR)
    rem_r = m.Reg(f"{name}_rem_r", rb)  # beats left less one
    addr = wire(m, f"{name}_addr", ADDR, Mux(first, walker_addr, addr_r))
    rem_m1 = wire(m, f"{name}_rem_m1", rb, Mux(first, run_last_beat, rem_r))
    nxt = addr
    if align:
        nxt = wire(m, f"{name}_aligned", ADDR, pick(t_sel, t_bits, [Cat(addr[z:ADDR], num(0, z)) if z else addr
                                                                    for z in shifts]))
    # per tensor: beats to the 4 KB boundary less one (the beat bits inverted), whether the
    # boundary is nearer than 256 beats, the address after a 256-beat burst
    room_t, near_t, after256_t = [], [], []
    for z in shifts:
        room_t.append(Cat(num(0, z), ~addr[z:12]) if z else ~addr[0:12])  # 12 bits
        near_t.append(num(1, 1) if 12 - z < 8 else addr[z:12] != num(0, 8) if 12 - z == 8 else
                      ~addr[z:12] < num(255, 12 - z))  # to4k < 256
        after256_t.append(Cat(nxt[8 + z:ADDR] + num(1, ADDR - 8 - z), nxt[0:8 + z]))
    room = wire(m, f"{name}_room", 12, pick(t_sel, t_bits, room_t))
    near = wire(m, f"{name}_near", 1, pick(t_sel, t_bits, near_t))

    def ends_of(tag: str, a, r):
        """Whether the burst from address ``a`` with ``r`` beats left (less one) ends the run, and
        the beats left (less one) after it when it splits at 4 KB."""
        rm = wire(m, f"{name}_room_{tag}", 12, pick(t_sel, t_bits, [Cat(num(0, z), ~a[z:12]) if z else ~a[0:12]
                                                                   for z in shifts]))
        rw = Cat(num(0, rb - 12), rm) if rb > 12 else rm[0:rb]
        return wire(m, f"{name}_ends_{tag}", 1, (r <= rw) & (r < num(MAX_BURST, rb))), r - rw - num(1, rb)

    # whether the burst ends its run, for a run's first burst and for the next ones side by side,
    # ``first`` choosing last (it drives the walker's step: issue 44); an and-or, not a multiplexer,
    # which Yosys's opt_share would fold back into one compare of the multiplexed operands
    ends_f, split_f = ends_of("first", walker_addr, run_last_beat)
    ends_n, split_n = ends_of("next", addr_r, rem_r)
    ends = wire(m, f"{name}_ends", 1, (first & ends_f) | (~first & ends_n))
    alen = wire(m, f"{name}_alen", 8, Mux(ends, rem_m1[0:8], Mux(near, room[0:8], num(MAX_BURST - 1, 8))))
    page = wire(m, f"{name}_page", ADDR, Cat(addr[12:ADDR] + num(1, ADDR - 12),
                                            pick(t_sel, t_bits, [Cat(num(0, 12 - z), nxt[0:z]) if z else num(0, 12)
                                                                 for z in shifts])))
    addr_next = wire(m, f"{name}_addr_next", ADDR, Mux(near, page, pick(t_sel, t_bits, after256_t)))
    # the beats left after a 4 KB split, for a first and a next burst side by side (a subtractor on the
    # multiplexed operands would share its borrow chain with ``ends`` and put ``first`` in front of it)
    rem_next = wire(m, f"{name}_rem_next", rb, Mux(near, Mux(first, split_f, split_n), rem_m1 - num(MAX_BURST, rb)))
    c.unused += [(rem_m1[8:rb], rb - 8), (room[8:12], 4)]
    return {"first": first, "addr": addr, "ends": ends, "alen": alen, "advance": [addr_r(addr_next), rem_r(rem_next)]}


def address_channel(c: Ctx, ch: str, may_issue, walk_last, step, start, restart, issue: dict, size):
    """AR or AW (``ch``): the current burst (:func:`issuer`) out while ``may_issue``; the walker
    steps when a run's last burst is taken and restarts on ``restart``. Returns (handshake,
    run done)."""
    m = c.m
    addr, alen = issue["addr"], issue["alen"]
    valid = m.Wire(f"{ch}_valid")
    m.Assign(valid(may_issue))
    hs = m.Wire(f"{ch}_hs")
    m.Assign(hs(valid & c.mi[f"{ch}ready"]))
    run_end = m.Wire(f"{ch}_run_end")
    m.Assign(run_end(hs & issue["ends"]))
    m.Assign(step(run_end & ~walk_last))
    m.Assign(start(restart))
    for name, value in (("valid", valid), ("addr", addr), ("len", alen), ("size", size), ("burst", num(1, 2)),
                        ("id", num(0, 1))):
        m.Assign(c.mo[f"{ch}{name}"](value))
    return hs, run_end
