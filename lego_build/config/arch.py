"""The ``arch`` group's schema: the FU array, its dataflows, the memory system around it
(``arch.memsys``) and the cost model's energies and memory levels."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from omegaconf import MISSING

from lego_build.config.checks import MAX_MHZ, check_choice, check_finite, check_positive
from lego_build.errors import ConfigError
from lego_build.ir.families import FAMILIES
from lego_build.ir.mapping import TILINGS
from lego_build.ir.soc import MemSys

#: what a design does with a sum wider than its accumulator (``arch.overflow``)
OVERFLOW: tuple[str, ...] = ("error", "wrap")
#: how a merged multi-dataflow design feeds a chain of FUs that share a word (``arch.broadcast``,
#: lego_build.frontend.merge): ``ports``, every FU with a data node from another dataflow reads
#: its own (seed 004 §4.3: fewest links); ``links``, one root reads and links forward the word, so
#: the other banks are idle under that dataflow and fold onto the root's (lego_build.ir.fold)
BROADCASTS: tuple[str, ...] = ("ports", "links")

#: the least DRAM bandwidth a design may have (``arch.memsys.dram_bytes_per_cycle``): a byte per
#: 100 cycles, an order of magnitude below a quad-SPI memory's (about 0.1 at a 500 MHz clock)
MIN_DRAM_BYTES_PER_CYCLE = 0.01
#: the longest DRAM latency (``arch.memsys.dram_latency_cycles``): a million cycles, 1 ms at 1 GHz
MAX_DRAM_LATENCY_CYCLES = 1_000_000


@dataclass
class MemsysConf:
    """The memory system around the array (``lego_soc``) and the DRAM it talks to, in one place:
    the AXI4 data width the RTL is emitted with (lego_build.emit.soc), the DRAM's bandwidth and
    latency the testbench's DRAM model runs (lego_build.sim.soc_tb) and the latency model predicts
    with (lego_build.mapping.latency). :meth:`ir` is what every stage passes on, whole
    (:class:`lego_build.ir.soc.MemSys`); a new memory-system setting is a field here and there.

    Not ``frozen``: Hydra composes a frozen dataclass's node read-only, so no preset or override
    could set a key; the stages see the frozen :class:`~lego_build.ir.soc.MemSys`.
    """

    axi_data_bits: int = 128  # the AXI4 data width of lego_soc's master port
    dram_bytes_per_cycle: float = 16.0  # the DRAM's bandwidth, reads and writes together
    dram_latency_cycles: int = 64  # cycles from a burst's address to its first data beat (the DRAM model)

    def __post_init__(self) -> None:
        check_finite("arch.memsys", self, "dram_bytes_per_cycle")
        if self.dram_bytes_per_cycle < MIN_DRAM_BYTES_PER_CYCLE:
            raise ConfigError(f"arch.memsys.dram_bytes_per_cycle={self.dram_bytes_per_cycle:g}: must be at least "
                              f"{MIN_DRAM_BYTES_PER_CYCLE:g} (DRAM bandwidth in bytes per clock cycle, e.g. 16)")
        if not 0 <= self.dram_latency_cycles <= MAX_DRAM_LATENCY_CYCLES:
            raise ConfigError(f"arch.memsys.dram_latency_cycles={self.dram_latency_cycles}: must be from 0 to "
                              f"{MAX_DRAM_LATENCY_CYCLES:,} (cycles from a burst's address to its first data, e.g. 64)")
        if self.axi_data_bits < 32 or self.axi_data_bits > 1024 or self.axi_data_bits & (self.axi_data_bits - 1):
            raise ConfigError(f"arch.memsys.axi_data_bits={self.axi_data_bits}: must be a power of two from 32 to "
                              "1024 (AXI4 data width), e.g. 128")

    def ir(self) -> MemSys:
        return MemSys(axi_data_bits=self.axi_data_bits, dram_bytes_per_cycle=self.dram_bytes_per_cycle,
                      dram_latency_cycles=self.dram_latency_cycles)


@dataclass
class EnergyConf:
    """Per-access energies in pJ (seed 001 Table 5.2, 28 nm). ``table``: a file written by
    ``doit calibrate`` (:mod:`lego_build.targets.energy_check`) whose ``mac_pj``, ``hop_pj`` and
    ``l1_pj`` replace these, read when the config is composed (so the stages see numbers)."""

    mac_pj: float = 0.075
    hop_pj: float = 0.035
    l1_pj: float = 6.0
    dram_pj: float = 200.0
    table: str = ""

    def __post_init__(self) -> None:
        check_finite("arch.energy", self, "mac_pj", "hop_pj", "l1_pj", "dram_pj")
        bad = next((k for k in ("mac_pj", "hop_pj", "l1_pj", "dram_pj") if getattr(self, k) < 0), None)
        if bad:
            raise ConfigError(f"arch.energy.{bad}={getattr(self, bad)}: an energy per access must be >= 0 pJ")
        if not self.table:
            return
        from omegaconf import OmegaConf

        path = Path(self.table)
        try:
            values = OmegaConf.to_container(OmegaConf.load(path))
        except Exception as exc:  # unreadable, or not YAML
            raise ConfigError(f"arch.energy.table={self.table}: cannot read it ({type(exc).__name__}); give the "
                              "file `doit calibrate` wrote") from None
        keys = ("mac_pj", "hop_pj", "l1_pj")
        bad = next((k for k in keys if not isinstance(values, dict) or not isinstance(values.get(k), (int, float))
                    or values[k] <= 0), None)
        if bad:
            raise ConfigError(f"arch.energy.table={self.table}: no positive {bad}; give the file `doit calibrate` "
                              "wrote")
        for k in keys:
            setattr(self, k, float(values[k]))


@dataclass
class MemLevelConf:
    """One memory level of the cost model (seed 001 §3 resource allocation), listed inner -> outer.

    ``size_bytes`` is per instance (0: unbounded, the DRAM level, which must be last);
    ``roles`` are the tensors it stores (``input``, ``weight``, ``output``; the others
    bypass it); ``read_pj``/``write_pj`` per access of ``width_bits`` (-1: Table 5.2
    interpolated from the size); ``bandwidth_bits`` per cycle per instance (0:
    unlimited); ``per_pe`` levels are replicated per PE below the array; ``partition``
    gives per-role sizes instead of one shared ``size_bytes``.
    """

    name: str = MISSING
    size_bytes: int = 0
    roles: List[str] = field(default_factory=lambda: ["input", "weight", "output"])
    read_pj: float = -1.0
    write_pj: float = -1.0
    width_bits: int = 16
    bandwidth_bits: float = 0.0
    per_pe: bool = False
    partition: Dict[str, int] = field(default_factory=dict)
    double_buffered: bool = True


def _check_memory(levels: List[MemLevelConf]) -> None:
    roles = ("input", "weight", "output")
    names = set()
    for i, m in enumerate(levels):
        key = f"arch.memory[{i}]"
        if m.name in names:
            raise ConfigError(f"{key}.name={m.name!r}: two levels have this name; give each level its own")
        names.add(m.name)
        for r in (*m.roles, *m.partition):
            if r not in roles:
                raise ConfigError(f"{key}.roles: unknown role {r!r}; choose from {', '.join(roles)}")
        missing = [r for r in m.roles if m.partition and r not in m.partition]
        if missing:
            raise ConfigError(f"{key}.partition: no size for role {missing[0]!r} (give every stored role a size)")
        if m.size_bytes < 0 or any(v <= 0 for v in m.partition.values()):
            raise ConfigError(f"{key}.size_bytes={m.size_bytes}: sizes must be positive (0 only for DRAM)")
        check_finite(key, m, "read_pj", "write_pj", "bandwidth_bits")
        if m.width_bits <= 0 or m.bandwidth_bits < 0:
            raise ConfigError(f"{key}.width_bits={m.width_bits}, bandwidth_bits={m.bandwidth_bits}: must be positive")
        for pj in ("read_pj", "write_pj"):
            if getattr(m, pj) < 0 and getattr(m, pj) != -1:
                raise ConfigError(f"{key}.{pj}={getattr(m, pj)}: must be >= 0 pJ, or -1 for Table 5.2's value "
                                  "interpolated from the size")
        last = i == len(levels) - 1
        if (m.size_bytes == 0 and not m.partition) != last:
            raise ConfigError(f"{key}.size_bytes={m.size_bytes}: exactly the last (outermost) level, DRAM, "
                              "is unbounded; set size_bytes=0 on the last level only")
        if m.per_pe and (last or (i and not levels[i - 1].per_pe)):
            raise ConfigError(f"{key}.per_pe: per-PE levels must be the innermost ones, below every shared level")
    if levels and all(m.per_pe for m in levels[:-1]) and len(levels) < 2:
        raise ConfigError("arch.memory: give at least one on-chip level and DRAM")


@dataclass
class MulticoreConf:
    """A multicore NPU of small-scratchpad cores (seed 003's NMP): the target of ``mapper=tso``.

    ``clusters`` x ``cores`` cores (TLEs x TLTs); per core three scratchpads (inputs,
    weights, outputs) and a MAC datapath of ``datapath_bits`` (16 MACs/cycle at 8 bit, 8 at
    16 bit); one DMA per cluster that multicasts inside it; DRAM read in ``burst_bytes``
    bursts, each costing ``burst_ns`` on top of ``bytes / bandwidth_gbps`` (Algorithm 4).
    ``element_bits`` is the tensor width the slicing is computed for. ``overlap``: transfers
    run under the MACs (time = max) instead of after them (sum, the NMP's behaviour).
    """

    clusters: int = 4
    cores: int = 8
    spad_in_bytes: int = 8192
    spad_w_bytes: int = 8192
    spad_out_bytes: int = 8192
    datapath_bits: int = 128
    element_bits: int = 16
    clock_ghz: float = 1.0
    burst_bytes: int = 128
    burst_ns: float = 14.0
    bandwidth_gbps: float = 17.0
    overlap: bool = False

    def __post_init__(self) -> None:
        check_positive("arch.multicore", self, "clusters", "cores", "spad_in_bytes", "spad_w_bytes", "spad_out_bytes",
                  "datapath_bits", "element_bits", "burst_bytes")
        check_finite("arch.multicore", self, "clock_ghz", "burst_ns", "bandwidth_gbps")
        for key in ("clock_ghz", "bandwidth_gbps"):
            if getattr(self, key) <= 0:
                raise ConfigError(f"arch.multicore.{key}={getattr(self, key)}: must be > 0")
        if self.burst_ns < 0:
            raise ConfigError(f"arch.multicore.burst_ns={self.burst_ns}: must be >= 0")
        if self.element_bits % 8 or self.datapath_bits % self.element_bits:
            raise ConfigError(f"arch.multicore.element_bits={self.element_bits}: must be whole bytes dividing "
                              f"arch.multicore.datapath_bits={self.datapath_bits}")
        if self.clusters > 1 and self.clusters % 2:
            raise ConfigError(f"arch.multicore.clusters={self.clusters}: KS&OFM splits the clusters in two halves, "
                              "so use 1 or an even number")


@dataclass
class DataflowConf:
    """One spatial dataflow of the array (seed 004 §3.2), written by dim names of ``arch.family``.

    ``spatial[j]`` is what array axis ``j`` (rows, then cols) unrolls: ``"m"``, or
    ``"x:4,k:4"`` for several dims on one axis (outer to inner, extents multiply to
    the axis size). ``interstellar`` is the alternative spelling of seed 001 ch. 3
    (``"C|K"``, ``"FY|Y"``, ``"C|K4X4"``, ``"[c|k, x2|y2]"``). ``temporal`` fixes the loop
    nest (outer to inner) when the hardware supports only that one; a tiled dim has
    inner levels ``dim:trips`` under its open outermost level. ``stride`` (conv2d only) is
    the convolution stride the dataflow's links are planned for: a strided window reuses
    an input ``stride`` FUs away (e.g. Eyeriss's diagonal becomes ``(2, -1)``), so a
    second dataflow with ``stride: 2`` gives stride-2 layers links of their own.
    """

    spatial: List[str] = field(default_factory=list)
    interstellar: str = ""
    temporal: List[str] = field(default_factory=list)
    stride: int = 1


@dataclass
class UnrollConf:
    """What a searched unrolling may use (``mapper.unroll=search``, issue 22): the dims each
    array axis may unroll (rows, then cols, e.g. row stationary ``[[kh, ic], [oh, oc]]``) and
    the dims it must unroll whenever a layer has them (``[kh, oh]``: filter rows on the rows,
    output rows on the columns)."""

    axes: List[List[str]] = field(default_factory=list)
    required: List[str] = field(default_factory=list)


@dataclass
class ArchConf:
    """A 2-D FU array and its spatial dataflows (several make a switchable design).

    Layers of other kernel families are lowered to ``family``
    (lego_build.analysis.lowering). ``control_flow`` is ``c`` of seed 004 eq. 3.6;
    ``d_s`` and ``d_t`` bound link length and FIFO depth (eq. 4.1, 4.3); ``d_t = 0``
    means no FIFOs between FUs (direct links only). ``fu`` is the FU's multiplier:
    ``mac`` (a signed ``operand_bits`` multiplier: int8 by default, 16-bit with
    ``operand_bits=16``) or ``bitfusion`` (BitFusion-style shift-add of 2-bit x 2-bit
    BitBrick products, rtl_templates_free.mk_bitfusion_mul; ``operand_bits`` even), one of
    seed 004 Table 6.3's group FUs for the mapper only (``fp16``, ``int8``, ``fp4_int4``,
    ``vsq_int4``, ``mx4``, ``mx6``, ``mx9``: operands moved at the format's bits per element,
    lego_build.fulang.library), or a plugin's (entry-point group ``lego_build.fus``, e.g. an FU
    written in the FU language, lego_build.fulang.kinds.expression_fu); the name and the widths
    it supports are checked by :func:`lego_build.flow.validate.check_names`.
    """

    name: str = "systolic"
    family: str = "gemm"
    rows: int = 4
    cols: int = 4
    fu: str = "mac"
    ppu: bool = True  # post-processing unit on the output path: requantise, ReLU, LUT activation
    operand_bits: int = 8
    acc_bits: int = 32
    overflow: str = "error"
    dataflows: Dict[str, DataflowConf] = field(default_factory=dict)  # presets name theirs
    control_flow: List[int] = field(default_factory=lambda: [1, 1])
    d_s: int = 1
    d_t: int = 0
    buffer_depth: int = 4096
    onchip_kb: float = 0.0  # total bank SRAM (both ping-pong halves); > 0 sizes the banks, else buffer_depth
    onchip_split: Dict[str, float] = field(default_factory=dict)  # KB per role (input/weight/output); sums to onchip_kb
    tiling: str = "search"  # "search": the mapper searches; "gemmini": Gemmini's own tiling rule (mapping.gemmini)
    broadcast: str = "ports"  # a shared word in a merged design: read at every port, or forwarded over links
    # output bank lanes per column (at most one per FU), each shared in turn by ceil(rows / out_lanes) of
    # its FUs, time-multiplexed by their commits (lego_build.ir.outshare; 0: a lane per FU)
    out_lanes: int = 0
    max_fus: int = 4096
    clock_mhz: float = 500.0  # the design's clock target: GOP/s, and what the asic flow's timing checks
    memsys: MemsysConf = field(default_factory=MemsysConf)  # bus width, DRAM bandwidth and latency
    energy: EnergyConf = field(default_factory=EnergyConf)
    memory: List[MemLevelConf] = field(default_factory=list)  # cost-model levels; empty: the generated array's own
    # with ``memory`` (the generated array's own FUs and links decide these): a MAC keeps its input
    # operands in registers (no scratchpad read while an operand does not change), and PEs whose input
    # windows overlap share the overlap over the array network (Eyeriss's diagonal reuse)
    operand_registers: bool = True
    window_forwarding: bool = True
    multicore: Optional[MulticoreConf] = None  # a multicore NPU for mapper=tso (arch=nmp)
    unroll: UnrollConf = field(default_factory=UnrollConf)  # what mapper.unroll=search may unroll

    def __post_init__(self) -> None:
        _check_memory(self.memory)
        check_positive("arch", self, "rows", "cols", "operand_bits", "acc_bits", "d_s", "buffer_depth", "max_fus")
        check_finite("arch", self, "onchip_kb", "clock_mhz")
        if not 0 < self.clock_mhz <= MAX_MHZ:
            raise ConfigError(f"arch.clock_mhz={self.clock_mhz:g}: must be in (0, {MAX_MHZ:g}] (the design's clock "
                              "target in MHz, e.g. 500)")
        if self.d_t < 0:
            raise ConfigError(f"arch.d_t={self.d_t}: must be >= 0 (0: no FIFOs between FUs)")
        check_choice("arch", "overflow", self.overflow, OVERFLOW)
        check_choice("arch", "family", self.family, tuple(FAMILIES))
        if self.rows * self.cols > self.max_fus:
            raise ConfigError(
                f"arch.rows x arch.cols = {self.rows * self.cols} FUs exceeds arch.max_fus={self.max_fus}; "
                "use a smaller array or raise arch.max_fus"
            )
        if not self.dataflows:
            raise ConfigError("arch.dataflows: give at least one dataflow, e.g. arch.dataflows.main.spatial=[m,n]")
        if len(self.control_flow) != 2 or any(c not in (-1, 0, 1) for c in self.control_flow):
            raise ConfigError(f"arch.control_flow={list(self.control_flow)}: needs two values from -1, 0, 1")
        if self.operand_bits > 32 or self.acc_bits > 64:
            raise ConfigError(
                f"arch.operand_bits={self.operand_bits}, arch.acc_bits={self.acc_bits}: limits are 32 and 64 bits; "
                "use narrower operands"
            )
        if self.onchip_kb < 0:
            raise ConfigError(f"arch.onchip_kb={self.onchip_kb}: must be >= 0 (0: every bank holds "
                              "arch.buffer_depth words per half)")
        if self.onchip_split:
            bad = next((k for k in self.onchip_split if k not in ("input", "weight", "output")), None)
            if bad or set(self.onchip_split) != {"input", "weight", "output"}:
                raise ConfigError(f"arch.onchip_split: {'unknown role ' + repr(bad) if bad else 'incomplete'}; give "
                                  "KB for each of input, weight and output, e.g. {input: 96, weight: 96, output: 64}")
            if any(not math.isfinite(v) or v <= 0 for v in self.onchip_split.values()) or \
                    abs(sum(self.onchip_split.values()) - self.onchip_kb) > 1e-9:
                raise ConfigError(f"arch.onchip_split={dict(self.onchip_split)}: shares must be > 0 and sum to "
                                  f"arch.onchip_kb={self.onchip_kb}")
        check_choice("arch", "tiling", self.tiling, tuple(TILINGS))
        check_choice("arch", "broadcast", self.broadcast, BROADCASTS)
        if self.out_lanes < 0:
            raise ConfigError(f"arch.out_lanes={self.out_lanes}: must be >= 0 (the output lanes of a column, each "
                              "shared by rows / out_lanes of its FUs; 0: a lane per FU)")
        if self.acc_bits < 2 * self.operand_bits:
            raise ConfigError(f"arch.acc_bits={self.acc_bits}: must hold a product (>= 2 x arch.operand_bits)")
