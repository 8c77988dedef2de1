"""The post-processing unit on ``lego_soc``'s output path: the memory system's copy of the
array's PPU registers and, per word of a beat the storer writes, one pipelined
requantise-and-ReLU lane with its copy of the activation table."""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge, Repeat, StubModule

from lego_build.emit.soc.common import Ctx, num, wire
from rtl_templates_free import mk_ppu_lane_pipe, mk_table
from rtl_templates_free.primitives import PPU_LANE_STAGES, PPU_TABLE


def ppu_registers(c: Ctx, wdata) -> None:
    """The memory system's copy of the array's PPU registers (mode, scale, shift), written
    with them: the output path's lanes (:func:`ppu_beat`) read these; the table's writes
    go to each lane's copy of it (``ppu_table_we``)."""
    m, hm, w = c.m, c.hm, c.w
    ab = hm.cfg_addr_bits
    regs = {"mode": m.Reg("ppu_mode", 3), "scale": m.Reg("ppu_scale", 16), "shift": m.Reg("ppu_shift", 6)}
    addr = w["host_cfg_addr"]
    writes = [If(addr == num(idx, ab))(reg(wdata[0:reg.width])) for idx, reg in (
        (hm.ppu_mode_reg, regs["mode"]), (hm.ppu_scale_reg, regs["scale"]), (hm.ppu_shift_reg, regs["shift"]))]
    m.Always(Posedge(c.clk))(If(w["host_cfg_we"])(*writes))
    table_we = m.Wire("ppu_table_we")
    m.Assign(table_we(w["host_cfg_we"] & (addr[8:ab] == num(hm.ppu_lut_base >> 8, ab - 8))))
    c.w["ppu"], c.w["ppu_table"] = regs, {"we": table_we, "waddr": addr[0:8], "wdata": wdata[0:8]}


def staged(c: Ctx, name: str, sig, width: int, stages: int, en, reset: bool = False) -> list:
    """``sig`` through ``stages`` registers, each loaded when ``en`` (a stall-all pipeline),
    cleared by reset if ``reset`` (valid bits); the registers, the last one last."""
    regs = [c.m.Reg(f"{name}_d{k}", width) for k in range(stages)]
    load = If(en)(*[r(prev) for r, prev in zip(regs, [sig, *regs])])
    c.m.Always(Posedge(c.clk))(If(c.rst)(*[r(0) for r in regs]).Else(load) if reset else load)
    return regs


def ppu_lanes(c: Ctx, name: str, values: list, out_bits: int, en) -> list:
    """Output words through the PPU's pipelined lanes (:func:`rtl_templates_free.mk_ppu_lane_pipe`:
    :data:`PPU_LANE_STAGES` register stages loaded when ``en``); a design without a PPU delays
    them as many stages, so the write path's depth does not depend on it."""
    m, hm = c.m, c.hm
    if not hm.ppu:
        return [staged(c, f"{name}_lane{i}", x, out_bits, PPU_LANE_STAGES, en)[-1] for i, x in enumerate(values)]
    regs, out = c.w["ppu"], []
    for i, x in enumerate(values):
        v = m.Wire(f"{name}_ppu{i}", out_bits)
        # each lane's copy of the scale (issue 44: one register driving every lane's multipliers was
        # the write path's worst net); a layer's registers are written before its start, so the copy,
        # a cycle behind, holds the layer's scale when the first word arrives
        scale = m.Reg(f"{name}_scale{i}", 16)
        m.Always(Posedge(c.clk))(scale(regs["scale"]))
        m.Instance(StubModule(mk_ppu_lane_pipe(out_bits, hm.dsp).name), f"u_{name}_ppu{i}", ports=[
            ("clk", c.clk), ("en", en), ("x", x), ("mode", regs["mode"][0:2]), ("scale", scale),
            ("shift", regs["shift"]), ("y", v)])
        out.append(v)
    return out


def ppu_tables(c: Ctx, name: str, lanes: list, out_bits: int, word_bits: int, en) -> list:
    """The lanes' words through their copies of the activation table when ``mode`` bit 2 is set
    (:func:`rtl_templates_free.mk_table`: one read port each, as a table macro has; every copy
    takes every write), the table's read and the lane's word through two registers (loaded when
    ``en``, the last of :data:`rtl_templates_free.primitives.PPU_STAGES`: on an FPGA the table is a
    block RAM whose read data comes late), the choice between them after; each sign-extended to
    ``word_bits``. A design without a PPU delays its words as many stages."""
    m, hm = c.m, c.hm
    out = []
    for i, v in enumerate(lanes):
        if hm.ppu:
            regs, tw = c.w["ppu"], c.w["ppu_table"]
            looked = m.Wire(f"{name}_looked{i}", 8)
            m.Instance(StubModule(mk_table(*PPU_TABLE).name), f"u_{name}_table{i}", ports=[
                ("clk", c.clk), ("we", tw["we"]), ("waddr", tw["waddr"]), ("wdata", tw["wdata"]), ("raddr", v[0:8]),
                ("rdata", looked)])
            looked_r = staged(c, f"{name}_looked{i}", looked, 8, 2, en)[-1]
            v_r = staged(c, f"{name}_post{i}", v, out_bits, 2, en)[-1]
            y = Mux(regs["mode"][2], Cat(Repeat(looked_r[7], out_bits - 8), looked_r), v_r) if out_bits > 8 else \
                Mux(regs["mode"][2], looked_r, v_r)
            y = wire(m, f"{name}_post{i}", out_bits, y)
        else:
            y = staged(c, f"{name}_post{i}", v, out_bits, 2, en)[-1]
        out.append(Cat(Repeat(y[out_bits - 1], word_bits - out_bits), y) if word_bits > out_bits else y)
    return out
