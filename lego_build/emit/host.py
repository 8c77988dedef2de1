"""The generated accelerator's host interface, derived from the DAG.

Ports of ``lego_top`` (all synchronous to ``clk``, ``rst`` active high):

* ``cfg_we, cfg_addr, cfg_wdata``: write one configuration register per cycle.
  Register ``l`` (``0 <= l < levels``) holds the last index (bound - 1) of
  temporal loop level ``l`` (outer to inner); register ``levels + ti*levels + l``
  holds the address jump of tensor ``ti`` when level ``l`` advances (all inner
  levels wrapping), modulo ``2**addr_bits``. A switchable design has one more
  register, ``df_reg``: the index of the dataflow to run (order of ``dataflows``).
  A design with FIFOs (delay links) has, per iteration shift ``k`` of ``shifts``,
  ``fifo_depth_reg(k)`` (the depth ``w``, 1..``fifo_capacities[k]``) and per level ``l``
  ``fifo_lo_reg(k, l)``, ``fifo_hi_reg(k, l)``: a FIFO word is used at a time step
  whose loop indices all lie in ``[lo_l, hi_l]``, else the fallback bank is read.
* ``host_we, host_tensor, host_lane, host_addr, host_wdata``: write one operand
  word into bank ``host_lane`` of input tensor ``host_tensor``.
* ``start`` (one-cycle pulse, accepted when idle), ``busy``, ``done`` (high from
  the end of a run until the next start).
* ``rd_lane, rd_addr -> rd_data``: read an output word, ``read_latency`` cycles later:
  one, or two through the post-processing unit (``ppu``), whose registers are
  ``ppu_mode_reg`` (bits: 1 requantise, 2 ReLU, 4 LUT; see
  :func:`rtl_templates_free.primitives.mk_ppu`), ``ppu_scale_reg`` (signed 16-bit),
  ``ppu_shift_reg`` and the 256 table entries at ``ppu_lut_base + i``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil, log2

from lego_build.ir.dag import DAG


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

    def jump_reg(self, tensor_index: int, level: int) -> int:
        return self.levels + tensor_index * self.levels + level

    @property
    def tensors(self) -> tuple[str, ...]:
        """Order of address generators (and jump registers): inputs, then the output."""
        return self.input_tensors + (self.output_tensor,)

    def cycles(self, steps: int) -> int:
        """Cycles from the cycle ``start`` is high to the first cycle ``done`` is high:
        one cycle to accept ``start``, one per time step, then ``drain`` cycles."""
        return 1 + steps + self.drain


def host_map(dag: DAG) -> HostMap:
    ins = tuple(b.tensor for b in dag.buffers if b.role == "in")
    (out,) = (b for b in dag.buffers if b.role == "out")
    hm = HostMap(
        levels=dag.levels,
        reduction_levels=dag.reduction_levels,
        counter_bits=dag.counter_bits,
        cfg_addr_bits=0,  # set below from the register count
        addr_bits=out.addr_bits,
        input_tensors=ins,
        output_tensor=out.tensor,
        tensor_bits=clog2(len(ins)),
        lane_bits=clog2(max(b.lanes for b in dag.buffers)),
        operand_bits=max(b.bits for b in dag.buffers if b.role == "in"),
        out_bits=out.bits,
        drain=max(dag.latency, 1),
        dataflows=dag.dataflows if len(dag.dataflows) > 1 else (),
        df_bits=max(1, (len(dag.dataflows) - 1).bit_length()),
        shifts=dag.shifts,
        fifo_capacities=dag.fifo_capacities(),
        fifo_depth_bits=max((n.width for n in dag.nodes if n.kind == "cfg" and n.name.startswith("fifodepth")),
                            default=1),
        ppu=dag.ppu,
    )
    return replace(hm, cfg_addr_bits=clog2(hm.n_regs))
