"""The address walkers the blocks share: :func:`walker` (nested loops over affine addresses,
no multiplier: the controller's scheme, :mod:`lego_build.emit.ctrl`), a tile's bounds and
rows, and the burst machinery of the DMA's two engines (:func:`burst_geometry`,
:func:`issuer`, :func:`address_channel`)."""
from __future__ import annotations

from veriloggen import Cat, If, Module, Mux, Posedge

from lego_build.emit.soc.common import ADDR, MAX_BURST, Ctx, ands, deps, ndf, num, per_df, pick, smaller, wire
from lego_build.ir.host import clog2


def walker(m: Module, clk, name: str, lasts: list, cw: int, streams: list, start, step):
    """Nested loops with per-level last indices ``lasts`` (outer to inner) and affine address
    ``streams`` (``(width, base, strides)``): ``start`` loads the bases, and the last indices
    and strides into registers the walk then reads (issue 44: the tile's bounds and the
    tensor's strides are worked out from the configuration before the walk, not on every
    step's path); ``step`` advances one point. ``lasts`` and the strides must hold their
    values in the cycle of ``start``. Returns (counters, addresses, all-last)."""
    lv = len(lasts)
    cnt = [m.Reg(f"{name}_t{l}", cw) for l in range(lv)]
    last_r = [m.Reg(f"{name}_last{l}", cw) for l in range(lv)]
    # wrap[l]: the counter is at its last index, kept in a register as the counter moves (its compare
    # then runs beside the address adder, not in front of it)
    wrap = [m.Reg(f"{name}_wrap{l}") for l in range(lv)]

    def all_wrap(levels):
        return ands([wrap[l] for l in levels])

    on_start = [c(num(0, cw)) for c in cnt] + [r(x) for r, x in zip(last_r, lasts)] + \
        [w(x == num(0, cw)) for w, x in zip(wrap, lasts)]
    on_step = []
    for l in range(lv):
        bump = [cnt[l](Mux(wrap[l], num(0, cw), cnt[l] + num(1, cw))),
                wrap[l](Mux(wrap[l], last_r[l] == num(0, cw), cnt[l] + num(1, cw) == last_r[l]))]
        on_step += [If(all_wrap(range(l + 1, lv)))(*bump)] if l < lv - 1 else bump
    addrs = []
    for s, (width, base0, strides) in enumerate(streams):
        bases = [m.Reg(f"{name}_b{s}_{l}", width) for l in range(lv)]
        stride_r = [m.Reg(f"{name}_s{s}_{l}", width) for l in range(lv)]
        bsel, ssel = bases[0], stride_r[0]
        for l in range(1, lv):
            bsel, ssel = Mux(wrap[l], bsel, bases[l]), Mux(wrap[l], ssel, stride_r[l])
        nxt = m.Wire(f"{name}_next{s}", width)
        m.Assign(nxt(bsel + ssel))
        on_start += [b(base0) for b in bases] + [r(x) for r, x in zip(stride_r, strides)]
        on_step += [bases[l](nxt) if l == lv - 1 else If(all_wrap(range(l + 1, lv)))(bases[l](nxt))
                    for l in range(lv)]
        addrs.append(bases[-1])
    m.Always(Posedge(clk))(If(start)(*on_start).Elif(step)(*on_step))
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
    contiguous run level folded into the burst), the run's length in beats, AxSIZE, and the
    beat's bytes as a shift. A row of at least a bus width is ``slot / bus`` full beats; a
    narrower row shares a beat with the ``fill - 1`` rows after it (``fills``, per tensor;
    :func:`lego_build.backend.interface.fill_rows`): a run of them is one INCR burst of
    ``fill * slot``-byte transfers (a narrow burst when that is less than the bus, AXI4
    A3.4.1), from the transfer that holds the run's first row. Returns also the wire the
    caller drives, per tensor of several rows per beat, with its run's first row's place in
    its transfer (address bits ``log2 slot`` up). ``rows_used``: the caller reads the rows' last
    indices (the first result; else not registered)."""
    m, sm = c.m, c.sm
    lv, cw = c.hm.levels, c.hm.counter_bits
    fills = fills or [1] * len(tensors)
    rows_last, runs_last, beats_shift, sizes, run_rows = [], [], [], [], []
    for t, k in zip(tensors, fills):
        slot = sm.slot_bytes[t]
        rl, ul, last = geometry(c, t, bounds)
        # registered (issue 44): a tile's geometry follows from its bounds and the configuration,
        # which hold for at least a cycle before an engine's walk starts (the sequencer sets the
        # bounds, then the start, then the engine restarts), so the walk reads them off registers
        if rows_used:
            rl = [latched(c, f"{name}_rl{t}_{l}", rl[l], cw) for l in range(lv)]
        ul = [latched(c, f"{name}_ul{t}_{l}", ul[l], cw) for l in range(lv)]
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
    # beats of one run: the rows of the run level times the beats per row, or the transfers
    # its rows (from the first row's place in its transfer on) fill
    rb = cw + 9
    per_tensor = []
    for t, last, shift, k in zip(tensors, run_rows, beats_shift, fills):
        if k > 1:
            lk = clog2(k)
            run_pos[t] = m.Wire(f"{name}_run_pos{t}", lk)
            rows_from = Cat(num(0, rb - cw), last) + Cat(num(0, rb - lk), run_pos[t]) + num(k, rb)
            span = wire(m, f"{name}_span{t}", rb, rows_from)
            c.unused.append((span[0:lk], lk))
            per_tensor.append(Cat(num(0, lk), span[lk:rb]))
        else:  # rows of the run times the beats per row (a power of two; per dataflow for packed rows)
            opts = [Cat(num(0, 9 - z), last + num(1, cw), num(0, z)) if z else Cat(num(0, 9), last + num(1, cw))
                    for z in shift]
            per_tensor.append(opts[0] if len(set(shift)) == 1 else per_df(c, opts))
    run_beats = m.Wire(f"{name}_run_beats", rb)
    m.Assign(run_beats(pick(t_sel, t_bits, per_tensor)))
    size = m.Wire(f"{name}_size", 3)
    m.Assign(size(pick(t_sel, t_bits, [num(z, 3) for z in sizes])))
    return rows, runs, run_beats, size, (t_sel, t_bits, sizes), run_pos


def issuer(c: Ctx, name: str, walker_addr, run_beats, beat):
    """Address channel of one engine: the current run's next burst (split at 256 beats and
    4 KB): its address, the beats left in the run, the burst's beats, AxLEN and bytes.
    ``beat`` is ``(t_sel, t_bits, shifts)``: the selected tensor's beat bytes as a shift."""
    m = c.m
    rb = run_beats.width
    t_sel, t_bits, shifts = beat
    first = m.Reg(f"{name}_first")
    addr_r = m.Reg(f"{name}_addr_r", ADDR)
    rem_r = m.Reg(f"{name}_rem_r", rb)
    addr = m.Wire(f"{name}_addr", ADDR)
    rem = m.Wire(f"{name}_rem", rb)
    m.Assign(addr(Mux(first, walker_addr, addr_r)))
    m.Assign(rem(Mux(first, run_beats, rem_r)))
    # beats to the next 4 KB boundary, counted from the beat that holds the address
    to4k_t, bytes_t = [], []
    for k, shift in enumerate(shifts):
        room = wire(m, f"{name}_room{k}", 14 - shift,
                    num(4096 >> shift, 14 - shift) - Cat(num(0, 2), addr[shift:12]))
        to4k_t.append(Cat(num(0, rb - (14 - shift)), room))
    to4k = wire(m, f"{name}_to4k", rb, pick(t_sel, t_bits, to4k_t))
    piece = m.Wire(f"{name}_piece", rb)
    m.Assign(piece(smaller(smaller(rem, to4k), num(MAX_BURST, rb))))
    alen = wire(m, f"{name}_alen", rb, piece - num(1, rb))
    c.unused.append((alen[8:rb], rb - 8))
    for shift in shifts:  # the burst's bytes: its beats shifted by the beat's bytes (a wide bus: no room left)
        pad = ADDR - rb - shift
        parts = ([num(0, pad)] if pad > 0 else []) + [piece if pad >= 0 else piece[0:rb + pad]] + (
            [num(0, shift)] if shift else [])
        if pad < 0:
            c.unused.append((piece[rb + pad:rb], -pad))
        bytes_t.append(Cat(*parts))
    pbytes = wire(m, f"{name}_pbytes", ADDR, pick(t_sel, t_bits, bytes_t))
    return first, addr_r, rem_r, addr, rem, piece, alen, pbytes


def address_channel(c: Ctx, ch: str, may_issue, walk_last, step, start, restart, issue: tuple, size):
    """AR or AW (``ch``): the current burst out while ``may_issue``; the walker steps when a
    run's last burst is taken and restarts on ``restart``. Returns (handshake, run done)."""
    m = c.m
    addr, rem, piece, alen = issue
    valid = m.Wire(f"{ch}_valid")
    m.Assign(valid(may_issue))
    hs = m.Wire(f"{ch}_hs")
    m.Assign(hs(valid & c.mi[f"{ch}ready"]))
    run_end = m.Wire(f"{ch}_run_end")
    m.Assign(run_end(hs & (piece == rem)))
    m.Assign(step(run_end & ~walk_last))
    m.Assign(start(restart))
    for name, value in (("valid", valid), ("addr", addr), ("len", alen[0:8]), ("size", size), ("burst", num(1, 2)),
                        ("id", num(0, 1))):
        m.Assign(c.mo[f"{ch}{name}"](value))
    return hs, run_end
