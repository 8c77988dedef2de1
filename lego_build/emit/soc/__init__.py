"""The memory system around the array: ``lego_soc`` (register map and DRAM layout:
:mod:`lego_build.ir.soc`), one module per hardware block, built in the order the generated
Verilog reads:

* :mod:`~lego_build.emit.soc.registers`: the AXI4-Lite slave (the register file) and the
  copy of the array's dataflow select;
* :mod:`~lego_build.emit.soc.sequencer`: the tile sequencer (loads, computes and stores
  overlapped on ping-pong bank halves);
* :mod:`~lego_build.emit.soc.loader` / :mod:`~lego_build.emit.soc.storer`: the DMA's read and
  write engines (AXI4 bursts);
* :mod:`~lego_build.emit.soc.ppu`: the post-processing lanes on the output path;
* :mod:`~lego_build.emit.soc.walkers`: the address walkers and burst machinery they share
  (nested bases, no multiplier: the controller's scheme, :mod:`lego_build.emit.ctrl`);
* :mod:`~lego_build.emit.soc.common`: the context the blocks build in and small helpers;
* :mod:`~lego_build.emit.soc.assembly`: :func:`mk_soc`, the ports, registers and array
  instance, and the blocks in order.
"""
from lego_build.emit.soc.assembly import mk_soc

__all__ = ["mk_soc"]
