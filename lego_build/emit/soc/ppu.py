"""The post-processing unit on ``lego_soc``'s output path: the memory system's copy of the
array's PPU registers and, per word of a beat the storer writes, one requantise-and-ReLU lane
with its copy of the activation table."""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge, Repeat, StubModule

from lego_build.emit.soc.common import Ctx, num, wire
from rtl_templates_free import mk_table
from rtl_templates_free.primitives import PPU_TABLE


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


def ppu_beat(c: Ctx, name: str, values: list, out_bits: int, word_bits: int):
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
            y = wire(m, f"{name}_post{i}", out_bits, y)
        out.append(Cat(Repeat(y[out_bits - 1], word_bits - out_bits), y) if word_bits > out_bits else y)
    return out
