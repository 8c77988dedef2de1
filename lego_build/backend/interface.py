"""The generated accelerator's host interface, derived from the DAG.

Ports of ``lego_top`` (all synchronous to ``clk``, ``rst`` active high):

* ``cfg_we, cfg_addr, cfg_wdata``: write one configuration register per cycle.
  Register ``l`` (``0 <= l < levels``) holds the last index (bound - 1) of
  temporal loop level ``l`` (outer to inner), through a shadow register that ``start``
  copies, so the next run's bounds may be written while a run steps; register ``levels + ti*levels + l``
  holds the address stride of tensor ``ti`` along level ``l`` (its bank address is
  ``sum_l stride_l t_l``), modulo ``2**addr_bits``. A switchable design has one more
  register, ``df_reg``: the index of the dataflow to run (order of ``dataflows``).
  A design with FIFOs (delay links) has, per iteration shift ``k`` of ``shifts``,
  ``fifo_depth_reg(k)`` (the depth ``w``, 1..``fifo_capacities[k]``) and per level ``l``
  ``fifo_lo_reg(k, l)``, ``fifo_hi_reg(k, l)``: a FIFO word is used at a time step
  whose loop indices all lie in ``[lo_l, hi_l]``, else the fallback bank is read.
* ``host_we, host_tensor, host_lane, host_addr, host_wdata``: write one operand
  word into bank ``host_lane`` of input tensor ``host_tensor``. The host port (these and
  ``rd_lane, rd_addr -> rd_data``, below) works with the parameter ``HOST`` at 1, as the
  standalone testbench sets it; at 0, the default and ``lego_soc``'s, the memory system is
  the banks' only writer and reader and the port's logic is not made (``rd_data`` reads 0).
* ``start`` (held until accepted: when ``stepping`` is low, so a run may start while the
  previous one drains), ``stepping`` (a run's time steps are being issued), ``busy``
  (stepping or draining), ``rfin`` (a one-cycle pulse when a run's last input-bank read is
  done, ``read_drain`` cycles after its last step: its input halves may be refilled),
  ``fin`` (a one-cycle pulse when its last write is done), both in start order, ``done``
  (high from the last ``fin`` until the next start).
* The memory system's side (``lego_soc``, :mod:`lego_build.emit.soc`): every bank has two
  ping-pong halves. The array reads input tensor ``t``'s half ``in_half[t]`` (a tensor
  the next tile does not change stays in its half, not loaded again) and writes output half
  ``out_half``; with ``acc`` high an output word adds to what the half holds (one cycle of
  read-modify-write, counted in ``drain``). The three are sampled when a run starts and
  travel down the pipeline with its steps. ``dma_we, dma_half, dma_tensor, dma_addr,
  dma_row`` write a whole row (every lane of an input tensor, ``operand_bits`` each) into
  a half; with ``fill`` above one (a bus beat holds several rows: :func:`fill_rows`),
  ``dma_row`` holds ``fill`` rows and ``dma_mask`` says which: slot ``j`` is the row whose
  bank address is ``j`` modulo the tensor's rows per write, at or after ``dma_addr``
  (:func:`rtl_templates_free.primitives.mk_bank_rows`). ``dma_ren, dma_rhalf, dma_raddr ->
  dma_rrow`` read a whole output row one cycle later (with ``row_prefetch`` both halves' rows,
  half 1's in the upper bits, the memory system choosing). The host ports write and read the halves the array uses.
* Addresses on every port are a lane's *logical* address: where a dataflow folds idle banks
  onto a used lane (:mod:`lego_build.ir.fold`; ``BufferSpec.logical_bits`` wide), the low bits
  pick the bank of the lane's group under the running dataflow (``df_reg``, so it is written
  before the banks are) and the rest its row; a host write to a lane that the dataflow does not
  use is dropped.
* ``rd_lane, rd_addr -> rd_data``: read an output word, ``read_latency`` cycles later:
  one, or two through the post-processing unit (``ppu``), whose registers are
  ``ppu_mode_reg`` (bits: 1 requantise, 2 ReLU, 4 LUT; see
  :func:`rtl_templates_free.primitives.mk_ppu`), ``ppu_scale_reg`` (signed 16-bit),
  ``ppu_shift_reg`` and the 256 table entries at ``ppu_lut_base + i``.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.ir import outshare
from lego_build.ir.dag import DAG
from lego_build.ir.host import HostMap, clog2
from lego_build.ir.soc import SocMap, pow2

__all__ = ["HostMap", "SocMap", "clog2", "host_map", "soc_map"]


MAX_FILL = 4  # bank rows one DMA write fills at most (sub-banks per input bank)


def fill_rows(dag: DAG, bus_bits: int) -> tuple[int, ...]:
    """Per input tensor, the bank rows one AXI beat of ``bus_bits`` carries into its banks:
    a row narrower than the bus shares a beat with the rows after it, and the banks take
    them in one write (``MAX_FILL`` sub-banks at most, a power of two that divides the bank
    depth; one for a tensor whose banks fold, whose writes pick a bank by address instead). One
    row per cycle is the rate the array reads at, so a wider fill lets a tile's
    load finish ahead of the previous tile's compute (:mod:`lego_build.emit.soc`)."""
    word = pow2(-(-max(x.bits for x in dag.buffers if x.role == "in") // 8))
    out = [fill(b.lanes, word, b.depth, bus_bits, b.logical_bits > b.addr_bits) for b in dag.buffers if b.role == "in"]
    return tuple(out) if any(k > 1 for k in out) else ()


def fill(lanes: int, word_bytes: int, depth: int, bus_bits: int, folded: bool) -> int:
    """:func:`fill_rows` for one input tensor: ``lanes`` words of ``word_bytes`` per row, banks of
    ``depth`` words (a folded tensor's writes pick a bank by address: one row)."""
    if folded:
        return 1
    k = min(MAX_FILL, max(1, (bus_bits // 8) // pow2(lanes * word_bytes)))
    while depth % k:
        k //= 2
    return k


def host_map(dag: DAG, bus_bits: int = 0) -> HostMap:
    """The array's host and DMA interface; ``bus_bits`` the memory system's AXI data width
    (0: none, one bank row per DMA write)."""
    ins = tuple(b.tensor for b in dag.buffers if b.role == "in")
    (out,) = (b for b in dag.buffers if b.role == "out")
    reads = {n.name for n in dag.nodes if n.kind == "read"}  # a set: a 32x32 array schedules 7,549 nodes
    hm = HostMap(
        levels=dag.levels,
        reduction_levels=dag.reduction_levels,
        counter_bits=dag.counter_bits,
        cfg_addr_bits=0,  # set below from the register count
        addr_bits=max(b.logical_bits for b in dag.buffers),
        input_tensors=ins,
        output_tensor=out.tensor,
        tensor_bits=clog2(len(ins)),
        lane_bits=clog2(max(b.lanes for b in dag.buffers)),
        operand_bits=max(b.bits for b in dag.buffers if b.role == "in"),
        out_bits=out.bits,
        drain=max(dag.latency, 1) + 1,
        dataflows=dag.dataflows if len(dag.dataflows) > 1 else (),
        df_bits=max(1, (len(dag.dataflows) - 1).bit_length()),
        shifts=dag.shifts,
        fifo_capacities=dag.fifo_capacities(),
        fifo_depth_bits=max((n.width for n in dag.nodes if n.kind == "cfg" and n.name.startswith("fifodepth")),
                            default=1),
        ppu=dag.ppu,
        lanes=tuple(dag.buffer(t).lanes for t in (*ins, out.tensor)),
        fill_rows=fill_rows(dag, bus_bits) if bus_bits else (),
        packs=tuple(dag.buffer(t).packs for t in (*ins, out.tensor)) if all(b.packs for b in dag.buffers) else (),
        dsp="mac_fusion" in dag.passes,
        row_prefetch="row_prefetch" in dag.passes,
        read_drain=min(max(dag.latency, 1) + 1, max(d for n, d in dag.schedule if n in reads) + 1),
        out_share=out.share,
        out_periods=out_periods(dag) if out.share else (),
    )
    return replace(hm, cfg_addr_bits=clog2(hm.n_regs))


def out_periods(dag: DAG) -> tuple[int, ...]:
    """Per dataflow, the fewest steps between an output port's commits that its shared lane needs
    (:func:`lego_build.ir.outshare.periods`, from the write nodes' scheduled cycles)."""
    (out,) = (b for b in dag.buffers if b.role == "out")
    when = dag.start_times()
    return outshare.periods(out.share, out.packs, tuple(when[f"wr_{out.tensor}_{p}"] for p in range(out.lanes)),
                            dag.dataflows or ("",))


def soc_map(hm: HostMap, bus_bits: int) -> SocMap:
    """The memory system of the array ``hm`` describes, on an AXI bus of ``bus_bits``: a lane's
    word takes a power-of-two number of bytes (outputs sign-extended)."""
    words = tuple(pow2(-(-b // 8)) for b in (*(hm.operand_bits,) * len(hm.input_tensors), hm.out_bits))
    return SocMap(levels=hm.levels, tensors=hm.tensors, lanes=hm.lanes, word_bytes=words, bus_bits=bus_bits,
                  core_regs=hm.n_regs, packs=hm.packs)
