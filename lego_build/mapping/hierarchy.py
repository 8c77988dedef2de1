"""Memory hierarchies for the cost model: Table 5.2 energies and the hierarchy of an arch.

:func:`table52_pj` interpolates seed 001 Table 5.2 (28 nm, pJ per 16-bit access):
register files double per doubling of size from 0.03 pJ at 16 B to 0.96 pJ at 512 B
(linear in size, extrapolated the same way below 16 B), SRAM grows 1.5x per doubling
from 6 pJ at 32 KB to 30.375 pJ at 512 KB (extrapolated the same way beyond); between
512 B and 32 KB the two end points are joined log-log (the thesis: wire length grows
as the square root of the area, which is proportional to the capacity).

:func:`from_conf` is ``arch.memory`` when the arch lists its levels; :func:`array_hierarchy`
the generated array's own (chosen per layer and dataflow by ``mapping.stage``): a per-FU
accumulator register (outputs), the L1 banks (one bank of ``buffer_depth`` words per data-node
port of each tensor, one word per port per cycle) and DRAM (``arch.memsys.dram_bytes_per_cycle``).
"""
from __future__ import annotations

from math import log2

from lego_build.ir.memory import ROLES, Hierarchy, MemLevel

RF_16B_PJ, RF_512B_PJ = 0.03, 0.96
SRAM_32KB_PJ = 6.0
SRAM_STEP = 1.5  # per doubling above 32 KB


def table52_pj(size_bytes: float) -> float:
    """Energy of one 16-bit access to a memory of ``size_bytes`` (seed 001 Table 5.2, interpolated)."""
    if size_bytes <= 0:
        raise ValueError(f"memory size must be positive, got {size_bytes}")
    if size_bytes <= 512:
        return RF_16B_PJ * size_bytes / 16
    if size_bytes >= 32 * 1024:
        return SRAM_32KB_PJ * SRAM_STEP ** log2(size_bytes / (32 * 1024))
    frac = log2(size_bytes / 512) / log2(64)
    return 2 ** (log2(RF_512B_PJ) + frac * (log2(SRAM_32KB_PJ) - log2(RF_512B_PJ)))


def from_conf(arch) -> Hierarchy:
    """``arch.memory`` (inner -> outer, DRAM last) as a :class:`Hierarchy`.

    A declared hierarchy has per-PE register files feeding MAC operand registers, so an
    input word the MAC already holds is not read again (ZigZag's and Timeloop's
    reading; ``arch.operand_registers=false``: every MAC reads its operands, AccelForge's);
    the generated array's FUs take a new word from the network every step. With
    ``arch.window_forwarding=false`` PEs whose input windows overlap do not share the
    overlap: the shared level serves every PE's fill (AccelForge's reading).
    """
    levels = []
    for m in arch.memory:
        size = m.size_bytes if m.size_bytes > 0 else None
        e = (table52_pj(size) if size else arch.energy.dram_pj) * m.width_bits / 16
        levels.append(MemLevel(
            name=m.name, size_bytes=size, roles=tuple(m.roles),
            read_pj=m.read_pj if m.read_pj >= 0 else e, write_pj=m.write_pj if m.write_pj >= 0 else e,
            width_bits=m.width_bits, bandwidth_bits=m.bandwidth_bits or None, per_pe=m.per_pe,
            partition=tuple(sorted(m.partition.items())), double_buffered=m.double_buffered,
        ))
    return Hierarchy(arch.name, tuple(levels), arch.rows, arch.cols, arch.energy.mac_pj, arch.energy.hop_pj,
                     operand_reuse=arch.operand_registers, window_forwarding=arch.window_forwarding)


def array_hierarchy(arch, ports: dict[str, int], bits: dict[str, int],
                    depth: dict[str, int] | None = None) -> Hierarchy:
    """The generated array's hierarchy; ``ports[role]`` data-node ports (banks), ``bits[role]`` word widths,
    ``depth[role]`` words per bank half (default ``arch.buffer_depth``): a tile lives in one half
    while the DMA fills or empties the other."""
    e = arch.energy
    acc_bytes = -(-arch.acc_bits // 8)  # a 25-bit accumulator holds a word that needs 4 bytes
    acc = MemLevel("acc", acc_bytes, ("output",), table52_pj(acc_bytes), table52_pj(acc_bytes), width_bits=16,
                   per_pe=True)
    depth = depth or {}
    partition = tuple((r, ports[r] * depth.get(r, arch.buffer_depth) * bits[r] // 8) for r in ROLES if ports.get(r))
    l1 = MemLevel("l1", sum(b for _, b in partition), tuple(r for r, _ in partition), e.l1_pj, e.l1_pj, 16,
                  bandwidth_bits=float(sum(ports[r] * bits[r] for r, _ in partition)), partition=partition)
    dram = MemLevel("dram", None, ROLES, e.dram_pj, e.dram_pj, 16,
                    bandwidth_bits=arch.memsys.dram_bytes_per_cycle * 8)
    return Hierarchy(arch.name, (acc, l1, dram), arch.rows, arch.cols, e.mac_pj, e.hop_pj)
