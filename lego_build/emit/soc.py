"""The memory system around the array: ``lego_soc`` (register map and DRAM layout:
:mod:`lego_build.ir.soc`).

Blocks, each a function below, in one module so the generated Verilog reads top down:

* :func:`_registers`: the AXI4-Lite slave; a write at or above ``core_base`` is a write of
  the array's own configuration register; misaligned or partial writes get SLVERR.
* :func:`_sequencer`: walks the layer's tiles (outer to inner, the reduction levels
  innermost, so an output tile stays in its bank half while its reduction tiles
  accumulate). It keeps three activities going at once, as a double-buffered level
  does in the cost model: the DMA loads tile ``j+1`` into one input half while the array
  computes tile ``j`` from the other, and writes output tile ``o-1`` back from one output
  half while the array accumulates tile ``o`` into the other. Per tile it writes the
  array's (shadow) bound registers while the previous tile steps (full trips, or the
  remainder trips of a last tile: Ruby's last-iteration bound, seed 002) and starts it
  the cycle after the previous tile's last step, so one tile's drain overlaps the next;
  a tile's input half is free again at its ``rfin`` (its last bank read), its output tile
  ready to store at its ``fin``.
* :func:`_loader` / :func:`_storer`: the DMA's read and write engines, one AXI ID (0), so
  responses come back in order; an error response or a foreign ID sets STATUS bit 2. A tensor's tile is
  a strided box of rows (:mod:`lego_build.ir.soc`); rows contiguous in DRAM (the innermost
  level the tensor depends on) go out as one INCR burst, split at 256 beats and 4 KB
  boundaries; a row narrower than the bus shares its beat with the next rows of its run (up
  to ``fill``, :func:`lego_build.backend.interface.fill_rows`), and the banks take them in one write
  (sub-banks interleaved by address), so a tile's load can outrun the array, which reads one
  row per cycle; a row wider than the bus is several beats. The storer
  reads one row per cycle from the output half being written back and sends each beat's
  words through the PPU (:func:`_ppu_beat`: one requantise-and-ReLU lane per word of a beat,
  one activation table they share, configured with the array's PPU registers), so a layer's
  results reach memory post-processed; they stay one word each, sign-extended.

Every address walker is :func:`walker`: nested bases, no multiplier (the controller's
scheme, :mod:`lego_build.emit.ctrl`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from veriloggen import Cat, If, Int, Module, Mux, Posedge, Repeat, StubModule

from lego_build.ir.host import HostMap, clog2
from lego_build.ir.soc import COUNTERS, CTRL, CYCLES, STATUS, SocMap
from rtl_templates_free import mk_ppu_lane, mk_table
from rtl_templates_free.primitives import PPU_TABLE

ADDR = 32  # AXI address bits
MAX_BURST = 256  # AXI4 INCR burst length limit (beats)


def _i(v: int, w: int):
    return Int(v, w, base=10)


def _ors(terms):
    return reduce(lambda a, b: a | b, terms)


def _ands(terms):
    return reduce(lambda a, b: a & b, terms)


def _pick(sel, width: int, options: list):
    """``options[sel]`` as a multiplexer chain (the last option is the default)."""
    out = options[-1]
    for k in reversed(range(len(options) - 1)):
        out = Mux(sel == _i(k, width), options[k], out)
    return out


def _bit(sig, k: int, n: int):
    """Bit ``k`` of an ``n``-bit signal (a one-bit signal has no bit range)."""
    return sig[k] if n > 1 else sig


def _deps(c, t: int) -> list:
    """Per level, whether tensor ``t``'s rows move along it (its bank stride is not zero)."""
    return [c.regs["bank"][t][l] != _i(0, c.hm.addr_bits) for l in range(c.hm.levels)]


def _first(bits: list, indices: list, width: int):
    """The first of ``indices`` whose bit is set (the last one when none is)."""
    out = _i(indices[-1], width)
    for u in reversed(indices[:-1]):
        out = Mux(bits[u], _i(u, width), out)
    return out


def _min(a, b):
    return Mux(a < b, a, b)


def _wire(m: Module, name: str, width: int, expr):
    """``expr`` on a named wire (Verilog cannot part-select an expression)."""
    wire = m.Wire(name, width)
    m.Assign(wire(expr))
    return wire


def walker(m: Module, clk, name: str, lasts: list, cw: int, streams: list, start, step):
    """Nested loops with per-level last indices ``lasts`` (outer to inner) and affine address
    ``streams`` (``(width, base, strides)``): ``start`` loads the bases, ``step`` advances one
    point. Returns (counters, addresses, all-last)."""
    lv = len(lasts)
    cnt = [m.Reg(f"{name}_t{l}", cw) for l in range(lv)]
    wrap = [m.Wire(f"{name}_wrap{l}") for l in range(lv)]
    for l in range(lv):
        m.Assign(wrap[l](cnt[l] == lasts[l]))

    def all_wrap(levels):
        return _ands([wrap[l] for l in levels])

    on_start = [c(_i(0, cw)) for c in cnt]
    on_step = []
    for l in range(lv):
        bump = cnt[l](Mux(wrap[l], _i(0, cw), cnt[l] + _i(1, cw)))
        on_step.append(bump if l == lv - 1 else If(all_wrap(range(l + 1, lv)))(bump))
    addrs = []
    for s, (width, base0, strides) in enumerate(streams):
        bases = [m.Reg(f"{name}_b{s}_{l}", width) for l in range(lv)]
        bsel, ssel = bases[0], strides[0]
        for l in range(1, lv):
            bsel, ssel = Mux(wrap[l], bsel, bases[l]), Mux(wrap[l], ssel, strides[l])
        nxt = m.Wire(f"{name}_next{s}", width)
        m.Assign(nxt(bsel + ssel))
        on_start += [b(base0) for b in bases]
        on_step += [bases[l](nxt) if l == lv - 1 else If(all_wrap(range(l + 1, lv)))(bases[l](nxt))
                    for l in range(lv)]
        addrs.append(bases[-1])
    m.Always(Posedge(clk))(If(start)(*on_start).Elif(step)(*on_step))
    done = m.Wire(f"{name}_last")
    m.Assign(done(all_wrap(range(lv))))
    return cnt, addrs, done


@dataclass
class _Ctx:
    """Signals the blocks share."""

    m: Module
    hm: HostMap
    sm: SocMap
    clk: object
    rst: object
    regs: dict
    core: dict
    mi: dict
    mo: dict
    w: dict  # wires between blocks
    unused: list  # bits no block reads (collected on one wire Verilator's lint ignores by name)


def mk_soc(hm: HostMap, sm: SocMap) -> tuple[Module, list[Module]]:
    """``lego_soc`` and the modules it instantiates besides ``lego_top`` (the PPU's lanes)."""
    if hm.counter_bits > 32:
        raise ValueError(f"{hm.counter_bits}-bit loop counters do not fit the 32-bit registers")
    lv, cw, aw = hm.levels, hm.counter_bits, hm.addr_bits
    nt = len(sm.tensors)
    bw = sm.bus_bits
    m = Module("lego_soc")
    clk = m.Input("clk")
    rst = m.Input("rst")
    axw = sm.axil_addr_bits
    s_in = {n: m.Input(f"s_axil_{n}", w) for n, w in (
        ("awaddr", axw), ("awvalid", 1), ("wdata", 32), ("wstrb", 4), ("wvalid", 1), ("bready", 1),
        ("araddr", axw), ("arvalid", 1), ("rready", 1))}
    s_out = {n: m.Output(f"s_axil_{n}", w) for n, w in (
        ("awready", 1), ("wready", 1), ("bresp", 2), ("bvalid", 1), ("arready", 1), ("rdata", 32), ("rresp", 2),
        ("rvalid", 1))}
    mi = {n: m.Input(f"m_axi_{n}", w) for n, w in (
        ("arready", 1), ("rid", 1), ("rdata", bw), ("rresp", 2), ("rlast", 1), ("rvalid", 1), ("awready", 1),
        ("wready", 1), ("bid", 1), ("bresp", 2), ("bvalid", 1))}
    mo = {n: m.Output(f"m_axi_{n}", w) for n, w in (
        ("arid", 1), ("araddr", ADDR), ("arlen", 8), ("arsize", 3), ("arburst", 2), ("arvalid", 1), ("rready", 1),
        ("awid", 1), ("awaddr", ADDR), ("awlen", 8), ("awsize", 3), ("awburst", 2), ("awvalid", 1), ("wdata", bw),
        ("wstrb", sm.bus_bytes), ("wlast", 1), ("wvalid", 1), ("bready", 1))}
    irq = m.Output("irq")
    regs = {
        "tiles": [m.Reg(f"tiles_{l}", cw) for l in range(lv)],
        "full": [m.Reg(f"full_{l}", cw) for l in range(lv)],
        "rem": [m.Reg(f"rem_{l}", cw) for l in range(lv)],
        "base": [m.Reg(f"base_{t}", ADDR) for t in range(nt)],
        "row": [[m.Reg(f"row_stride_{t}_{l}", ADDR) for l in range(lv)] for t in range(nt)],
        "tile": [[m.Reg(f"tile_stride_{t}_{l}", ADDR) for l in range(lv)] for t in range(nt)],
        "bank": [[m.Reg(f"bank_stride_{t}_{l}", aw) for l in range(lv)] for t in range(nt)],
    }
    core = {n: m.Wire(f"core_{n}", w) for n, w in (
        ("cfg_we", 1), ("cfg_addr", hm.cfg_addr_bits), ("cfg_wdata", cw), ("start", 1), ("busy", 1), ("done", 1),
        ("stepping", 1), ("fin", 1), ("rfin", 1),
        ("in_half", len(hm.input_tensors)), ("out_half", 1), ("acc", 1), ("dma_we", 1), ("dma_half", 1),
        ("dma_tensor", hm.tensor_bits),
        ("dma_addr", aw), ("dma_row", hm.fill * hm.in_row_bits), *([("dma_mask", hm.fill)] if hm.fill > 1 else []),
        ("dma_raddr", aw), ("dma_rhalf", 1), ("dma_ren", 1),
        ("dma_rrow", hm.out_row_bits), ("rd_data", hm.out_bits))}
    tied = [("host_we", _i(0, 1)), ("host_tensor", _i(0, hm.tensor_bits)), ("host_lane", _i(0, hm.lane_bits)),
            ("host_addr", _i(0, aw)), ("host_wdata", _i(0, hm.operand_bits)), ("rd_lane", _i(0, hm.lane_bits)),
            ("rd_addr", _i(0, aw))]
    m.Instance(StubModule("lego_top"), "u_array", ports=[("clk", clk), ("rst", rst)] + tied + list(core.items()))
    wires = {n: m.Wire(n, w) for n, w in (
        ("go", 1), ("finish", 1), ("err", 1), ("host_cfg_we", 1), ("host_cfg_addr", hm.cfg_addr_bits),
        ("host_cfg_wdata", cw), ("ld_start", 1), ("ld_done", 1), ("st_start", 1), ("st_done", 1),
        ("rd_beat", 1), ("wr_beat", 1), ("ld_mask", len(hm.input_tensors)), ("ld_tgt", len(hm.input_tensors)))}
    c = _Ctx(m, hm, sm, clk, rst, regs, core, mi, mo, wires, [(core["rd_data"], hm.out_bits), (core["done"], 1)])
    state = _registers(c, s_in, s_out, irq)
    _dataflow_register(c)
    _sequencer(c, state)
    _loader(c)
    _storer(c)
    _wire(m, "unused_bits", sum(w for _, w in c.unused), Cat(*[x for x, _ in c.unused]))
    return m, [mk_ppu_lane(hm.out_bits), mk_table(*PPU_TABLE)] if hm.ppu else []


def _fields(c: _Ctx) -> list:
    sm, r = c.sm, c.regs
    out = []
    for l in range(sm.levels):
        out += [(sm.tiles_reg(l), r["tiles"][l]), (sm.full_reg(l), r["full"][l]), (sm.rem_reg(l), r["rem"][l])]
    for t in range(len(sm.tensors)):
        out.append((sm.base_reg(t), r["base"][t]))
        for l in range(sm.levels):
            out += [(sm.row_stride_reg(t, l), r["row"][t][l]), (sm.tile_stride_reg(t, l), r["tile"][t][l]),
                    (sm.bank_stride_reg(t, l), r["bank"][t][l])]
    return sorted(out, key=lambda x: x[0])


def _registers(c: _Ctx, s_in: dict, s_out: dict, irq) -> dict:
    """The AXI4-Lite slave: one write (address and data together) and one read at a time."""
    m, sm, w = c.m, c.sm, c.w
    axw = sm.axil_addr_bits
    iw = axw - 2
    irq_en = m.Reg("irq_en")
    done = m.Reg("done")
    busy = m.Reg("busy")
    axi_err = m.Reg("axi_err")
    go = m.Reg("go_r")
    bvalid, bresp = m.Reg("axil_bvalid"), m.Reg("axil_bresp", 2)
    rvalid, rdata, rresp = m.Reg("axil_rvalid"), m.Reg("axil_rdata", 32), m.Reg("axil_rresp", 2)
    counters = {n: m.Reg(f"cnt_{n}", 32) for n in COUNTERS}
    accept = m.Wire("axil_accept")
    m.Assign(accept(s_in["awvalid"] & s_in["wvalid"] & ~bvalid))
    widx = m.Wire("axil_widx", iw)
    m.Assign(widx(s_in["awaddr"][2:axw]))
    good = m.Wire("axil_good")
    m.Assign(good((s_in["awaddr"][0:2] == _i(0, 2)) & (s_in["wstrb"] == _i(15, 4))))
    for n, v in (("awready", accept), ("wready", accept), ("bvalid", bvalid), ("bresp", bresp),
                 ("arready", ~rvalid), ("rvalid", rvalid), ("rdata", rdata), ("rresp", rresp)):
        m.Assign(s_out[n](v))
    wdata = s_in["wdata"]
    m.Assign(w["host_cfg_we"](accept & good & (widx >= _i(sm.core_base, iw)) & ~busy))
    m.Assign(w["host_cfg_addr"](widx[0:c.hm.cfg_addr_bits]))
    m.Assign(w["host_cfg_wdata"](wdata if c.hm.counter_bits == 32 else wdata[0:c.hm.counter_bits]))
    if c.hm.ppu:
        _ppu_registers(c, wdata)
    writes = [If(widx == _i(idx, iw))(reg(wdata if reg.width == 32 else wdata[0:reg.width]))
              for idx, reg in _fields(c)]
    m.Always(Posedge(c.clk))(
        go(0),
        If(c.rst)(bvalid(0), irq_en(0), done(0), busy(0), axi_err(0))
        .Else(
            If(accept)(
                bvalid(1), bresp(Mux(good, _i(0, 2), _i(2, 2))),
                If(good & ~busy)(*writes),
                If(good & (widx == _i(CTRL, iw)))(
                    irq_en(wdata[1]),
                    If(wdata[0] & ~busy)(go(1), busy(1), done(0), axi_err(0))),
                If(good & (widx == _i(STATUS, iw)) & wdata[1])(done(0)))
            .Elif(s_in["bready"])(bvalid(0)),
            If(w["finish"])(busy(0), done(1)),
            If(w["err"])(axi_err(1))))
    ridx = m.Wire("axil_ridx", iw)
    m.Assign(ridx(s_in["araddr"][2:axw]))
    value = _i(0, 32)
    for idx, reg in _fields(c):
        value = Mux(ridx == _i(idx, iw), reg if reg.width == 32 else Cat(_i(0, 32 - reg.width), reg), value)
    for k, n in enumerate(COUNTERS):
        value = Mux(ridx == _i(CYCLES + k, iw), counters[n], value)
    value = Mux(ridx == _i(STATUS, iw), Cat(_i(0, 29), axi_err, done, busy), value)
    value = Mux(ridx == _i(CTRL, iw), Cat(_i(0, 30), irq_en, _i(0, 1)), value)
    m.Always(Posedge(c.clk))(
        If(c.rst)(rvalid(0))
        .Elif(s_in["arvalid"] & ~rvalid)(
            rvalid(1), rdata(value), rresp(Mux(s_in["araddr"][0:2] == _i(0, 2), _i(0, 2), _i(2, 2))))
        .Elif(s_in["rready"])(rvalid(0)))
    m.Assign(irq(done & irq_en))
    m.Assign(w["go"](go))
    return {"busy": busy, "counters": counters}


def _ppu_registers(c: _Ctx, wdata) -> None:
    """The memory system's copy of the array's PPU registers (mode, scale, shift), written
    with them: the output path's lanes (:func:`_ppu_beat`) read these; the table's writes
    go to each lane's copy of it (``ppu_table_we``)."""
    m, hm, w = c.m, c.hm, c.w
    ab = hm.cfg_addr_bits
    regs = {"mode": m.Reg("ppu_mode", 3), "scale": m.Reg("ppu_scale", 16), "shift": m.Reg("ppu_shift", 6)}
    addr = w["host_cfg_addr"]
    writes = [If(addr == _i(idx, ab))(reg(wdata[0:reg.width])) for idx, reg in (
        (hm.ppu_mode_reg, regs["mode"]), (hm.ppu_scale_reg, regs["scale"]), (hm.ppu_shift_reg, regs["shift"]))]
    m.Always(Posedge(c.clk))(If(w["host_cfg_we"])(*writes))
    table_we = m.Wire("ppu_table_we")
    m.Assign(table_we(w["host_cfg_we"] & (addr[8:ab] == _i(hm.ppu_lut_base >> 8, ab - 8))))
    c.w["ppu"], c.w["ppu_table"] = regs, {"we": table_we, "waddr": addr[0:8], "wdata": wdata[0:8]}


def _dataflow_register(c: _Ctx) -> None:
    """The memory system's copy of the array's dataflow select (written with it): a packed row's
    length and its lanes depend on the dataflow (:mod:`lego_build.frontend.packing`)."""
    m, hm, w = c.m, c.hm, c.w
    if not hm.dataflows:
        return
    sel = m.Reg("df_sel", hm.df_bits)
    m.Always(Posedge(c.clk))(If(w["host_cfg_we"] & (w["host_cfg_addr"] == _i(hm.df_reg, hm.cfg_addr_bits)))(
        sel(w["host_cfg_wdata"][0:hm.df_bits])))
    c.w["df"] = sel
    c.unused.append((sel, hm.df_bits))  # a design whose rows no dataflow packs reads it nowhere


def _per_df(c: _Ctx, options: list):
    """``options[d]`` for the running dataflow ``d`` (the only option of a single-dataflow design)."""
    if len(options) == 1 or all(o is options[0] for o in options):
        return options[0]
    return _pick(c.w["df"], c.hm.df_bits, options)


def _ndf(c: _Ctx) -> int:
    return max(1, len(c.hm.dataflows))


def _ppu_beat(c: _Ctx, name: str, values: list, out_bits: int, word_bits: int):
    """Output words through the PPU (one lane each, :func:`rtl_templates_free.mk_ppu_lane`,
    and a copy of the table per lane, :func:`rtl_templates_free.mk_table`: one read port
    each, as a table macro has; every copy takes every write), each sign-extended to
    ``word_bits``; a design without a PPU only sign-extends."""
    m, hm = c.m, c.hm
    out = []
    for i, x in enumerate(values):
        y = x
        if hm.ppu:
            regs = c.w["ppu"]
            v = m.Wire(f"{name}_ppu{i}", out_bits)
            m.Instance(StubModule(f"lego_ppu_lane_w{out_bits}"), f"u_{name}_ppu{i}", ports=[
                ("x", x), ("mode", regs["mode"][0:2]), ("scale", regs["scale"]), ("shift", regs["shift"]), ("y", v)])
            looked = m.Wire(f"{name}_looked{i}", 8)
            tw = c.w["ppu_table"]
            m.Instance(StubModule(mk_table(*PPU_TABLE).name), f"u_{name}_table{i}", ports=[
                ("clk", c.clk), ("we", tw["we"]), ("waddr", tw["waddr"]), ("wdata", tw["wdata"]), ("raddr", v[0:8]),
                ("rdata", looked)])
            y = Mux(regs["mode"][2], Cat(Repeat(looked[7], out_bits - 8), looked), v) if out_bits > 8 else \
                Mux(regs["mode"][2], looked, v)
            y = _wire(m, f"{name}_post{i}", out_bits, y)
        out.append(Cat(Repeat(y[out_bits - 1], word_bits - out_bits), y) if word_bits > out_bits else y)
    return out


def _bounds(c: _Ctx, idx: list, name: str) -> list:
    """Per level, the last trip index of the tile at tile index ``idx``: the remainder for a last tile."""
    r = c.regs
    out = []
    for l in range(c.hm.levels):
        b = c.m.Wire(f"{name}_bound{l}", c.hm.counter_bits)
        c.m.Assign(b(Mux(idx[l] == r["tiles"][l], r["rem"][l], r["full"][l])))
        out.append(b)
    return out


def _sequencer(c: _Ctx, state: dict) -> None:
    m, hm, r, w, core = c.m, c.hm, c.regs, c.w, c.core
    lv, cw = hm.levels, hm.counter_bits
    nin = len(hm.input_tensors)
    out_t = nin
    busy, counters = state["busy"], state["counters"]
    ld_next, cp_next = m.Wire("ld_next"), m.Wire("cp_next")
    ld_idx, ld_bases, ld_last = walker(m, c.clk, "ldw", r["tiles"], cw,
                                       [(ADDR, r["base"][t], r["tile"][t]) for t in range(nin)], w["go"], ld_next)
    cp_idx, (cp_base,), cp_last = walker(m, c.clk, "cpw", r["tiles"], cw,
                                         [(ADDR, r["base"][out_t], r["tile"][out_t])], w["go"], cp_next)
    c.w["ld_bounds"] = _bounds(c, ld_idx, "ld")
    c.w["ld_bases"] = ld_bases
    cp_b = _bounds(c, cp_idx, "cp")
    outer = _deps(c, out_t)  # levels of the output
    acc_now = m.Wire("cp_acc_now")
    m.Assign(acc_now(_ors([(cp_idx[l] != _i(0, cw)) & ~outer[l] for l in range(lv)])))
    ends_out = m.Wire("cp_ends_out")
    m.Assign(ends_out(_ands([(cp_idx[l] == r["tiles"][l]) | outer[l] for l in range(lv)])))

    # the input tensors the load walker's tile changes: at a step, a level moves when every
    # level inside it wraps and it has more than one tile; a tensor none of whose levels moves
    # keeps its bank half (its own ping-pong pointer) and is not loaded again
    dep = [_deps(c, t) for t in range(nin)]
    wraps = [ld_idx[l] == r["tiles"][l] for l in range(lv)]
    moves = [_ands([wraps[k] for k in range(l + 1, lv)] + [r["tiles"][l] != _i(0, cw)]) for l in range(lv)]
    changes = [_ors([moves[l] & dep[t][l] for l in range(lv)]) for t in range(nin)]
    chg_next = _wire(m, "ld_chg_next", nin, Cat(*reversed(changes)))
    ld_chg, last_half = m.Reg("ld_chg", nin), m.Reg("ld_last_half", nin)
    ld_mask, ld_tgt = m.Reg("ld_mask_r", nin), m.Reg("ld_tgt_r", nin)
    slot_half = [m.Reg(f"slot_half{h}", nin) for h in (0, 1)]
    tgt = _wire(m, "ld_tgt_next", nin, last_half ^ ld_chg)
    every = _i((1 << nin) - 1, nin)

    in_full = [m.Reg(f"in_full{h}") for h in (0, 1)]  # loaded, not yet started
    in_use = [m.Reg(f"in_use{h}") for h in (0, 1)]  # started, its bank reads not yet done
    out_busy = [m.Reg(f"out_busy{h}") for h in (0, 1)]
    ld_on, ld_half, ld_all = m.Reg("ld_on"), m.Reg("ld_half"), m.Reg("ld_all")
    ld_go = m.Reg("ld_go")
    cp_state = m.Reg("cp_state", 2)  # 0 idle, 1 programming bounds, 2 start (when the array's steps are over)
    cp_half, out_cur, cp_all = m.Reg("cp_half"), m.Reg("out_cur"), m.Reg("cp_all")
    cp_acc, cp_ends = m.Reg("cp_acc"), m.Reg("cp_ends")
    prog = m.Reg("prog", hm.cfg_addr_bits)
    st_on, st_half, st_pending = m.Reg("st_on"), m.Reg("st_half"), m.Reg("st_pending")
    st_go = m.Reg("st_go")
    # the output tile waiting for its store (written when its last compute ends) and the one
    # being stored (copied at the store's start): the store walks its bounds for its whole
    # length, while the next output tile may finish with other (remainder) bounds
    pend_base = m.Reg("st_pend_base", ADDR)
    pend_b = [m.Reg(f"st_pend_bound{l}", cw) for l in range(lv)]
    st_base = m.Reg("st_base", ADDR)
    # the tiles in flight (started, not yet drained; at most two, one per input half, so a
    # tile waits for the drain of the one two back even when its input half was free before):
    # whether each ends its output tile, and that output tile's base and bounds for its store
    flight = m.Reg("in_flight", 2)
    fl_ends = [m.Reg(f"fl_ends{h}") for h in (0, 1)]
    fl_base = [m.Reg(f"fl_base{h}", ADDR) for h in (0, 1)]
    fl_b = [[m.Reg(f"fl_bound{h}_{l}", cw) for l in range(lv)] for h in (0, 1)]
    rfin_half = m.Reg("rfin_half")
    # the half of the oldest tile in flight: the started tiles' parity less those in flight
    fin_half = _wire(m, "fin_half", 1, cp_half ^ flight[0])
    st_b = [m.Reg(f"st_bound{l}", cw) for l in range(lv)]
    c.w["st_base"], c.w["st_bounds"] = st_base, st_b

    def at(regs2, half):
        return Mux(half, regs2[1], regs2[0])

    ld_can = busy & ~ld_all & ~ld_on & ~ld_go & ~at(in_full, ld_half) & ~at(in_use, ld_half)
    # a tile's bounds are programmed as soon as the previous tile has started; it starts when
    # its inputs are in, its output half is free and the previous tile's steps are over
    ready = at(in_full, cp_half) & (cp_acc | ~at(out_busy, out_cur))
    cp_can = busy & ~cp_all & (cp_state == _i(0, 2))
    accept = (cp_state == _i(2, 2)) & ~core["stepping"] & ready & (flight != _i(2, 2))
    fin = core["fin"]
    st_can = ~st_on & ~st_go & st_pending
    m.Assign(ld_next(w["ld_done"] & ~ld_last))
    m.Assign(cp_next(accept & ~cp_last))
    m.Assign(w["ld_start"](ld_go))
    m.Assign(w["st_start"](st_go))
    m.Assign(w["finish"](busy & ld_all & cp_all & (cp_state == _i(0, 2)) & ~core["busy"] & ~st_on & ~st_go
                         & ~st_pending))
    waiting = (cp_state == _i(2, 2)) & ~core["stepping"] & ~ready  # the array idles for data
    half_flags = []
    for h in (0, 1):
        hh = _i(h, 1)
        half_flags += [
            in_full[h]((in_full[h] & ~(accept & (cp_half == hh))) | (w["ld_done"] & (ld_half == hh))),
            in_use[h]((in_use[h] & ~(core["rfin"] & (rfin_half == hh))) | (accept & (cp_half == hh))),
            out_busy[h]((out_busy[h] & ~(w["st_done"] & (st_half == hh)))
                        | (accept & ~cp_acc & (out_cur == hh))),
        ]
    m.Always(Posedge(c.clk))(
        ld_go(0), st_go(0),
        If(c.rst | w["go"])(
            *[f(0) for f in (*in_full, *in_use, *out_busy, ld_on, ld_half, ld_all, cp_half, out_cur, cp_all, st_on,
                             st_half, st_pending, last_half, *slot_half, rfin_half)], cp_state(0), flight(0),
                             ld_chg(every),
            *[ctr(0) for ctr in counters.values()])
        .Else(
            *half_flags,
            If(busy)(counters["cycles"](counters["cycles"] + 1)),
            If(core["busy"])(counters["compute"](counters["compute"] + 1)),
            If(waiting & ~at(in_full, cp_half))(counters["load_wait"](counters["load_wait"] + 1)),
            If(waiting & at(in_full, cp_half))(
                counters["store_wait"](counters["store_wait"] + 1)),
            If(w["rd_beat"])(counters["rd_beats"](counters["rd_beats"] + 1)),
            If(w["wr_beat"])(counters["wr_beats"](counters["wr_beats"] + 1)),
            # loads: the next tile into the free input half
            If(ld_can)(ld_on(1), ld_go(1), ld_mask(ld_chg), ld_tgt(tgt), last_half(tgt),
                       If(ld_half)(slot_half[1](tgt)).Else(slot_half[0](tgt))),
            If(w["ld_done"])(ld_on(0), ld_half(~ld_half), If(ld_last)(ld_all(1))),
            If(ld_next)(ld_chg(chg_next)),
            # compute: program the bounds (the array's shadow registers, while it runs the
            # previous tile), start it when its steps are over; a tile is done when it has drained
            If(cp_can)(cp_state(1), prog(0), cp_acc(acc_now), cp_ends(ends_out)),
            If(cp_state == _i(1, 2))(prog(prog + 1), If(prog == _i(lv - 1, hm.cfg_addr_bits))(cp_state(2))),
            If(accept)(
                cp_state(0), cp_half(~cp_half), If(cp_last)(cp_all(1)), If(cp_ends)(out_cur(~out_cur)),
                *[If(cp_half == _i(h, 1))(fl_ends[h](cp_ends), fl_base[h](cp_base),
                                          *[b(x) for b, x in zip(fl_b[h], cp_b)]) for h in (0, 1)]),
            If(core["rfin"])(rfin_half(~rfin_half)),
            If(accept & ~fin)(flight(flight + 1)).Elif(fin & ~accept)(flight(flight - 1)),
            If(fin)(
                If(at(fl_ends, fin_half))(st_pending(1), pend_base(at(fl_base, fin_half)),
                                          *[b(Mux(fin_half, fl_b[1][l], fl_b[0][l])) for l, b in enumerate(pend_b)])),
            # stores: the finished output half back to memory
            If(st_can)(st_on(1), st_go(1), st_pending(0), st_base(pend_base), *[b(x) for b, x in zip(st_b, pend_b)]),
            If(w["st_done"])(st_on(0), st_half(~st_half)),
        ))
    programming = cp_state == _i(1, 2)
    m.Assign(core["cfg_we"](programming | w["host_cfg_we"]))
    m.Assign(core["cfg_addr"](Mux(programming, prog, w["host_cfg_addr"])))
    m.Assign(core["cfg_wdata"](Mux(programming, _pick(prog, hm.cfg_addr_bits, cp_b), w["host_cfg_wdata"])))
    m.Assign(core["start"](accept))
    m.Assign(core["in_half"](Mux(cp_half, slot_half[1], slot_half[0])))
    m.Assign(w["ld_mask"](ld_mask))
    m.Assign(w["ld_tgt"](ld_tgt))
    m.Assign(core["out_half"](out_cur))
    m.Assign(core["acc"](cp_acc))
    c.w["ld_half"], c.w["st_half"] = ld_half, st_half


def _run(c: _Ctx, name: str, t_sel, t_bits: int, tensors: list, bounds: list, fills: list | None = None):
    """Per-tensor burst geometry of the tile being moved: the walker's last indices (the
    contiguous run level folded into the burst), the run's length in beats, AxSIZE, and the
    beat's bytes as a shift. A row of at least a bus width is ``slot / bus`` full beats; a
    narrower row shares a beat with the ``fill - 1`` rows after it (``fills``, per tensor;
    :func:`lego_build.backend.interface.fill_rows`): a run of them is one INCR burst of
    ``fill * slot``-byte transfers (a narrow burst when that is less than the bus, AXI4
    A3.4.1), from the transfer that holds the run's first row. Returns also the wire the
    caller drives, per tensor of several rows per beat, with its run's first row's place in
    its transfer (address bits ``log2 slot`` up)."""
    m, sm = c.m, c.sm
    lv, cw = c.hm.levels, c.hm.counter_bits
    fills = fills or [1] * len(tensors)
    rows_last, runs_last, beats_shift, sizes, run_rows = [], [], [], [], []
    for t, k in zip(tensors, fills):
        slot = sm.slot_bytes[t]
        rl, ul, last = _geometry(c, t, bounds)
        rows_last.append(rl)
        runs_last.append(ul)
        run_rows.append(last)
        beats_shift.append([(sm.slot(t, d) // sm.bus_bytes).bit_length() - 1 if slot > sm.bus_bytes else 0
                            for d in range(_ndf(c))])  # log2 of the beats per row (a power of two)
        sizes.append((min(slot, sm.bus_bytes) * k).bit_length() - 1)  # log2 of a power of two (1 byte: 0)
    rows = [_pick(t_sel, t_bits, [x[l] for x in rows_last]) for l in range(lv)]
    runs = [m.Wire(f"{name}_runs_last{l}", cw) for l in range(lv)]
    for l in range(lv):
        m.Assign(runs[l](_pick(t_sel, t_bits, [x[l] for x in runs_last])))
    run_pos = {}  # per tensor of several rows per beat: its run's first row's place in a transfer
    # beats of one run: the rows of the run level times the beats per row, or the transfers
    # its rows (from the first row's place in its transfer on) fill
    rb = cw + 9
    per_tensor = []
    for t, last, shift, k in zip(tensors, run_rows, beats_shift, fills):
        if k > 1:
            lk = clog2(k)
            run_pos[t] = m.Wire(f"{name}_run_pos{t}", lk)
            rows_from = Cat(_i(0, rb - cw), last) + Cat(_i(0, rb - lk), run_pos[t]) + _i(k, rb)
            span = _wire(m, f"{name}_span{t}", rb, rows_from)
            c.unused.append((span[0:lk], lk))
            per_tensor.append(Cat(_i(0, lk), span[lk:rb]))
        else:  # rows of the run times the beats per row (a power of two; per dataflow for packed rows)
            opts = [Cat(_i(0, 9 - z), last + _i(1, cw), _i(0, z)) if z else Cat(_i(0, 9), last + _i(1, cw))
                    for z in shift]
            per_tensor.append(opts[0] if len(set(shift)) == 1 else _per_df(c, opts))
    run_beats = m.Wire(f"{name}_run_beats", rb)
    m.Assign(run_beats(_pick(t_sel, t_bits, per_tensor)))
    size = m.Wire(f"{name}_size", 3)
    m.Assign(size(_pick(t_sel, t_bits, [_i(z, 3) for z in sizes])))
    return rows, runs, run_beats, size, (t_sel, t_bits, sizes), run_pos


def _issuer(c: _Ctx, name: str, walker_addr, run_beats, beat):
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
        room = _wire(m, f"{name}_room{k}", 14 - shift,
                     _i(4096 >> shift, 14 - shift) - Cat(_i(0, 2), addr[shift:12]))
        to4k_t.append(Cat(_i(0, rb - (14 - shift)), room))
    to4k = _wire(m, f"{name}_to4k", rb, _pick(t_sel, t_bits, to4k_t))
    piece = m.Wire(f"{name}_piece", rb)
    m.Assign(piece(_min(_min(rem, to4k), _i(MAX_BURST, rb))))
    alen = _wire(m, f"{name}_alen", rb, piece - _i(1, rb))
    c.unused.append((alen[8:rb], rb - 8))
    for shift in shifts:  # the burst's bytes: its beats shifted by the beat's bytes (a wide bus: no room left)
        pad = ADDR - rb - shift
        parts = ([_i(0, pad)] if pad > 0 else []) + [piece if pad >= 0 else piece[0:rb + pad]] + (
            [_i(0, shift)] if shift else [])
        if pad < 0:
            c.unused.append((piece[rb + pad:rb], -pad))
        bytes_t.append(Cat(*parts))
    pbytes = _wire(m, f"{name}_pbytes", ADDR, _pick(t_sel, t_bits, bytes_t))
    return first, addr_r, rem_r, addr, rem, piece, alen, pbytes


def _address_channel(c: _Ctx, ch: str, may_issue, walk_last, step, start, restart, issue: tuple, size):
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
    for name, value in (("valid", valid), ("addr", addr), ("len", alen[0:8]), ("size", size), ("burst", _i(1, 2)),
                        ("id", _i(0, 1))):
        m.Assign(c.mo[f"{ch}{name}"](value))
    return hs, run_end


def _loader(c: _Ctx) -> None:
    """The DMA read engine: every input tensor's rows of the tile, into the free input half.

    The address channel walks the tile's runs (rows contiguous in DRAM), a burst or more
    each; the data channel walks the same runs and counts the rows of the current one. A
    beat brings part of a row (a row wider than the bus: the row is written at its last
    beat), one row (a narrow beat), or up to ``fill`` rows of the run (``hm.fill_rows``),
    which the banks take in one write (:func:`rtl_templates_free.primitives.mk_bank_rows`):
    slot ``j`` of ``dma_row`` holds the row whose bank address is ``j`` modulo the fill, at or
    after ``dma_addr``, and ``dma_mask`` bit ``j`` says it is there. A run's rows are
    consecutive bank addresses (its level is the tensor's innermost in the bank layout too)."""
    m, hm, sm, r, w, core, mi, mo = c.m, c.hm, c.sm, c.regs, c.w, c.core, c.mi, c.mo
    lv, cw, aw = hm.levels, hm.counter_bits, hm.addr_bits
    nin = len(hm.input_tensors)
    tb = clog2(nin + 1)
    bw, bb = sm.bus_bits, sm.bus_bytes
    tensors = list(range(nin))
    fills = [hm.rows_of(t) for t in tensors]
    bounds = w["ld_bounds"]

    # the tensors of this load (w["ld_mask"]): the first, and the one after each
    mask = w["ld_mask"]
    bits = [_bit(mask, t, nin) for t in range(nin)]
    any_ = _wire(m, "ld_any", 1, _ors(bits))
    first_t = _wire(m, "ld_first_t", tb, _first(bits, list(range(nin)), tb))

    def after(name: str, t_sel):
        """(another masked tensor follows ``t_sel``, its index)."""
        has, idx = [], []
        for t in range(nin):
            later = list(range(t + 1, nin))
            has.append(_ors([bits[u] for u in later]) if later else _i(0, 1))
            idx.append(_first(bits, later, tb) if later else _i(nin - 1, tb))
        return _wire(m, f"{name}_more", 1, _pick(t_sel, tb, has)), _wire(m, f"{name}_next_t", tb, _pick(t_sel, tb, idx))

    # address channel
    ar_t, ar_on, ar_restart = m.Reg("ar_t", tb), m.Reg("ar_on"), m.Reg("ar_restart")
    ar_more, ar_next_t = after("ar", ar_t)
    _, runs_last, run_beats, size, beat, run_pos = _run(c, "ar", ar_t, tb, tensors, bounds, fills)
    ar_step, ar_start = m.Wire("arw_step"), m.Wire("arw_start")
    _, (ar_walk,), ar_walk_last = walker(
        m, c.clk, "arw", runs_last, cw, [(ADDR, _pick(ar_t, tb, w["ld_bases"]), _pick_strides(r["row"], ar_t, tb,
                                                                                           tensors, lv))],
        ar_start, ar_step)
    for t, pos in run_pos.items():
        ls = sm.slot_bytes[t].bit_length() - 1  # log2 of a power of two
        m.Assign(pos(ar_walk[ls:ls + clog2(fills[t])]))
    first, addr_r, rem_r, addr, rem, piece, alen, pbytes = _issuer(c, "ar", ar_walk, run_beats, beat)
    nxt = addr
    if run_pos:  # a run may start mid-transfer: its next burst starts at the transfer after the last
        nxt = _wire(m, "ar_aligned", ADDR, _pick(ar_t, tb, [Cat(addr[z:ADDR], _i(0, z)) if z else addr
                                                            for z in beat[2]]))
    ob = clog2(sm.max_outstanding + 1)
    outstanding = m.Reg("ar_outstanding", ob)
    ar_hs, run_end = _address_channel(c, "ar", ar_on & ~ar_restart & (outstanding < _i(sm.max_outstanding, ob)),
                                      ar_walk_last, ar_step, ar_start, ar_restart, (addr, rem, piece, alen), size)
    r_hs = m.Wire("r_hs")
    m.Assign(r_hs(mi["rvalid"] & mo["rready"]))
    r_burst_end = r_hs & mi["rlast"]
    m.Always(Posedge(c.clk))(
        If(c.rst)(ar_on(0), ar_restart(0), outstanding(0), first(1))
        .Else(
            If(ar_hs & ~r_burst_end)(outstanding(outstanding + 1)),
            If(~ar_hs & r_burst_end)(outstanding(outstanding - 1)),
            If(w["ld_start"])(ar_on(any_), ar_t(first_t), ar_restart(any_), first(1)),
            If(ar_restart)(ar_restart(0)),
            If(ar_hs)(
                If(run_end)(
                    first(1),
                    If(ar_walk_last)(
                        If(~ar_more)(ar_on(0)).Else(ar_t(ar_next_t), ar_restart(1))))
                .Else(first(0), addr_r(nxt + pbytes), rem_r(rem - piece)))))

    # data channel: the runs again, and the rows of the current one
    r_t, r_on, r_restart = m.Reg("r_t", tb), m.Reg("r_on"), m.Reg("r_restart")
    r_more, r_next_t = after("r", r_t)
    r_step, r_start = m.Wire("rw_step"), m.Wire("rw_start")
    low = 12
    geo = [_geometry(c, t, bounds) for t in tensors]
    r_runs = [_wire(m, f"rw_runs_last{l}", cw, _pick(r_t, tb, [g[1][l] for g in geo])) for l in range(lv)]
    r_run_last = _wire(m, "r_run_last", cw, _pick(r_t, tb, [g[2] for g in geo]))
    _, (run_bank, run_low), r_walk_last = walker(
        m, c.clk, "rw", r_runs, cw,
        [(aw, _i(0, aw), _pick_strides(r["bank"], r_t, tb, tensors, lv)),
         (low, _pick(r_t, tb, [x[0:low] for x in w["ld_bases"]]),
          [_pick(r_t, tb, [r["row"][t][l][0:low] for t in tensors]) for l in range(lv)])],
        r_start, r_step)
    r_i = m.Reg("r_i", cw)  # rows of the run already written
    r_left = _wire(m, "r_left", cw, r_run_last - r_i)  # rows of the run after the first of this beat
    bank_addr = _wire(m, "r_bank_addr", aw, run_bank + (r_i[0:aw] if aw <= cw else Cat(_i(0, aw - cw), r_i)))
    if aw < cw:
        c.unused.append((r_i[aw:cw], cw - aw))
    beats_max = max(max(1, sm.slot_bytes[t] // bb) for t in tensors)
    bi = clog2(beats_max + 1)
    r_beat = m.Reg("r_beat", bi)
    slots = [m.Reg(f"r_slot{k}", bw) for k in range(beats_max - 1)]
    lb = clog2(bb)
    row_end_t, more_t, data_t, mask_t = [], [], [], []  # per tensor: the beat ends a row; rows after it; slots
    for t, k in zip(tensors, fills):
        slot = sm.slot_bytes[t]
        nb = max(1, slot // bb)
        if slot >= bb:  # a row of nb beats, or of fewer under a dataflow whose row is packed
            nbs = [max(1, sm.slot(t, d) // bb) for d in range(_ndf(c))]
            if set(nbs) == {nb}:
                bytes_ = _wire(m, f"r_bytes{t}", nb * bw, Cat(mi["rdata"], *reversed(slots[:nb - 1])) if nb > 1
                               else mi["rdata"])
                row_end_t.append(r_beat == _i(nb - 1, bi))
            else:  # the row's last beat lands at its own place; the places after it are not read
                parts = [Mux(r_beat == _i(k, bi), mi["rdata"], slots[k]) for k in range(nb - 1)] + [mi["rdata"]]
                bytes_ = _wire(m, f"r_bytes{t}", nb * bw, Cat(*reversed(parts)))
                row_end_t.append(_per_df(c, [r_beat == _i(n - 1, bi) for n in nbs]))
            rows = [_lanes_in(c, t, bytes_, nb * bw)]
            span = None
        else:  # up to k rows in the beat, from the current row's place in its transfer on
            ls, lk = slot.bit_length() - 1, (clog2(k) if k > 1 else 0)  # log2 of powers of two
            at = _wire(m, f"r_at{t}", lb, run_low[0:lb] + (Cat(r_i[0:lb - ls], _i(0, ls)) if ls else r_i[0:lb]))
            win = _wire(m, f"r_win{t}", bw, mi["rdata"] >> Cat(at[ls + lk:lb], _i(0, ls + lk + 3))
                        if ls + lk < lb else mi["rdata"])
            if ls:
                c.unused.append((at[0:ls], ls))
            if k * slot < bb:
                c.unused.append((win[k * slot * 8:bw], bw - k * slot * 8))
            row_end_t.append(_i(1, 1))
            rows = [_lanes_in(c, t, _wire(m, f"r_row{t}_{q}", slot * 8, win[q * slot * 8:(q + 1) * slot * 8]),
                              slot * 8) for q in range(k)]
            span = (at[ls:ls + lk], lk) if k > 1 else None
        if span is None:  # one row: it ends the run when it is the run's last
            more_t.append(_i(0, clog2(hm.fill)))
            data_t.append(rows)
            mask_t.append([_i(1, 1)])
            continue
        pos, lk = span
        a = bank_addr[0:lk]
        room = _wire(m, f"r_room{t}", lk, _i(k - 1, lk) - pos)  # rows after the first that the beat holds
        fits = Cat(_i(0, cw - lk), room) >= r_left if cw > lk else room >= r_left
        more = _wire(m, f"r_more{t}", lk, Mux(fits, r_left[0:lk], room))
        rot = _wire(m, f"r_rot{t}", lk, pos - a)
        data_t.append([_pick(rot, lk, [rows[(j + q) % k] for q in range(k)]) for j in range(k)])
        mask_t.append([_wire(m, f"r_e{t}_{j}", lk, _i(j, lk) - a) <= more for j in range(k)])
        more_t.append(Cat(_i(0, clog2(hm.fill) - lk), more) if clog2(hm.fill) > lk else more)
    fb = clog2(hm.fill)
    r_more_rows = _wire(m, "r_more_rows", fb, _pick(r_t, tb, more_t))
    run_fin = _wire(m, "r_run_fin", 1, Cat(_i(0, cw - fb), r_more_rows) == r_left if cw > fb else r_more_rows == r_left)
    row_end = m.Wire("r_row_end")
    m.Assign(row_end(r_hs & _pick(r_t, tb, row_end_t)))
    m.Assign(r_step(row_end & run_fin & ~r_walk_last))
    m.Assign(r_start(r_restart))
    m.Assign(mo["rready"](r_on & ~r_restart))
    slot_rows = [_pick(r_t, tb, [d[j] if j < len(d) else _i(0, hm.in_row_bits) for d in data_t])
                 for j in range(hm.fill)]
    dma_we, dma_addr = m.Reg("dma_we_r"), m.Reg("dma_addr_r", aw)
    dma_tensor, dma_row = m.Reg("dma_tensor_r", hm.tensor_bits), m.Reg("dma_row_r", hm.fill * hm.in_row_bits)
    done = m.Reg("ld_done_r")
    writes = [dma_we(1), dma_addr(bank_addr), dma_tensor(r_t[0:hm.tensor_bits]), dma_row(Cat(*reversed(slot_rows)))]
    if hm.fill > 1:
        dma_mask = m.Reg("dma_mask_r", hm.fill)
        writes.append(dma_mask(_pick(r_t, tb, [Cat(*reversed(mk + [_i(0, 1)] * (hm.fill - len(mk))))
                                               for mk in mask_t])))
        m.Assign(core["dma_mask"](dma_mask))
    m.Always(Posedge(c.clk))(
        dma_we(0), done(0),
        If(c.rst)(r_on(0), r_restart(0), r_beat(0), r_i(0))
        .Else(
            If(w["ld_start"])(r_on(any_), r_t(first_t), r_restart(any_), r_beat(0), r_i(0), If(~any_)(done(1))),
            If(r_restart)(r_restart(0)),
            If(r_hs)(
                *[If(r_beat == _i(k, bi))(slots[k](mi["rdata"])) for k in range(len(slots))],
                If(row_end)(
                    r_beat(0), *writes,
                    If(run_fin)(
                        r_i(0),
                        If(r_walk_last)(If(~r_more)(r_on(0), done(1)).Else(r_t(r_next_t), r_restart(1))))
                    .Else(r_i(r_i + Cat(_i(0, cw - fb), r_more_rows) + _i(1, cw) if cw > fb else
                              r_i + r_more_rows + _i(1, cw))))
                .Else(r_beat(r_beat + 1)))))
    m.Assign(w["rd_beat"](r_hs))
    m.Assign(w["ld_done"](done))
    m.Assign(core["dma_we"](dma_we))
    m.Assign(core["dma_half"](_pick(dma_tensor, hm.tensor_bits, [_bit(w["ld_tgt"], t, nin) for t in range(nin)])))
    m.Assign(core["dma_tensor"](dma_tensor))
    m.Assign(core["dma_addr"](dma_addr))
    m.Assign(core["dma_row"](dma_row))
    c.w["r_err"] = r_hs & ((mi["rresp"] != _i(0, 2)) | mi["rid"])  # an error, or a response not for our ID


def _geometry(c: _Ctx, t: int, bounds: list) -> tuple[list, list, object]:
    """Tensor ``t``'s rows of a tile of last trips ``bounds``: per level the last trip its rows
    walk (0 where it does not depend), the same with the run level (rows contiguous in DRAM)
    folded into the run, and the run's last row."""
    lv, cw = c.hm.levels, c.hm.counter_bits
    slots = sorted({c.sm.slot(t, d) for d in range(_ndf(c))})
    slot = _i(slots[0], ADDR) if len(slots) == 1 else _per_df(c, [_i(c.sm.slot(t, d), ADDR) for d in range(_ndf(c))])
    dep = _deps(c, t)
    inner = [c.regs["row"][t][l] == slot for l in range(lv)]
    rows_last = [Mux(dep[l], bounds[l], _i(0, cw)) for l in range(lv)]
    runs_last = [Mux(inner[l], _i(0, cw), rows_last[l]) for l in range(lv)]
    run_rows = _i(0, cw)
    for l in range(lv):
        run_rows = Mux(inner[l], bounds[l], run_rows)
    return rows_last, runs_last, run_rows


def _pick_strides(table, t_sel, tb: int, tensors: list, lv: int) -> list:
    return [_pick(t_sel, tb, [table[t][l] for t in tensors]) for l in range(lv)]


def _lanes_in(c: _Ctx, t: int, row_bytes, width: int):
    """The DMA row of input tensor ``t``: each lane's word from its bytes (``width`` bits of
    them), packed at ``operand_bits``: lane ``i`` takes word ``i``, or, where the dataflow packs
    the row, the word it shares (``SocMap.word_of``: one multiplexer per lane over the
    dataflows); the bytes between and after the words are unused."""
    hm, sm = c.hm, c.sm
    wb = sm.word_bytes[t]
    maps = [sm.word_of(t, d) for d in range(_ndf(c))]
    words = [row_bytes[i * wb * 8:i * wb * 8 + hm.operand_bits] for i in range(sm.lanes[t])]
    lanes = []
    for lane in range(sm.lanes[t]):
        valid = [mp[lane] for mp in maps if mp[lane] >= 0]
        opts = [mp[lane] if mp[lane] >= 0 else valid[0] if valid else lane for mp in maps]
        lanes.append(words[opts[0]] if len(set(opts)) == 1 else _per_df(c, [words[p] for p in opts]))
    read = {p for mp in maps for p in mp if p >= 0} if any(mp != tuple(range(sm.lanes[t])) for mp in maps) \
        else set(range(sm.lanes[t]))
    gaps = [(i * wb * 8 + (hm.operand_bits if i in read else 0), (i + 1) * wb * 8) for i in range(sm.lanes[t])]
    gaps.append((sm.lanes[t] * wb * 8, width))
    c.unused += [(row_bytes[lo:hi], hi - lo) for lo, hi in gaps if hi > lo]
    pad = hm.in_row_bits - sm.lanes[t] * hm.operand_bits
    return Cat(*([_i(0, pad)] if pad else []), *reversed(lanes))


def _storer(c: _Ctx) -> None:
    """The DMA write engine: the finished output half's rows back to memory."""
    m, hm, sm, r, w, core, mi, mo = c.m, c.hm, c.sm, c.regs, c.w, c.core, c.mi, c.mo
    cw, aw = hm.counter_bits, hm.addr_bits
    t = len(hm.input_tensors)
    bw, bb = sm.bus_bits, sm.bus_bytes
    slot, wb = sm.slot_bytes[t], sm.word_bytes[t]
    one = _i(0, 1)
    bounds = w["st_bounds"]
    rows_last, runs_last, run_beats, size, beat, _ = _run(c, "aw", one, 1, [t], bounds)

    # address channel: runs of the output tile's rows; burst lengths queue for WLAST
    aw_on, aw_restart = m.Reg("aw_on"), m.Reg("aw_restart")
    aw_step, aw_start = m.Wire("aww_step"), m.Wire("aww_start")
    _, (aw_walk,), aw_walk_last = walker(m, c.clk, "aww", runs_last, cw, [(ADDR, w["st_base"], r["row"][t])],
                                         aw_start, aw_step)
    first, addr_r, rem_r, addr, rem, piece, alen, pbytes = _issuer(c, "aw", aw_walk, run_beats, beat)
    qd = 4
    q = [m.Reg(f"wlen_q{k}", 8) for k in range(qd)]
    q_wr, q_rd, q_n = m.Reg("wlen_wr", 2), m.Reg("wlen_rd", 2), m.Reg("wlen_n", 3)
    aw_hs, run_end = _address_channel(c, "aw", aw_on & ~aw_restart & (q_n < _i(qd, 3)), aw_walk_last, aw_step,
                                      aw_start, aw_restart, (addr, rem, piece, alen), size)

    # rows out of the bank half (read latency 1) into a two-row queue
    rr_on, rr_restart, rr_pend = m.Reg("rr_on"), m.Reg("rr_restart"), m.Reg("rr_pend")
    rr_step, rr_start = m.Wire("rrw_step"), m.Wire("rrw_start")
    low = 12
    _, (bank_addr, dram_low), rr_last = walker(
        m, c.clk, "rrw", rows_last, cw,
        [(aw, _i(0, aw), r["bank"][t]), (low, w["st_base"][0:low], [x[0:low] for x in r["row"][t]])],
        rr_start, rr_step)
    rowq = [m.Reg(f"wrow_q{k}", hm.out_row_bits) for k in range(2)]
    offq = [m.Reg(f"woff_q{k}", low) for k in range(2)]
    pend_off = m.Reg("rr_pend_off", low)
    rq_wr, rq_rd, rq_n = m.Reg("wrow_wr"), m.Reg("wrow_rd"), m.Reg("wrow_n", 2)
    issue = m.Wire("rr_issue")
    m.Assign(issue(rr_on & ~rr_restart & ((rq_n + Cat(_i(0, 1), rr_pend)) < _i(2, 2))))
    m.Assign(rr_step(issue & ~rr_last))
    m.Assign(rr_start(rr_restart))
    m.Assign(core["dma_raddr"](bank_addr))
    m.Assign(core["dma_rhalf"](w["st_half"]))
    m.Assign(core["dma_ren"](rr_on))

    # write data: the head row's beats
    nb = max(1, slot // bb)
    bi = clog2(nb + 1)
    w_beat = m.Reg("w_beat", bi)
    w_in = m.Reg("w_in_burst", 8)
    head = _wire(m, "w_head", hm.out_row_bits, Mux(rq_rd, rowq[1], rowq[0]))
    head_off = _wire(m, "w_head_off", low, Mux(rq_rd, offq[1], offq[0]))
    if slot >= bb:
        c.unused.append((head_off, low))
    elif clog2(bb) < low:  # a narrow row's byte lane within the beat: the low address bits only
        c.unused.append((head_off[clog2(bb):low], low - clog2(bb)))
    ob = hm.out_bits
    lanes = sm.lanes[t]
    per_beat = min(slot, bb) // wb  # lanes in one beat: the PPU's lanes
    values = [head[i * ob:(i + 1) * ob] for i in range(lanes)]
    if slot >= bb:
        # the row's words: every lane, or under a dataflow that packs the row the first lane of each
        # distinct word (SocMap.lane_of), one multiplexer per word over the dataflows
        firsts = [sm.lane_of(t, d) for d in range(_ndf(c))]
        nwords = max(len(f) for f in firsts)
        packed = []
        for p in range(nwords):
            opts = [f[p] if p < len(f) else -1 for f in firsts]
            packed.append(values[opts[0]] if len(set(opts)) == 1 else
                          _per_df(c, [values[x] if x >= 0 else _i(0, ob) for x in opts]))
        referenced = {x for f in firsts for x in f}
        c.unused += [(values[i], ob) for i in range(lanes) if i not in referenced]
        values = packed
        nbs = [max(1, sm.slot(t, d) // bb) for d in range(_ndf(c))]
        reals = [-(-len(f) // per_beat) for f in firsts]  # beats that hold words (the rest is padding)
        nb_real = max(reals)
        chunks = [values[k * per_beat:(k + 1) * per_beat] for k in range(nb_real)]
        if nb_real > 1:
            sel = [_pick(w_beat, bi, [ch[i] if i < len(ch) else _i(0, ob) for ch in chunks]) for i in range(per_beat)]
            sel = [_wire(m, f"w_lane{i}", ob, x) for i, x in enumerate(sel)]
        else:
            sel = chunks[0]
        words = _ppu_beat(c, "w", sel, ob, wb * 8)
        used = Cat(*reversed(words))
        pad_bits = bw - len(words) * wb * 8
        data = Cat(_i(0, pad_bits), used) if pad_bits else used
        pads = [r < n for r, n in zip(reals, nbs)]
        beat = Mux(w_beat < _per_df(c, [_i(r, bi) for r in reals]), data, _i(0, bw)) if any(pads) else data
        strb = _i((1 << bb) - 1, bb)
        row_last = _per_df(c, [w_beat == _i(n - 1, bi) for n in nbs]) if len(set(nbs)) > 1 else \
            w_beat == _i(nbs[0] - 1, bi)
    else:
        words = _ppu_beat(c, "w", values, ob, wb * 8)
        pad = slot * 8 - lanes * wb * 8
        row_bytes = _wire(m, "w_row_bytes", slot * 8, Cat(*([_i(0, pad)] if pad else []), *reversed(words)))
        sh = Cat(head_off[0:clog2(bb)], _i(0, 3))
        beat = Cat(_i(0, bw - slot * 8), row_bytes) << sh
        strb = Cat(_i(0, bb - slot), _i((1 << slot) - 1, slot)) << head_off[0:clog2(bb)]
        row_last = _i(1, 1)
    wvalid = m.Wire("w_valid")
    m.Assign(wvalid((rq_n != _i(0, 2)) & (q_n != _i(0, 3))))
    wlast = m.Wire("w_last")
    m.Assign(wlast(w_in == _pick(q_rd, 2, q)))
    w_hs = m.Wire("w_hs")
    m.Assign(w_hs(wvalid & mi["wready"]))
    m.Assign(mo["wvalid"](wvalid))
    m.Assign(mo["wdata"](beat))
    m.Assign(mo["wstrb"](strb))
    m.Assign(mo["wlast"](wlast))
    m.Assign(mo["bready"](_i(1, 1)))
    m.Assign(w["wr_beat"](w_hs))
    pop_row = w_hs & row_last
    bursts = m.Reg("b_pending", 16)
    b_hs = mi["bvalid"]
    done = m.Reg("st_done_r")
    st_on = m.Reg("st_on_r")
    m.Always(Posedge(c.clk))(
        done(0), rr_pend(0),
        If(c.rst)(aw_on(0), aw_restart(0), rr_on(0), rr_restart(0), q_n(0), q_wr(0), q_rd(0), rq_n(0), rq_wr(0),
                  rq_rd(0), w_beat(0), w_in(0), bursts(0), st_on(0), first(1))
        .Else(
            If(w["st_start"])(aw_on(1), aw_restart(1), rr_on(1), rr_restart(1), st_on(1), first(1)),
            If(aw_restart)(aw_restart(0)),
            If(rr_restart)(rr_restart(0)),
            # address channel
            If(aw_hs)(
                *[If(q_wr == _i(k, 2))(q[k](alen[0:8])) for k in range(qd)],
                q_wr(q_wr + 1),
                If(run_end)(first(1), If(aw_walk_last)(aw_on(0)))
                .Else(first(0), addr_r(addr + pbytes), rem_r(rem - piece))),
            If(aw_hs & ~(w_hs & wlast))(q_n(q_n + 1)),
            If(~aw_hs & w_hs & wlast)(q_n(q_n - 1)),
            If(aw_hs & ~(b_hs))(bursts(bursts + 1)),
            If(~aw_hs & b_hs)(bursts(bursts - 1)),
            # bank reads
            If(issue)(rr_pend(1), pend_off(dram_low), If(rr_last)(rr_on(0))),
            If(rr_pend)(*[If(rq_wr == _i(k, 1))(rowq[k](core["dma_rrow"]), offq[k](pend_off)) for k in (0, 1)],
                        rq_wr(~rq_wr)),
            If(rr_pend & ~pop_row)(rq_n(rq_n + 1)),
            If(~rr_pend & pop_row)(rq_n(rq_n - 1)),
            # write data
            If(w_hs)(
                If(wlast)(w_in(0), q_rd(q_rd + 1)).Else(w_in(w_in + 1)),
                If(row_last)(w_beat(0), rq_rd(~rq_rd)).Else(w_beat(w_beat + 1))),
            If(st_on & ~aw_on & ~aw_restart & ~rr_on & ~rr_restart & ~rr_pend & (rq_n == _i(0, 2))
               & (q_n == _i(0, 3)) & (bursts == _i(0, 16)) & ~w["st_start"])(st_on(0), done(1)),
        ))
    m.Assign(w["st_done"](done))
    m.Assign(w["err"](c.w["r_err"] | (b_hs & ((mi["bresp"] != _i(0, 2)) | mi["bid"]))))
