"""``lego_soc`` assembled: its ports, the layer's registers, the array (``lego_top``) and the
wires between the blocks, which are built in the order the generated Verilog reads."""
from __future__ import annotations

from veriloggen import Cat, Module, StubModule

from lego_build.emit.soc.common import ADDR, Ctx, num, wire
from lego_build.emit.soc.loader import loader
from lego_build.emit.soc.registers import dataflow_register, registers
from lego_build.emit.soc.sequencer import sequencer
from lego_build.emit.soc.storer import storer
from lego_build.ir.host import HostMap
from lego_build.ir.soc import SocMap
from rtl_templates_free import mk_ppu_lane_pipe, mk_table
from rtl_templates_free.primitives import PPU_TABLE


def mk_soc(hm: HostMap, sm: SocMap) -> tuple[Module, list[Module]]:
    """``lego_soc`` and the modules it instantiates besides ``lego_top`` (the PPU's lanes, the
    walkers' wide sums)."""
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
        ("dma_rrow", hm.out_row_bits * (2 if hm.row_prefetch else 1)), ("rd_data", hm.out_bits))}
    tied = [("host_we", num(0, 1)), ("host_tensor", num(0, hm.tensor_bits)), ("host_lane", num(0, hm.lane_bits)),
            ("host_addr", num(0, aw)), ("host_wdata", num(0, hm.operand_bits)), ("rd_lane", num(0, hm.lane_bits)),
            ("rd_addr", num(0, aw))]
    m.Instance(StubModule("lego_top"), "u_array", ports=[("clk", clk), ("rst", rst)] + tied + list(core.items()))
    wires = {n: m.Wire(n, w) for n, w in (
        ("go", 1), ("finish", 1), ("err", 1), ("host_cfg_we", 1), ("host_cfg_addr", hm.cfg_addr_bits),
        ("host_cfg_wdata", cw), ("ld_start", 1), ("ld_done", 1), ("st_start", 1), ("st_done", 1),
        ("rd_beat", 1), ("wr_beat", 1), ("ld_mask", len(hm.input_tensors)), ("ld_tgt", len(hm.input_tensors)))}
    c = Ctx(m, hm, sm, clk, rst, regs, core, mi, mo, wires, [(core["rd_data"], hm.out_bits), (core["done"], 1)])
    state = registers(c, s_in, s_out, irq)
    dataflow_register(c)
    sequencer(c, state)
    loader(c)
    storer(c)
    wire(m, "unused_bits", sum(w for _, w in c.unused), Cat(*[x for x, _ in c.unused]))
    ppu = [mk_ppu_lane_pipe(hm.out_bits, hm.dsp), mk_table(*PPU_TABLE)] if hm.ppu else []
    return m, ppu + [c.parts[n] for n in sorted(c.parts)]
