"""The register file of ``lego_soc``: the AXI4-Lite slave (register map:
:mod:`lego_build.ir.soc`); a write at or above ``core_base`` is a write of the array's own
configuration register; misaligned or partial writes get SLVERR. Beside it, the memory
system's copy of the array's dataflow select."""
from __future__ import annotations

from veriloggen import Cat, If, Mux, Posedge

from lego_build.emit.soc.common import Ctx, num
from lego_build.emit.soc.ppu import ppu_registers
from lego_build.ir.soc import COUNTERS, CTRL, CYCLES, STATUS


def fields(c: Ctx) -> list:
    """(register index, its register) for the layer's registers, by index."""
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


def registers(c: Ctx, s_in: dict, s_out: dict, irq) -> dict:
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
    m.Assign(good((s_in["awaddr"][0:2] == num(0, 2)) & (s_in["wstrb"] == num(15, 4))))
    for n, v in (("awready", accept), ("wready", accept), ("bvalid", bvalid), ("bresp", bresp),
                 ("arready", ~rvalid), ("rvalid", rvalid), ("rdata", rdata), ("rresp", rresp)):
        m.Assign(s_out[n](v))
    wdata = s_in["wdata"]
    # the array's configuration writes leave from registers, a cycle after the write is accepted (issue
    # 45: from the slave's inputs through its decode into the array's configuration registers was the
    # default lego_soc's critical path on an LFE5U-85F, 87.6 MHz); the host's next write, the start
    # included, is accepted two cycles after this one at the earliest (bvalid), so it lands first
    cfg_we, cfg_addr = m.Reg("axil_cfg_we"), m.Reg("axil_cfg_addr", c.hm.cfg_addr_bits)
    cw = c.hm.counter_bits
    data_bits = max(cw, 16) if c.hm.ppu else cw  # the PPU's registers take up to 16 bits
    cfg_wdata = m.Reg("axil_cfg_wdata", data_bits)
    m.Always(Posedge(c.clk))(
        If(c.rst)(cfg_we(0)).Else(cfg_we(accept & good & (widx >= num(sm.core_base, iw)) & ~busy)),
        cfg_addr(widx[0:c.hm.cfg_addr_bits]), cfg_wdata(wdata if data_bits == 32 else wdata[0:data_bits]))
    m.Assign(w["host_cfg_we"](cfg_we))
    m.Assign(w["host_cfg_addr"](cfg_addr))
    m.Assign(w["host_cfg_wdata"](cfg_wdata if data_bits == cw else cfg_wdata[0:cw]))
    if c.hm.ppu:
        ppu_registers(c, cfg_wdata)
    writes = [If(widx == num(idx, iw))(reg(wdata if reg.width == 32 else wdata[0:reg.width]))
              for idx, reg in fields(c)]
    m.Always(Posedge(c.clk))(
        go(0),
        If(c.rst)(bvalid(0), irq_en(0), done(0), busy(0), axi_err(0))
        .Else(
            If(accept)(
                bvalid(1), bresp(Mux(good, num(0, 2), num(2, 2))),
                If(good & ~busy)(*writes),
                If(good & (widx == num(CTRL, iw)))(
                    irq_en(wdata[1]),
                    If(wdata[0] & ~busy)(go(1), busy(1), done(0), axi_err(0))),
                If(good & (widx == num(STATUS, iw)) & wdata[1])(done(0)))
            .Elif(s_in["bready"])(bvalid(0)),
            If(w["finish"])(busy(0), done(1)),
            If(w["err"])(axi_err(1))))
    ridx = m.Wire("axil_ridx", iw)
    m.Assign(ridx(s_in["araddr"][2:axw]))
    # the read data: each register masked by its decoded index, ORed in a balanced tree (issue 44: a
    # chain of multiplexers, one per register, was the slowest path of gemmini_like's memory system)
    readable = [(idx, reg if reg.width == 32 else Cat(num(0, 32 - reg.width), reg)) for idx, reg in fields(c)]
    readable += [(CYCLES + k, counters[n]) for k, n in enumerate(COUNTERS)]
    readable += [(STATUS, Cat(num(0, 29), axi_err, done, busy)), (CTRL, Cat(num(0, 30), irq_en, num(0, 1)))]
    assert len({idx for idx, _ in readable}) == len(readable), "two registers at one index"
    terms = [Mux(ridx == num(idx, iw), word, num(0, 32)) for idx, word in readable]
    while len(terms) > 1:
        terms = [terms[i] | terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    value = terms[0]
    m.Always(Posedge(c.clk))(
        If(c.rst)(rvalid(0))
        .Elif(s_in["arvalid"] & ~rvalid)(
            rvalid(1), rdata(value), rresp(Mux(s_in["araddr"][0:2] == num(0, 2), num(0, 2), num(2, 2))))
        .Elif(s_in["rready"])(rvalid(0)))
    m.Assign(irq(done & irq_en))
    m.Assign(w["go"](go))
    return {"busy": busy, "counters": counters}


def dataflow_register(c: Ctx) -> None:
    """The memory system's copy of the array's dataflow select (written with it): a packed row's
    length and its lanes depend on the dataflow (:mod:`lego_build.frontend.packing`)."""
    m, hm, w = c.m, c.hm, c.w
    if not hm.dataflows:
        return
    sel = m.Reg("df_sel", hm.df_bits)
    m.Always(Posedge(c.clk))(If(w["host_cfg_we"] & (w["host_cfg_addr"] == num(hm.df_reg, hm.cfg_addr_bits)))(
        sel(w["host_cfg_wdata"][0:hm.df_bits])))
    c.w["df"] = sel
    c.unused.append((sel, hm.df_bits))  # a design whose rows no dataflow packs reads it nowhere
