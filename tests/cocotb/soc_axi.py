"""cocotb test of lego_soc against cocotbext-axi's models (run by tests/test_emit_soc.py).

The host is cocotbext-axi's ``AxiLiteMaster`` on ``s_axil_*``; the memory is its ``AxiRam`` on
``m_axi_*`` (a maintained AXI4 slave model that checks the bursts it receives), pausing each
channel on a pattern of its own. The layer's DRAM
images, register writes and expected outputs come from the file named by ``LEGO_SOC_CASE``
(an .npz the pytest side writes with lego_build.sim.memsys)."""
import itertools
import os

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam


def present(bus):
    """The bus without the optional signals the design does not have (cocotb_bus leaves them as None,
    which this cocotbext-axi release would try to drive)."""
    channels = [bus] if not hasattr(bus, "write") else [bus.write.aw, bus.write.w, bus.write.b, bus.read.ar,
                                                         bus.read.r]
    for ch in channels:
        for name in [n for n, v in vars(ch).items() if v is None and not n.startswith("_")]:
            delattr(ch, name)
    return bus


@cocotb.test()
async def layer_through_axi_models(dut):
    case = np.load(os.environ["LEGO_SOC_CASE"])
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    lite = AxiLiteBus.from_prefix(dut, "s_axil")
    for ch in (lite.write.aw, lite.write.w, lite.write.b, lite.read.ar, lite.read.r):
        present(ch)
    host = AxiLiteMaster(lite, dut.clk, dut.rst)
    ram = AxiRam(present(AxiBus.from_prefix(dut, "m_axi")), dut.clk, dut.rst, size=int(case["dram_bytes"]))
    # every channel of the memory pauses now and then, each on its own pattern (ready low on AW, W
    # and AR, valid low on R and B): the DMA's burst registers and its write path's skid register see
    # backpressure in every phase
    for k, ch in enumerate((ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel,
                            ram.read_if.ar_channel, ram.read_if.r_channel)):
        ch.set_pause_generator(itertools.cycle([0] * (3 + k) + [1] * (1 + k % 2)))
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    for addr, start, end in case["images"]:
        ram.write(int(addr), case["image_bytes"][start:end].tobytes())
    for reg, value in case["regs"]:
        await host.write_dword(4 * int(reg), int(value))
    for reg, value in case["regs"][:8]:  # registers read back what was written
        assert await host.read_dword(4 * int(reg)) == int(value) & 0xFFFFFFFF
    await host.write_dword(4 * int(case["ctrl"]), 3)  # start, interrupt enabled
    for _ in range(int(case["max_cycles"])):
        await RisingEdge(dut.clk)
        if dut.irq.value:
            break
    assert dut.irq.value, "no interrupt"
    status = await host.read_dword(4 * int(case["status"]))
    assert status & 2 and not status & 4, f"status {status:#x}: done expected, no AXI error"
    out = np.frombuffer(ram.read(int(case["out_addr"]), int(case["out_bytes"])), dtype=np.uint8)
    np.save(os.environ["LEGO_SOC_OUT"], out)
