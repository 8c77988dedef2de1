"""Controller generator: configuration registers, the counter group and address generators.

The counter group walks the temporal loop nest (seed 004 eq. 3.5) one step per
cycle with run-time bounds; each tensor's address generator keeps
``addr = sum_l stride_l * t_l`` incrementally as nested bases: ``base_l`` is the
address with every level inside ``l`` at zero; when level ``k`` advances, ``base_k``
gains ``stride_k`` and every inner base takes the new value (per tensor an adder per level,
the advancing level's index choosing among their sums); the run's last step leaves every
counter and base at 0. The strides do not depend on the bounds, so a partial last tile
(Ruby's last-iteration bound, seed 002) changes only the bound registers. ``first``
and ``commit`` mark the first and last step of the innermost reduction levels.
The bound registers are shadowed: a write goes to ``next_m1_<l>`` and ``next_0_<l>``, and
``start`` copies the shadows into the counters' bounds, so the next tile's bounds can be
written while a tile runs. ``start`` is accepted as soon as the steps of the previous run
are over (``running`` low, the ``stepping`` port): the new run's steps follow the previous
run's down the pipeline, so a run's drain overlaps the next run's steps (each step carries
its buffer halves with it, :mod:`lego_build.emit.top`). A one-bit pipeline ``drain`` deep
carries each run's end to ``fin``, a one-cycle pulse when its last write is done, and to
``rfin`` when its last input-bank read is (``read_drain`` cycles after its last step), in
order; ``busy`` is high while steps run or any run drains, ``done`` from the last ``fin``
until the next start.
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

    # the shadows of the bounds as written (a bound is a level's trips - 1), as the counters use
    # them: the bound - 1 and whether it is 0, each found as it is written, so that ``start``
    # copies flip-flops (issue 45: the comparator between next_<l> and last_0_<l>, 130.5 MHz)
    shadow_m1 = [m.Reg(f"next_m1_{l}", cw) for l in range(lv)]
    shadow_0 = [m.Reg(f"next_0_{l}") for l in range(lv)]
    stride = {t: [m.Reg(f"stride_{t}_{l}", aw) for l in range(lv)] for t in hm.tensors}
    cnt = [m.Reg(f"t_{l}", cw) for l in range(lv)]
    base = {t: [m.Reg(f"b_{t}_{l}", aw) for l in range(lv)] for t in hm.tensors}
    running = m.Reg("running")
    drain = m.Reg("drain", hm.drain)  # bit i: a run ended i + 1 cycles ago
    done_r = m.Reg("done_r")
    # wrap_l (t_l at its bound's last index, copied from next_0_l at start) is a register set a step
    # ahead: from t_l == last - 1 as t_l counts up, from last == 0 as it wraps to 0 or a run
    # starts; the comparators end at flip-flops instead of in front of the bases' multiplexers
    # and adder (issue 45)
    wrap = [m.Reg(f"wrap_{l}") for l in range(lv)]
    last_m1 = [m.Reg(f"last_m1_{l}", cw) for l in range(lv)]
    last_0 = [m.Reg(f"last_0_{l}") for l in range(lv)]

    red = range(lv - hm.reduction_levels, lv)
    holds = max(hm.out_periods, default=1) > 1
    # with a hold, each reduction level's trips (its bound + 1, saturated) registered as its bound is
    # written, so the hold's product starts at flip-flops (issue 45: the adder and saturation in
    # front of it were the GW1NR-9's worst path, next_<l> -> hold_n)
    trip_regs = _trip_registers(m, hm, red, cfg_wdata) if holds else {}
    cfg_writes = _bound_writes(m, hm, cfg_addr, cfg_wdata, shadow_m1, shadow_0, trip_regs)
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
    base_steps = _base_steps(m, hm, base, stride, wrap, all_wrap)
    step.append(If(all_wrap(range(lv)))(running(0)))
    holding, hold_copy = None, []
    if holds:  # the first step of a short accumulation held (module docstring)
        hold = _hold(m, hm, [trip_regs[l][0] for l in red], df_sel if df_out is not None else None)
        holding, hold_copy, step = _hold_counter(m, hold, step, all_wrap(red))
    ends = m.Wire("run_ends")
    m.Assign(ends(running & all_wrap(range(lv)) & ~holding if holding is not None else running & all_wrap(range(lv))))
    zero = Int(0, hm.drain, base=10)
    shifted = ends if hm.drain == 1 else Cat(drain[0:hm.drain - 1], ends)
    m.Assign(fin(drain[hm.drain - 1]))
    m.Assign(rfin(drain[(hm.read_drain or hm.drain) - 1]))

    m.Always(Posedge(clk))(
        If(rst)(running(0), drain(zero), done_r(0), *[c(Int(0, cw, base=10)) for c in cnt])
        .Else(
            drain(shifted),
            If(fin)(done_r(1)),
            If(start & ~running)(
                running(1), done_r(0),
                *[a(b) for a, b in zip(last_m1, shadow_m1)],
                *[w(b) for w, b in zip(wrap, shadow_0)],
                *[z(b) for z, b in zip(last_0, shadow_0)],
                *hold_copy,
            ).Elif(running)(*step),
        )
    )
    # the last step leaves every counter (they wrap) and base at 0: ``start`` then needs to set none
    # of them (issue 45: start as the enable of every counter and base, 400 flip-flops across the
    # part, was the GW1NR-9's worst path, 106.5 MHz); the bases' zero is their synchronous reset
    zeros = [b(Int(0, aw, base=10)) for bs in base.values() for b in bs]
    m.Always(Posedge(clk))(If(rst | ends)(*zeros).Elif(running & ~holding if holding is not None else running)(
        *base_steps))
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


def _base_steps(m: Module, hm: HostMap, base: dict, stride: dict, wrap: list, all_wrap) -> list:
    """Each tensor's bases at a step (the module docstring's nested bases)."""
    aw, lv = hm.addr_bits, hm.levels
    step = []
    # the level that advances: the innermost whose counter does not wrap, or 0 when every one does (the
    # run's last step), a binary index from the wrap flags (flip-flops) found beside the adders
    ib = max(1, (lv - 1).bit_length())
    idx = Int(0, ib, base=10)
    for l in range(1, lv):  # outer first, so the innermost non-wrapping level wins
        idx = Mux(wrap[l], idx, Int(l, ib, base=10))
    advance = m.Wire("advance", ib)
    m.Assign(advance(idx))
    for t in hm.tensors:
        # each level's next base added beside the others, the level's index choosing among the sums
        # by a tree of 2:1 multiplexers (issue 45: a chain of wrap-flag multiplexers in front of one
        # adder was the GW1NR-9's critical path, 126.5 MHz; behind the adders, 103 MHz); at the last
        # step the sums' choice does not matter: the bases are reset
        sums = []
        for l in range(lv):
            w = m.Wire(f"sum_{t}_{l}", aw)
            m.Assign(w(base[t][l] + stride[t][l]))
            sums.append(w)
        terms = sums
        for bit in range(ib):
            terms = [Mux(advance[bit], terms[i + 1], terms[i]) if i + 1 < len(terms) else terms[i]
                     for i in range(0, len(terms), 2)]
        nxt = m.Wire(f"next_{t}", aw)
        m.Assign(nxt(terms[0]))
        step += [base[t][l](nxt) if l == lv - 1 else If(all_wrap(range(l + 1, lv)))(base[t][l](nxt))
                 for l in range(lv)]
    return step


def _bound_writes(m: Module, hm: HostMap, cfg_addr, cfg_wdata, shadow_m1: list, shadow_0: list,
                  trip_regs: dict) -> list:
    """The writes of the bound registers: the bound - 1 found one bit wider, its top bit (the
    borrow) whether the bound is 0 (a carry chain, not a tree of LUTs behind the adder)."""
    cw = hm.counter_bits
    cfg_m1 = m.Wire("cfg_wdata_m1", cw + 1)
    m.Assign(cfg_m1(Cat(Int(0, 1, base=10), cfg_wdata) - Int(1, cw + 1, base=10)))
    return [If(cfg_addr == Int(hm.bound_reg(l), hm.cfg_addr_bits, base=10))(
        shadow_m1[l](cfg_m1[0:cw]), shadow_0[l](cfg_m1[cw]), *([trip_regs[l][1]] if l in trip_regs else []))
        for l in range(hm.levels)]


def _hold_counter(m: Module, hold, step: list, red_wrap):
    """The hold's counter ``hold_left`` (reloaded from ``hold_n`` as each accumulation ends) and
    ``holding`` (``hold_left != 0``) as a flip-flop set with it, not a comparator in front of every
    counter's enable (issue 45); ``hold_nz``: ``hold_n != 0``. Returns ``holding``, the copies
    ``start`` makes and the steps, held while ``holding``."""
    hw = hold.width
    hold_n, hold_left = m.Reg("hold_n", hw), m.Reg("hold_left", hw)
    holding, hold_nz = m.Reg("holding"), m.Reg("hold_nz")
    nz = m.Wire("hold_cycles_nz")
    m.Assign(nz(hold != Int(0, hw, base=10)))
    step = [*step, If(red_wrap)(hold_left(hold_n), holding(hold_nz))]
    held = [If(holding)(hold_left(hold_left - Int(1, hw, base=10)), holding(hold_left != Int(1, hw, base=10)))
            .Else(*step)]
    return holding, [hold_n(hold), hold_left(hold), hold_nz(nz), holding(nz)], held


def _saturate(x, width: int, top: int):
    """``x`` (``width`` bits) saturated at ``top``, in ``top``'s bits."""
    bits = top.bit_length()
    return Mux(x >= Int(top, width, base=10), Int(top, bits, base=10), x[0:bits])


def _trip_registers(m: Module, hm: HostMap, red, cfg_wdata) -> dict:
    """Per reduction level ``l``: a register of its trips, the written bound + 1 saturated at the
    longest period ``top`` (the bound compared with ``top - 1`` beside the narrow adder), and its
    write."""
    top, cw = max(hm.out_periods), hm.counter_bits
    bits = top.bit_length()
    written = m.Wire("hold_trips", bits)
    m.Assign(written(Mux(cfg_wdata >= Int(top - 1, cw, base=10), Int(top, bits, base=10),
                         cfg_wdata[0:bits] + Int(1, bits, base=10))))
    regs = {}
    for k, l in enumerate(red):
        reg = m.Reg(f"hold_b{k}", bits)
        regs[l] = (reg, reg(written))
    return regs


def _hold(m: Module, hm: HostMap, trips_per_level: list, df_sel):
    """The hold cycles of each accumulation of the next run: ``need - P`` where the run's reduction
    trips ``P`` (the levels' trip registers multiplied, saturating at ``need``) are fewer than the
    running dataflow's period ``need`` (``df_sel``; the design's one), else 0 (a wire)."""
    top = max(hm.out_periods)
    bits = top.bit_length()
    trips = None
    for k, b in enumerate(trips_per_level):
        if trips is None:
            trips = b
            continue
        prodw = m.Wire(f"hold_p{k}", 2 * bits)
        m.Assign(prodw(b * trips))
        trips = m.Wire(f"hold_t{k}", bits)
        m.Assign(trips(_saturate(prodw, 2 * bits, top)))
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
