"""The memory-system interface of a generated accelerator (``lego_soc``): the contract
between :mod:`lego_build.emit.soc` and the simulator's driver (:mod:`lego_build.sim.memsys`).

``lego_soc`` wraps the array (``lego_top``) with an AXI4-Lite slave (32-bit registers, byte
address = 4 x register index), an AXI4 master of ``bus_bits`` data bits (INCR bursts, one
ID, so responses return in order), a DMA engine and a tile sequencer, and an ``irq`` line.

DRAM layout: tensor ``t`` is stored as rows of ``slot_bytes[t]`` bytes (a power of two,
aligned to it); a row holds the words of all ``lanes[t]`` banks of ``t`` at one bank
address, lane ``i`` at byte ``i * word_bytes[t]`` (little-endian, outputs sign-extended).
The rows of a layer's image follow the layer's loop nest over the levels the tensor
depends on, innermost fastest (the bank layout of :mod:`lego_build.sim.layout` with the
whole layer as one tile), so every tile is a strided box of rows.

Registers (index; ``L = levels``, ``T = len(tensors)``, inputs then the output):

* ``CTRL`` 0: write bit 0 = start the layer, bit 1 = interrupt enable;
* ``STATUS`` 1: bit 0 busy, bit 1 done (write 1 to clear it and the interrupt), bit 2 an
  AXI error response was seen;
* counters of the last run: ``CYCLES`` 2 (start to done), ``COMPUTE`` 3 (cycles the array
  ran), ``LOAD_WAIT`` 4 (cycles the array waited for a tile's operands), ``STORE_WAIT`` 5
  (for an output half still being written back), ``RD_BEATS`` 6, ``WR_BEATS`` 7;
* per level ``l``: ``tiles_reg(l)`` tiles - 1, ``full_reg(l)`` trips of a full tile - 1,
  ``rem_reg(l)`` trips of the last tile - 1 (Ruby's last-iteration bound, seed 002);
* per tensor ``t``: ``base_reg(t)`` byte address of its image, and per level
  ``row_stride_reg(t, l)`` (bytes between rows one trip apart; exactly one row, the
  level whose rows are contiguous, goes out as one burst), ``tile_stride_reg(t, l)``
  (bytes between tiles one tile apart), ``bank_stride_reg(t, l)`` (bank rows one trip
  apart; 0 where the tensor does not depend on the level or the level never moves);
* from ``core_base`` on: the array's own registers (:mod:`lego_build.backend.interface`), whose
  bounds the sequencer rewrites for every tile.
"""
from __future__ import annotations

from dataclasses import dataclass

from lego_build.ir.host import clog2

CTRL, STATUS, CYCLES, COMPUTE, LOAD_WAIT, STORE_WAIT, RD_BEATS, WR_BEATS = range(8)
COUNTERS = ("cycles", "compute", "load_wait", "store_wait", "rd_beats", "wr_beats")
HEADER = 8


@dataclass(frozen=True, slots=True)
class MemSys:
    """The memory system's settings (``arch.memsys``, :class:`lego_build.config.schema.MemsysConf`),
    passed whole from the config to the RTL (the bus width of :class:`SocMap`), the driver and
    its DRAM model (:mod:`lego_build.sim.memsys`, :mod:`lego_build.sim.soc_tb`) and the latency
    model (:mod:`lego_build.mapping.latency`)."""

    axi_data_bits: int = 128  # the AXI4 data width of lego_soc's master port
    dram_bytes_per_cycle: float = 16.0  # the DRAM's bandwidth, reads and writes together
    dram_latency_cycles: int = 64  # from a burst's address to its first beat (and a write's last to its response)


def pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


@dataclass(frozen=True, slots=True)
class SocMap:
    levels: int
    tensors: tuple[str, ...]  # inputs, then the output
    lanes: tuple[int, ...]
    word_bytes: tuple[int, ...]
    bus_bits: int
    core_regs: int  # registers of the array (HostMap.n_regs)
    max_outstanding: int = 16  # AXI read bursts in flight
    # per tensor, per dataflow: each lane's word in a packed row (-1 unused; lego_build.frontend.packing)
    packs: tuple[tuple[tuple[int, ...], ...], ...] = ()

    @property
    def bus_bytes(self) -> int:
        return self.bus_bits // 8

    @property
    def slot_bytes(self) -> tuple[int, ...]:
        """Bytes of a row holding every lane of each tensor (the banks' full width)."""
        return tuple(pow2(n * w) for n, w in zip(self.lanes, self.word_bytes))

    def packed(self, t: int) -> bool:
        """Does tensor ``t``'s row shrink per dataflow? Rows wider than a beat only: a narrower one
        shares its beat with the next rows (``HostMap.fill_rows``), so it keeps its lanes."""
        return bool(self.packs) and self.slot_bytes[t] > self.bus_bytes

    def words(self, t: int, df: int) -> int:
        """Words of tensor ``t``'s packed row under dataflow ``df`` (its distinct used lanes)."""
        return max(self.packs[t][df], default=-1) + 1 if self.packed(t) else self.lanes[t]

    def slot(self, t: int, df: int) -> int:
        """Bytes of one DRAM row of tensor ``t`` under dataflow ``df``: the packed words, in whole
        beats (the full row where :meth:`packed` says it does not shrink)."""
        if not self.packed(t):
            return self.slot_bytes[t]
        return max(self.bus_bytes, pow2(max(1, self.words(t, df)) * self.word_bytes[t]))

    def lane_of(self, t: int, df: int) -> tuple[int, ...]:
        """Per word of the packed row, the first lane that holds it (identity when not packed)."""
        if not self.packed(t):
            return tuple(range(self.lanes[t]))
        firsts: dict[int, int] = {}
        for lane, p in enumerate(self.packs[t][df]):
            if p >= 0:
                firsts.setdefault(p, lane)
        return tuple(firsts[p] for p in range(len(firsts)))

    def word_of(self, t: int, df: int) -> tuple[int, ...]:
        """Per lane, its word in the packed row (-1 unused; identity when not packed)."""
        return self.packs[t][df] if self.packed(t) else tuple(range(self.lanes[t]))

    def tiles_reg(self, level: int) -> int:
        return HEADER + level

    def full_reg(self, level: int) -> int:
        return HEADER + self.levels + level

    def rem_reg(self, level: int) -> int:
        return HEADER + 2 * self.levels + level

    def base_reg(self, t: int) -> int:
        return HEADER + 3 * self.levels + t * (1 + 3 * self.levels)

    def row_stride_reg(self, t: int, level: int) -> int:
        return self.base_reg(t) + 1 + level

    def tile_stride_reg(self, t: int, level: int) -> int:
        return self.base_reg(t) + 1 + self.levels + level

    def bank_stride_reg(self, t: int, level: int) -> int:
        return self.base_reg(t) + 1 + 2 * self.levels + level

    @property
    def core_base(self) -> int:
        """A power of two at least as large as both register blocks, so the array's register
        number is the low bits of the index."""
        return pow2(max(self.base_reg(len(self.tensors)), self.core_regs))

    @property
    def axil_addr_bits(self) -> int:
        return clog2(self.core_base + self.core_regs) + 2
