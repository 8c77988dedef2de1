"""Controller generator: configuration registers, the counter group and address generators.

The counter group walks the temporal loop nest (seed 004 eq. 3.5) one step per
cycle with run-time bounds; each tensor's address generator keeps
``addr = sum_l stride_l * t_l`` incrementally as nested bases: ``base_l`` is the
address with every level inside ``l`` at zero; when level ``k`` advances, ``base_k``
gains ``stride_k`` and every inner base takes the new value (per tensor an adder per level,
the wrap flags choosing among their sums).
The strides do not depend on the bounds, so a partial last tile (Ruby's
last-iteration bound, seed 002) changes only the bound registers. ``first``
and ``commit`` mark the first and last step of the innermost reduction levels.
The bound registers are shadowed: a write goes to ``next_<l>``, and ``start`` copies
the shadows into the counters' bounds, so the next tile's bounds can be written while a tile
runs. ``start`` is accepted as soon as the steps of the previous run are over (``running``
low, the ``stepping`` port): the new run's steps follow the previous run's down the
pipeline, so a run's drain overlaps the next run's steps (each step carries its buffer
halves with it, :mod:`lego_build.emit.top`). A one-bit pipeline ``drain`` deep carries each
run's end to ``fin``, a one-cycle pulse when its last write is done, and to ``rfin`` when its
last input-bank read is (``read_drain`` cycles after its last step), in order; ``busy`` is
high while steps run or any run drains, ``done`` from the last ``fin`` until the next start.
With shared output lanes (:mod:`lego_build.ir.outshare`) an accumulation shorter than the
running dataflow's period ``need`` (``HostMap.out_periods``) holds its first step ``need - P``
cycles (``P``: the run's reduction trips, saturated at ``need``, from the bounds ``start`` copies):
the counters and every address stay, ``first`` stays high, so each FU's accumulator reloads the
same product, and ``commit`` waits until the hold is over, so no two FUs of a lane commit in one
cycle (each FU sees the hold at its own delay, as it sees every step).
``ok<k>`` is high at the steps where FIFO group ``k``'s source step lies inside the
loop nest (every counter within its configured ``[lo, hi]``); ``depth<k>`` is the
group's configured FIFO depth; ``ppu_mode``, ``ppu_scale``, ``ppu_shift`` configure
the post-processing unit.
"""
from __future__ import annotations

from functools import reduce

from veriloggen import Ands, Cat, If, Int, Module, Mux, Posedge

from lego_build.backend.interface import HostMap


def mk_ctrl(hm: HostMap) -> Module:
    cw, aw, lv = hm.counter_bits, hm.addr_bits, hm.levels
    m = Module("lego_ctrl")
    clk = m.Input("clk")
    rst = m.Input("rst")
    cfg_we = m.Input("cfg_we")
    cfg_addr = m.Input("cfg_addr", hm.cfg_addr_bits)
    cfg_wdata = m.Input("cfg_wdata", cw)
    start = m.Input("start")
    busy = m.Output("busy")
    done = m.Output("done")
    running_out = m.Output("stepping")
    fin = m.Output("fin")
    rfin = m.Output("rfin")
    first = m.Output("first")
    commit = m.Output("commit")
    addr_out = {t: m.Output(f"addr_{t}", aw) for t in hm.tensors}
    df_out = m.Output("df", hm.df_bits) if hm.dataflows else None
    ok_out = [m.Output(f"ok{k}") for k in range(len(hm.shifts))]
    ppu_out = {name: m.Output(f"ppu_{name}", bits) for name, bits in (("mode", 3), ("scale", 16), ("shift", 6))} \
        if hm.ppu else {}
    depth_out = [m.Output(f"depth{k}", hm.fifo_depth_bits) if cap > 1 else None
                 for k, cap in enumerate(hm.fifo_capacities)]

    shadow = [m.Reg(f"next_{l}", cw) for l in range(lv)]
    stride = {t: [m.Reg(f"stride_{t}_{l}", aw) for l in range(lv)] for t in hm.tensors}
    cnt = [m.Reg(f"t_{l}", cw) for l in range(lv)]
    base = {t: [m.Reg(f"b_{t}_{l}", aw) for l in range(lv)] for t in hm.tensors}
    running = m.Reg("running")
    drain = m.Reg("drain", hm.drain)  # bit i: a run ended i + 1 cycles ago
    done_r = m.Reg("done_r")
    # wrap_l (t_l at its bound's last index, copied from next_l at start) is a register set a step
    # ahead: from t_l == last - 1 as t_l counts up, from last == 0 as it wraps to 0 or a run
    # starts; the comparators end at flip-flops instead of in front of the bases' multiplexers
    # and adder (issue 45)
    wrap = [m.Reg(f"wrap_{l}") for l in range(lv)]
    last_m1 = [m.Reg(f"last_m1_{l}", cw) for l in range(lv)]
    last_0 = [m.Reg(f"last_0_{l}") for l in range(lv)]

    cfg_writes = [If(cfg_addr == Int(hm.bound_reg(l), hm.cfg_addr_bits, base=10))(shadow[l](cfg_wdata))
                  for l in range(lv)]
    for ti, t in enumerate(hm.tensors):
        for l in range(lv):
            reg_index = Int(hm.stride_reg(ti, l), hm.cfg_addr_bits, base=10)
            value = cfg_wdata if aw == cw else cfg_wdata[0:aw]
            cfg_writes.append(If(cfg_addr == reg_index)(stride[t][l](value)))
    if df_out is not None:
        df_sel = m.Reg("df_sel", hm.df_bits)
        value = cfg_wdata if hm.df_bits == cw else cfg_wdata[0:hm.df_bits]
        cfg_writes.append(If(cfg_addr == Int(hm.df_reg, hm.cfg_addr_bits, base=10))(df_sel(value)))
        m.Assign(df_out(df_sel))
    fifo_lo, fifo_hi = _fifo_and_ppu_registers(m, hm, cfg_addr, cfg_wdata, depth_out, ppu_out, cfg_writes)
    m.Always(Posedge(clk))(If(cfg_we)(*cfg_writes))

    def all_wrap(levels):
        levels = list(levels)
        return Ands(*[wrap[l] for l in levels]) if len(levels) > 1 else wrap[levels[0]]

    step = []
    for l in range(lv):
        bump = [cnt[l](Mux(wrap[l], Int(0, cw, base=10), cnt[l] + Int(1, cw, base=10))),
                wrap[l](Mux(wrap[l], last_0[l], cnt[l] == last_m1[l]))]
        step += bump if l == lv - 1 else [If(all_wrap(range(l + 1, lv)))(*bump)]
    for t in hm.tensors:
        # each level's next base added beside the others, the wrap flags choosing among the sums
        # (issue 45: a chain of wrap-flag multiplexers in front of one adder was the GW1NR-9's
        # critical path, 126.5 MHz)
        sel = base[t][0] + stride[t][0]
        for l in range(1, lv):  # outer first, so the innermost non-wrapping level wins
            sums = m.Wire(f"sum_{t}_{l}", aw)
            m.Assign(sums(base[t][l] + stride[t][l]))
            sel = Mux(wrap[l], sel, sums)
        nxt = m.Wire(f"next_{t}", aw)
        m.Assign(nxt(sel))
        step += [base[t][l](nxt) if l == lv - 1 else If(all_wrap(range(l + 1, lv)))(base[t][l](nxt))
                 for l in range(lv)]
    step.append(If(all_wrap(range(lv)))(running(0)))
    red = range(lv - hm.reduction_levels, lv)
    hold = _hold(m, hm, shadow, red, df_sel if df_out is not None else None) \
        if max(hm.out_periods, default=1) > 1 else None
    holding = None
    if hold is not None:  # the first step of a short accumulation held (module docstring)
        hold_n, hold_left = m.Reg("hold_n", hold.width), m.Reg("hold_left", hold.width)
        holding = m.Wire("holding")
        m.Assign(holding(hold_left != Int(0, hold.width, base=10)))
        step.append(If(all_wrap(red))(hold_left(hold_n)))
        step = [If(holding)(hold_left(hold_left - Int(1, hold.width, base=10))).Else(*step)]
    ends = m.Wire("run_ends")
    m.Assign(ends(running & all_wrap(range(lv)) & ~holding if holding is not None else running & all_wrap(range(lv))))
    zero = Int(0, hm.drain, base=10)
    shifted = ends if hm.drain == 1 else Cat(drain[0:hm.drain - 1], ends)
    m.Assign(fin(drain[hm.drain - 1]))
    m.Assign(rfin(drain[(hm.read_drain or hm.drain) - 1]))

    m.Always(Posedge(clk))(
        If(rst)(running(0), drain(zero), done_r(0))
        .Else(
            drain(shifted),
            If(fin)(done_r(1)),
            If(start & ~running)(
                running(1), done_r(0), *[c(Int(0, cw, base=10)) for c in cnt],
                *[b(Int(0, aw, base=10)) for bs in base.values() for b in bs],
                *[a(b - Int(1, cw, base=10)) for a, b in zip(last_m1, shadow)],
                *[w(b == Int(0, cw, base=10)) for w, b in zip(wrap, shadow)],
                *[z(b == Int(0, cw, base=10)) for z, b in zip(last_0, shadow)],
                *([hold_n(hold), hold_left(hold)] if hold is not None else []),
            ).Elif(running)(*step),
        )
    )
    m.Assign(first(reduce(lambda a, b: a & b, [cnt[l] == Int(0, cw, base=10) for l in red])))
    m.Assign(commit(running & all_wrap(red) & ~holding if holding is not None else running & all_wrap(red)))
    m.Assign(busy(running | (drain != zero)))
    m.Assign(running_out(running))
    m.Assign(done(done_r))
    for t in hm.tensors:
        m.Assign(addr_out[t](base[t][lv - 1]))
    for k, ok in enumerate(ok_out):
        inside = [(cnt[l] >= fifo_lo[k][l]) & (cnt[l] <= fifo_hi[k][l]) for l in range(lv)]
        m.Assign(ok(reduce(lambda a, b: a & b, inside)))
    return m


def _hold(m: Module, hm: HostMap, shadow: list, red, df_sel):
    """The hold cycles of each accumulation of the next run: ``need - P`` where the run's reduction
    trips ``P`` (the shadow bounds + 1, multiplied saturating at ``need``) are fewer than the
    running dataflow's period ``need`` (``df_sel``; the design's one), else 0 (a wire)."""
    top = max(hm.out_periods)
    bits = top.bit_length()
    cw = hm.counter_bits
    limit = Int(top, bits, base=10)

    def sat(x, width):
        return Mux(x >= Int(top, width, base=10), limit, x[0:bits])

    trips = None
    for k, l in enumerate(red):
        bound = m.Wire(f"hold_trips{k}", cw)  # a bound of 2**cw trips would wrap: no layer has one
        m.Assign(bound(shadow[l] + Int(1, cw, base=10)))
        b = m.Wire(f"hold_b{k}", bits)
        m.Assign(b(sat(bound, cw)))
        if trips is None:
            trips = b
            continue
        prodw = m.Wire(f"hold_p{k}", 2 * bits)
        m.Assign(prodw(b * trips))
        trips = m.Wire(f"hold_t{k}", bits)
        m.Assign(trips(sat(prodw, 2 * bits)))
    needs = [Int(need, bits, base=10) for need in hm.out_periods]
    need = needs[0]
    for k in range(1, len(needs)):
        need = Mux(df_sel == Int(k, hm.df_bits, base=10), needs[k], need)
    out = m.Wire("hold_cycles", bits)
    if trips is None:  # no reduction level: one step per accumulation
        m.Assign(out(need - Int(1, bits, base=10)))
    else:
        m.Assign(out(Mux(trips < need, need - trips, Int(0, bits, base=10))))
    return out


def _fifo_and_ppu_registers(m: Module, hm: HostMap, cfg_addr, cfg_wdata, depth_out: list, ppu_out: dict,
                            cfg_writes: list) -> tuple[list, list]:
    """The FIFO groups' depth and window registers and the PPU's, driving their outputs; their
    configuration writes appended to ``cfg_writes``. Returns the windows' (lo, hi) registers."""
    cw, lv = hm.counter_bits, hm.levels
    fifo_lo, fifo_hi = [], []
    for k in range(len(hm.shifts)):
        if depth_out[k] is not None:  # one-word FIFOs need no depth register
            depth = m.Reg(f"fifo_depth_{k}", hm.fifo_depth_bits)
            value = cfg_wdata if hm.fifo_depth_bits == cw else cfg_wdata[0:hm.fifo_depth_bits]
            cfg_writes.append(If(cfg_addr == Int(hm.fifo_depth_reg(k), hm.cfg_addr_bits, base=10))(depth(value)))
            m.Assign(depth_out[k](depth))
        fifo_lo.append([m.Reg(f"fifo_lo_{k}_{l}", cw) for l in range(lv)])
        fifo_hi.append([m.Reg(f"fifo_hi_{k}_{l}", cw) for l in range(lv)])
        for l in range(lv):
            cfg_writes += [
                If(cfg_addr == Int(hm.fifo_lo_reg(k, l), hm.cfg_addr_bits, base=10))(fifo_lo[k][l](cfg_wdata)),
                If(cfg_addr == Int(hm.fifo_hi_reg(k, l), hm.cfg_addr_bits, base=10))(fifo_hi[k][l](cfg_wdata)),
            ]
    regs = {"mode": hm.ppu_mode_reg, "scale": hm.ppu_scale_reg, "shift": hm.ppu_shift_reg}
    for name, port in ppu_out.items():
        reg = m.Reg(f"ppu_{name}_r", port.width)
        value = cfg_wdata if port.width == cw else cfg_wdata[0:port.width]
        cfg_writes.append(If(cfg_addr == Int(regs[name], hm.cfg_addr_bits, base=10))(reg(value)))
        m.Assign(port(reg))
    return fifo_lo, fifo_hi
