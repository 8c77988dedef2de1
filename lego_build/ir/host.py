"""The host interface of a generated accelerator: the contract between emit and sim.

``rtl/host_interface.json`` holds one :class:`HostMap` (derived from the DAG by
:func:`lego_build.backend.interface.host_map`); the register and port layout is documented
there.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil, log2


def clog2(n: int) -> int:
    return max(1, ceil(log2(n))) if n > 1 else 1


@dataclass(frozen=True, slots=True)
class HostMap:
    levels: int
    reduction_levels: int
    counter_bits: int
    cfg_addr_bits: int
    addr_bits: int
    input_tensors: tuple[str, ...]
    output_tensor: str
    tensor_bits: int  # host_tensor width
    lane_bits: int
    operand_bits: int
    out_bits: int
    drain: int  # cycles the controller waits after the last time step
    dataflows: tuple[str, ...] = ()  # switchable dataflows (select order); () for a single one
    df_bits: int = 1
    shifts: tuple[tuple[int, ...], ...] = ()  # FIFO groups: iteration shift per kernel dim
    fifo_capacities: tuple[int, ...] = ()  # per group: the deepest depth its FIFOs can run at
    fifo_depth_bits: int = 1
    ppu: bool = False
    lanes: tuple[int, ...] = ()  # banks (data-node ports) per tensor, in ``tensors`` order
    read_drain: int = 0  # cycles after the last time step until its last input-bank read is done (0: drain)
    fill_rows: tuple[int, ...] = ()  # per input tensor: bank rows one DMA write fills (() or 1: one)
    packs: tuple[tuple[tuple[int, ...], ...], ...] = ()  # per tensor, per dataflow: lane -> packed word
    dsp: bool = False  # multiplies shaped for DSP blocks (``mac_fusion`` ran): the PPU's products too
    row_prefetch: bool = False  # the write engine reads output rows ahead into a queue (``row_prefetch`` ran)
    # shared output lanes (lego_build.ir.outshare): per output port its lane, and per dataflow (select
    # order) the fewest steps an accumulation takes so that a lane's members never write in one cycle
    out_share: tuple[int, ...] = ()
    out_periods: tuple[int, ...] = ()

    @property
    def in_row_bits(self) -> int:
        """Width of the DMA's input row: the widest input tensor's lanes, ``operand_bits`` each."""
        return max(self.lanes[:-1]) * self.operand_bits

    def rows_of(self, t: int) -> int:
        """Bank rows input tensor ``t`` takes per DMA write."""
        return self.fill_rows[t] if self.fill_rows else 1

    @property
    def fill(self) -> int:
        """The most bank rows of any input tensor one DMA write carries (the width of ``dma_row``)."""
        return max(self.fill_rows, default=1)

    @property
    def out_banks(self) -> int:
        """Output bank lanes: one per port, or per shared lane."""
        return max(self.out_share) + 1 if self.out_share else self.lanes[-1]

    @property
    def out_row_bits(self) -> int:
        """Width of the DMA's output row: every output bank lane, ``out_bits`` each."""
        return self.out_banks * self.out_bits

    def out_period(self, dataflow: str) -> int:
        """The fewest steps between one output port's commits under ``dataflow`` (1: no shared lanes)."""
        if not self.out_periods:
            return 1
        return self.out_periods[self.dataflows.index(dataflow) if self.dataflows else 0]

    def held(self, steps: int, accumulation: int, dataflow: str) -> int:
        """Cycles a run of ``steps`` time steps, ``accumulation`` per output, steps through: with
        shared output lanes an accumulation shorter than :meth:`out_period` holds its first step
        for the difference (:mod:`lego_build.emit.ctrl`)."""
        need = self.out_period(dataflow)
        return steps if accumulation >= need else steps // accumulation * need

    @property
    def read_latency(self) -> int:
        return 2 if self.ppu else 1

    @property
    def ppu_mode_reg(self) -> int:
        return self.fifo_base + len(self.shifts) * (1 + 2 * self.levels)

    @property
    def ppu_scale_reg(self) -> int:
        return self.ppu_mode_reg + 1

    @property
    def ppu_shift_reg(self) -> int:
        return self.ppu_mode_reg + 2

    @property
    def ppu_lut_base(self) -> int:
        """First table entry: the registers rounded up to a multiple of 256."""
        return -(-(self.ppu_mode_reg + 3) // 256) * 256

    @property
    def fifo_base(self) -> int:
        return self.df_reg + (1 if self.dataflows else 0)

    def fifo_depth_reg(self, k: int) -> int:
        return self.fifo_base + k * (1 + 2 * self.levels)

    def fifo_lo_reg(self, k: int, level: int) -> int:
        return self.fifo_depth_reg(k) + 1 + 2 * level

    def fifo_hi_reg(self, k: int, level: int) -> int:
        return self.fifo_depth_reg(k) + 2 + 2 * level

    @property
    def n_regs(self) -> int:
        return self.ppu_lut_base + 256 if self.ppu else self.ppu_mode_reg

    @property
    def df_reg(self) -> int:
        return self.levels * (1 + len(self.tensors))

    def bound_reg(self, level: int) -> int:
        return level

    def stride_reg(self, tensor_index: int, level: int) -> int:
        return self.levels + tensor_index * self.levels + level

    @property
    def tensors(self) -> tuple[str, ...]:
        """Order of address generators (and stride registers): inputs, then the output."""
        return self.input_tensors + (self.output_tensor,)

    def cycles(self, steps: int) -> int:
        """Cycles from the cycle ``start`` is high to the first cycle ``done`` is high:
        one cycle to accept ``start``, one per time step, then ``drain`` cycles (the
        pipeline's latency and the output banks' read-modify-write cycle)."""
        return 1 + steps + self.drain
