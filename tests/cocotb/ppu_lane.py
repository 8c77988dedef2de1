"""cocotb test of the pipelined PPU lane (rtl_templates_free.mk_ppu_lane_pipe, run by
tests/test_rtl_templates.py): random words, scales, shifts and modes, ``en`` low a third of
the cycles (a stalled write path), and every output compared with lego_build.sim.ppu.apply
for the input loaded PPU_LANE_STAGES - 1 enabled cycles before the last."""
import os
import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from lego_build.sim.ppu import PPUConfig, apply
from rtl_templates_free.primitives import PPU_LANE_STAGES


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


@cocotb.test()
async def lane_matches_the_golden_ppu(dut):
    width, vectors = int(os.environ["LANE_WIDTH"]), int(os.environ["LANE_VECTORS"])
    rng = random.Random(width)
    edges = [-(1 << (width - 1)), (1 << (width - 1)) - 1, 0, -1, 1]
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    pending, checked, enabled = [], 0, 0
    for cycle in range(vectors * 2):
        en = rng.random() > 1 / 3
        x = edges[cycle % len(edges)] if cycle < 20 else rng.randint(-(1 << (width - 1)), (1 << (width - 1)) - 1)
        mode, scale, shift = rng.randint(0, 3), rng.randint(-(1 << 15), (1 << 15) - 1), rng.randint(0, 40)
        dut.en.value, dut.x.value, dut.mode.value = int(en), x & ((1 << width) - 1), mode
        dut.scale.value, dut.shift.value = scale & 0xFFFF, shift
        await RisingEdge(dut.clk)
        if en:
            pending.append(int(apply(PPUConfig(mode, scale, shift), np.array([x]))[0]))
            enabled += 1
        await ReadOnly()
        if en and enabled >= PPU_LANE_STAGES:  # the edge that loaded input n put input n - (stages - 1) on y
            got = _signed(int(dut.y.value), width)
            want = pending[enabled - PPU_LANE_STAGES]
            assert got == want, (cycle, got, want)
            checked += 1
        await FallingEdge(dut.clk)  # inputs change away from the edge
    assert checked > vectors // 2
