"""Structured-config schemas: one dataclass per config-group option.

Hydra composes ``conf/`` against these schemas (registered as ``base_<option>`` in
the ConfigStore), so an unknown key or a wrong type fails during composition with
the key's full name. Value checks that types cannot express (positive sizes,
known objective names) live in ``__post_init__`` and raise :class:`ConfigError`
naming the key; they run when the composed config is turned into objects.
"""
from __future__ import annotations

import importlib.util
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from omegaconf import MISSING

from lego_build.errors import ConfigError
from lego_build.ir.families import FAMILIES
from lego_build.ir.mapping import MAPSPACES, OBJECTIVES, TILINGS, UNROLLS
from lego_build.ir.soc import MemSys
from lego_build.ir.testdata import GENERATED, PATTERNS


def _positive(group: str, obj: Any, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if value <= 0:
            raise ConfigError(f"{group}.{name}={value}: must be a positive integer")


def _finite(group: str, obj: Any, *names: str) -> None:
    """``nan`` and ``inf`` parse as floats and slip past every ``<`` check: refuse them first."""
    for name in names:
        value = getattr(obj, name)
        if value is not None and not math.isfinite(value):
            raise ConfigError(f"{group}.{name}={value}: must be a finite number")


def _seed(group: str, obj: Any) -> None:
    if obj.seed < 0:
        raise ConfigError(f"{group}.seed={obj.seed}: must be an integer >= 0 (the random generators take "
                          "no negative seeds), e.g. 1")


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def _name(key: str, value: str) -> None:
    """Names end up in paths (``out/<arch>-<workload>-<hash>``) and reports next to Verilog
    identifiers: letters, digits and ``_`` only, so ``../x``, ``a b`` or ``x;y`` cannot escape
    ``out/`` or break a tool that reads them."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ConfigError(f"{key}={value!r}: not a valid name; use 1-64 letters, digits and _, "
                          "starting with a letter (e.g. my_array)")


def _choice(group: str, name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"{group}.{name}={value!r}: must be one of {', '.join(choices)}")


#: what a design does with a sum wider than its accumulator (``arch.overflow``)
OVERFLOW: tuple[str, ...] = ("error", "wrap")
#: how a merged multi-dataflow design feeds a chain of FUs that share a word (``arch.broadcast``,
#: lego_build.frontend.merge): ``ports``, every FU with a data node from another dataflow reads
#: its own (seed 004 §4.3: fewest links); ``links``, one root reads and links forward the word, so
#: the other banks are idle under that dataflow and fold onto the root's (lego_build.ir.fold)
BROADCASTS: tuple[str, ...] = ("ports", "links")
#: what the simulate stage runs in RTL: representative tiles through the array's host port,
#: or whole layers (the representative ones, or every array layer of the network) through
#: the memory system (lego_build.sim.memsys); ``none``: nothing (``target.flow=asic`` then
#: prices every net at ``target.activity``)
SCOPES: tuple[str, ...] = ("tiles", "layers", "network", "none")
#: what ``target.flow=asic`` synthesises: the design with its memory system (``lego_soc``), or the
#: array alone (``lego_top``, every module then run by the simulated tiles)
ASIC_TOPS = {"soc": "lego_soc", "array": "lego_top"}

# --------------------------------------------------------------------------- workload
# ``kind`` selects how the workload is built (lego_build.analysis.from_config.workload_from_config).
#: widest operand a workload may declare (``workload.bits``; ``arch.operand_bits`` has the same limit)
MAX_BITS = 32


def _bits(obj: Any) -> None:
    if obj.bits > MAX_BITS:
        raise ConfigError(f"workload.bits={obj.bits}: operands are at most {MAX_BITS} bits; use a narrower precision")


@dataclass
class GemmWorkload:
    """``Y[b, m, n] += A[b, m, k] * B[b, k, n]`` with signed ``bits``-bit operands."""

    name: str = "gemm"
    kind: str = "gemm"
    M: int = 16
    N: int = 16
    K: int = 16
    batch: int = 1
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kind", self.kind, ("gemm",))
        _positive("workload", self, "M", "N", "K", "batch", "bits")
        _bits(self)


@dataclass
class Conv2dWorkload:
    """``Y[n, k, oh, ow] += X[n, c, s*oh + d*kh - pad, s*ow + d*kw - pad] * W[k, c, kh, kw]``, grouped."""

    name: str = "conv2d"
    kind: str = "conv2d"
    batch: int = 1
    in_ch: int = 16
    out_ch: int = 16
    in_h: int = 14
    in_w: int = 14
    kh: int = 3
    kw: int = 3
    stride: int = 1
    pad: int = 1
    dilation: int = 1
    groups: int = 1
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kind", self.kind, ("conv2d",))
        _positive("workload", self, "batch", "in_ch", "out_ch", "in_h", "in_w", "kh", "kw", "stride",
                  "dilation", "groups", "bits")
        _bits(self)
        if self.pad < 0:
            raise ConfigError(f"workload.pad={self.pad}: must be >= 0")
        for key in ("in_ch", "out_ch"):
            if getattr(self, key) % self.groups:
                raise ConfigError(f"workload.{key}={getattr(self, key)}: not divisible by "
                                  f"workload.groups={self.groups}; make the channel counts multiples of the groups")
        for axis, size, k in (("h", self.in_h, self.kh), ("w", self.in_w, self.kw)):
            if size + 2 * self.pad < self.dilation * (k - 1) + 1:
                raise ConfigError(f"workload.in_{axis}={size}: smaller than the kernel k{axis}={k} even with padding; "
                                  "use a larger input, a smaller kernel or more padding")


@dataclass
class MttkrpWorkload:
    """``D[i, j] += A[i, k, l] * B[k, j] * C[l, j]``."""

    name: str = "mttkrp"
    kind: str = "mttkrp"
    I: int = 64
    J: int = 16
    K: int = 32
    L: int = 32
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kind", self.kind, ("mttkrp",))
        _positive("workload", self, "I", "J", "K", "L", "bits")
        _bits(self)


@dataclass
class TtmcWorkload:
    """``Y[i, j, k] += X[i, l, m] * B[l, j] * C[m, k]`` (tensor-times-matrix chain)."""

    name: str = "ttmc"
    kind: str = "ttmc"
    I: int = 16
    J: int = 8
    K: int = 8
    L: int = 16
    M: int = 16
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kind", self.kind, ("ttmc",))
        _positive("workload", self, "I", "J", "K", "L", "M", "bits")
        _bits(self)


@dataclass
class AttentionWorkload:
    """Scaled dot-product attention: ``S = Q K^T`` and ``O = softmax(S) V`` per head."""

    name: str = "attention"
    kind: str = "attention"
    batch: int = 1
    heads: int = 12
    seq_q: int = 128
    seq_kv: int = 128
    head_dim: int = 64
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kind", self.kind, ("attention",))
        _positive("workload", self, "batch", "heads", "seq_q", "seq_kv", "head_dim", "bits")
        _bits(self)


@dataclass
class NetworkWorkload:
    """A built-in network from published layer shapes (``lego_build.analysis.networks``)."""

    name: str = MISSING
    kind: str = "network"
    network: str = MISSING
    batch: int = 1
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kind", self.kind, ("network",))
        _positive("workload", self, "batch", "bits")
        _bits(self)


@dataclass
class ModelFileWorkload:
    """A model file: ONNX, TFLite flatbuffer, a Timeloop problem YAML, or a plugin's format
    (``kind`` names an importer: lego_build.analysis.importers.IMPORTERS, checked by
    :func:`lego_build.flow.validate.check_names`).

    ``symbols``: the values of an ONNX model's symbolic input dims by name (``dim_param``), e.g.
    ``'workload.symbols={N: 4}'`` for an input ``[N, 3, 32, 32]``; a symbolic dim without one is
    refused. ``batch``: a TFLite model's dynamic batch (or a plugin format's); ONNX and Timeloop
    files state their own, so they take only 1.
    """

    name: str = MISSING
    kind: str = MISSING
    path: str = MISSING
    batch: int = 1
    bits: int = 8
    symbols: Dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _positive("workload", self, "batch", "bits")
        _bits(self)
        if not self.path:
            raise ConfigError(f"workload.path: give the {self.kind} file, e.g. workload.path=model.{self.kind}")
        for symbol, value in self.symbols.items():
            if value <= 0:
                raise ConfigError(f"workload.symbols.{symbol}={value}: a dim's size must be a positive integer")


# --------------------------------------------------------------------------- arch
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
        _finite("arch.memsys", self, "dram_bytes_per_cycle")
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
        _finite("arch.energy", self, "mac_pj", "hop_pj", "l1_pj", "dram_pj")
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
        _finite(key, m, "read_pj", "write_pj", "bandwidth_bits")
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
        _positive("arch.multicore", self, "clusters", "cores", "spad_in_bytes", "spad_w_bytes", "spad_out_bytes",
                  "datapath_bits", "element_bits", "burst_bytes")
        _finite("arch.multicore", self, "clock_ghz", "burst_ns", "bandwidth_gbps")
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
    max_fus: int = 4096
    clock_mhz: float = 500.0
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
        _positive("arch", self, "rows", "cols", "operand_bits", "acc_bits", "d_s", "buffer_depth", "max_fus")
        _finite("arch", self, "onchip_kb", "clock_mhz")
        if self.clock_mhz <= 0:
            raise ConfigError(f"arch.clock_mhz={self.clock_mhz}: must be > 0 (the array's clock in MHz, e.g. 500)")
        if self.d_t < 0:
            raise ConfigError(f"arch.d_t={self.d_t}: must be >= 0 (0: no FIFOs between FUs)")
        _choice("arch", "overflow", self.overflow, OVERFLOW)
        _choice("arch", "family", self.family, tuple(FAMILIES))
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
        _choice("arch", "tiling", self.tiling, tuple(TILINGS))
        _choice("arch", "broadcast", self.broadcast, BROADCASTS)
        if self.acc_bits < 2 * self.operand_bits:
            raise ConfigError(f"arch.acc_bits={self.acc_bits}: must hold a product (>= 2 x arch.operand_bits)")


# --------------------------------------------------------------------------- mapper
@dataclass
class MapperConf:
    """How the ``map`` stage searches (lego_build.mapping.searches).

    ``mapspace``: ``pfm`` (perfect factors), ``ruby-s`` / ``ruby-t`` / ``ruby`` (a
    partial last tile at spatial / temporal / all levels, seed 002). On a generated
    array the spatial unrolling is the dataflow's; its address generators run a partial
    last tile (idle FUs), which is Ruby-S's (the default preset), so ``pfm`` and ``ruby-t``
    leave a dataflow unused for a layer whose dim it would split with a remainder.
    ``search``: ``rtml`` (seed 000 pruned), ``placed`` (RTML that also offers each maximal tile
    with one loop over a dim its level does not store left to the levels above: lower energy on
    per-tensor scratchpads, about twice the CPU), ``random`` (Timeloop-style: stops after
    ``patience`` non-improving valid mappings; ``seed``), ``exhaustive`` (small layers).
    ``gap``: stop a layer's search once its best is within this fraction of the layer's
    lower bound (lego_build.mapping.bounds; e.g. 0.05), ``budget``: at most this many
    candidates per layer and dataflow (both unset: the search runs to its own end).
    ``beam`` (``rtml``, ``placed``): the partial schedules kept into the outermost on-chip level,
    ``beam // 2`` (at least 2) at the levels inside it, one per tile choice
    (:meth:`lego_build.mapping.searches.Rtml._walk`; a wider beam lets an inner level's
    second-best tile meet the outer level that suits it: 8 maps ResNet-18 on eyeriss_ruby at
    16 bits in 6,611 uJ, its layer1.0.conv2 in 282.8 uJ; 4 in 6,955 and 307.5 uJ; 16 as 8).
    ``unroll``: ``dataflows`` (the array's, which the RTL runs) or ``search``
    (the unrolling searched over ``arch.unroll`` on the model-only levels of ``arch.memory``;
    seed 002 §V).
    """

    name: str = "ruby_s"
    objective: str = "energy"
    mapspace: str = "ruby-s"
    search: str = "rtml"
    patience: int = 300
    seed: int = 0
    # search=tso (seed 003, on arch.multicore): burst-aware or not, fixed cluster partition / core schedule
    burst: bool = True
    partition: str = "auto"
    schedule: str = "auto"
    gap: Optional[float] = None
    budget: Optional[int] = None
    unroll: str = "dataflows"
    beam: int = 8  # search=rtml or placed: partial schedules kept into the outermost on-chip level

    def __post_init__(self) -> None:
        if self.gap is not None and not 0 < self.gap < 1:
            raise ConfigError(f"mapper.gap={self.gap}: a tolerance between 0 and 1 (e.g. 0.05 stops within 5 % of "
                              "the lower bound); leave it unset to search to the end")
        if self.budget is not None and self.budget <= 0:
            raise ConfigError(f"mapper.budget={self.budget}: the candidates a layer's search may evaluate must be "
                              "a positive integer; leave it unset for no limit")
        _choice("mapper", "objective", self.objective, tuple(OBJECTIVES))
        _choice("mapper", "mapspace", self.mapspace, tuple(MAPSPACES))
        _choice("mapper", "unroll", self.unroll, tuple(UNROLLS))
        _choice("mapper", "partition", self.partition, ("auto", "KS", "KS&OFM", "OFM"))
        _choice("mapper", "schedule", self.schedule, ("auto", "IS", "OS", "WS"))
        _positive("mapper", self, "patience", "beam")
        _seed("mapper", self)


# --------------------------------------------------------------------------- optimizer
@dataclass
class OptimizerConf:
    """Which back-end passes run, in order, and how (pass and solver names are checked against the
    back end's registries by :func:`lego_build.flow.validate.check_names`)."""

    name: str = "lego"
    passes: List[str] = field(default_factory=lambda: ["reduction_tree", "pin_reuse", "fifo_sizing", "bitwidth", "delay_matching",
                                                         "broadcast_rewiring", "power_gating", "delay_elaboration"])
    delay_matching: str = "lp"
    solver: str = "cbc"
    time_limit_s: float = 60.0

    def __post_init__(self) -> None:
        _choice("optimizer", "delay_matching", self.delay_matching, ("lp", "greedy"))
        _finite("optimizer", self, "time_limit_s")
        if self.time_limit_s <= 0:
            raise ConfigError(f"optimizer.time_limit_s={self.time_limit_s}: must be > 0 seconds")


# --------------------------------------------------------------------------- target
@dataclass
class TargetConf:
    """What the simulate stage does with the emitted RTL: ``flow`` names a registered target
    (:data:`lego_build.targets.TARGETS`: ``verilator`` lints and simulates, ``rtl`` emits only,
    ``yosys`` counts cells, ``asic`` runs the standard-cell flow, or a plugin's; checked by
    :func:`lego_build.flow.validate.check_names`); the other keys are the targets' settings.

    ``data``: the test-data sets every simulated tile runs with, in order
    (lego_build.sim.golden: ``random`` seeded by ``seed``; the extremes ``min``, ``max``,
    ``mixed``, ``alternating``; ``file``: the arrays of the ``.npz`` file ``data_file``).
    ``scope``: :data:`SCOPES`; whole layers run through the memory system with the first
    data set of ``data`` and every output element compared (how many at once: ``run.jobs``,
    ``run.ray_address``). ``library`` ... ``asic_top``: the ``asic`` target's standard-cell flow.
    """

    name: str = "verilator"
    flow: str = "verilator"
    library: str = "osu018"  # its Liberty file: a qflow technology name or a .lib path
    node_nm: float = 0.0  # the library's feature size (0: from an OSU library's name)
    asic_mhz: float = 100.0  # the clock its power is reported at
    activity: float = 0.1  # the toggle rate of every net (a stated default, not a measurement)
    asic_top: str = "soc"  # ASIC_TOPS: the design with its memory system, or the array alone
    waveform: bool = False
    seed: int = 1
    data: List[str] = field(default_factory=lambda: list(GENERATED))
    data_file: str = ""
    max_cycles: int = 10_000_000
    tile_steps: int = 20_000
    scope: str = "tiles"

    def __post_init__(self) -> None:
        _finite("target", self, "node_nm", "asic_mhz", "activity")
        _positive("target", self, "max_cycles", "tile_steps", "asic_mhz")
        _seed("target", self)
        if self.node_nm < 0:
            raise ConfigError(f"target.node_nm={self.node_nm}: must be the library's feature size in nm, or 0")
        if not 0 < self.activity <= 1:
            raise ConfigError(f"target.activity={self.activity}: must be a toggle rate per net and cycle in (0, 1], "
                              "e.g. 0.1")
        _choice("target", "scope", self.scope, SCOPES)
        _choice("target", "asic_top", self.asic_top, tuple(ASIC_TOPS))
        if not self.data:
            raise ConfigError("target.data=[]: give at least one test-data set, e.g. target.data=[random]")
        for pattern in self.data:
            _choice("target", "data", pattern, PATTERNS)
        if len(set(self.data)) != len(self.data):
            raise ConfigError(f"target.data={list(self.data)}: a data set is listed twice; list each once")
        if ("file" in self.data) != bool(self.data_file):
            raise ConfigError("target.data_file: give the .npz file together with 'file' in target.data, "
                              "e.g. target.data=[file] target.data_file=operands.npz")


# --------------------------------------------------------------------------- run
@dataclass
class RunConf:
    """How to run a build, not what to build: no stage hashes this group, so changing it re-runs
    nothing (lego_build.flow.stages).

    ``jobs``: whole layers simulated at once (processes, joblib; 0: one per core), or as Ray
    tasks on ``ray_address`` (``local`` starts one; workers need the design directory on a
    shared file system, since each runs the design's one Verilator build). ``map_jobs``:
    processes exploring the convs of ``mapper.search=tso`` in parallel.
    ``max_memory_gb`` / ``max_minutes``: the estimated peak memory and time of a build
    (lego_build.flow.budget) above which it stops before any work unless ``confirm=true``
    (0: the machine's available memory / no time limit).
    """

    name: str = "default"
    jobs: int = 1
    ray_address: str = ""  # "local" (a Ray of its own), "host:port" or "auto"
    map_jobs: int = 1
    max_memory_gb: float = 0.0
    max_minutes: float = 30.0
    confirm: bool = False

    def __post_init__(self) -> None:
        _finite("run", self, "max_memory_gb", "max_minutes")
        _positive("run", self, "map_jobs")
        if self.jobs < 0:
            raise ConfigError(f"run.jobs={self.jobs}: must be >= 0 (0: one process per core)")
        if self.ray_address and importlib.util.find_spec("ray") is None:
            raise ConfigError(f"run.ray_address={self.ray_address}: Ray is not installed; install the extra "
                              "(pip install -e '.[ray]') or unset it to run layers with joblib")
        if self.max_memory_gb < 0 or self.max_minutes < 0:
            raise ConfigError(f"run.max_memory_gb={self.max_memory_gb}, run.max_minutes={self.max_minutes}: "
                              "must be >= 0 (0: no limit of your own)")


#: keys that moved: ``old -> new`` (an override of the old key is refused with one line naming the
#: new one, :func:`lego_build.flow.validate.refuse_moved`; in a preset file,
#: :func:`lego_build.config.compose.unknown_key`)
MOVED: Dict[str, str] = {
    "target.jobs": "run.jobs", "target.ray_address": "run.ray_address", "target.max_memory_gb": "run.max_memory_gb",
    "target.max_minutes": "run.max_minutes", "target.confirm": "run.confirm", "mapper.jobs": "run.map_jobs",
    "target.simulate": "target.flow", "target.lint": "target.flow", "target.synth": "target.flow",
    "target.asic": "target.flow",
    **{f"arch.{k}": f"arch.memsys.{k}" for k in ("axi_data_bits", "dram_bytes_per_cycle", "dram_latency_cycles")},
}


# --------------------------------------------------------------------------- root
@dataclass
class LegoConfig:
    workload: Any = MISSING
    arch: ArchConf = MISSING
    mapper: MapperConf = MISSING
    optimizer: OptimizerConf = MISSING
    target: TargetConf = MISSING
    run: RunConf = MISSING

    def __post_init__(self) -> None:
        for group in GROUPS:
            _name(f"{group}.name", getattr(self, group).name)
        for i, level in enumerate(self.arch.memory):
            _name(f"arch.memory[{i}].name", level.name)
        for key in self.arch.dataflows:
            _name(f"arch.dataflows.{key}", key)


#: (group, option name in the ConfigStore, schema)
SCHEMAS: tuple[tuple[str, str, type], ...] = (
    ("workload", "base_gemm", GemmWorkload),
    ("workload", "base_conv2d", Conv2dWorkload),
    ("workload", "base_mttkrp", MttkrpWorkload),
    ("workload", "base_ttmc", TtmcWorkload),
    ("workload", "base_attention", AttentionWorkload),
    ("workload", "base_network", NetworkWorkload),
    ("workload", "base_model_file", ModelFileWorkload),
    ("arch", "base_arch", ArchConf),
    ("mapper", "base_mapper", MapperConf),
    ("optimizer", "base_optimizer", OptimizerConf),
    ("target", "base_target", TargetConf),
    ("run", "base_run", RunConf),
)
GROUPS: tuple[str, ...] = ("workload", "arch", "mapper", "optimizer", "target", "run")
#: the group of how to run a build (:class:`RunConf`): no stage hashes it
RUN_GROUP = "run"
