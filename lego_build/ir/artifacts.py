"""The JSON artifacts of a design directory, one frozen dataclass each, with a format version.

A stage's JSON output is one of these types (the ADG and the DAG are IR types of their
own, :mod:`lego_build.ir.adg`, :mod:`lego_build.ir.dag`). :data:`ARTIFACTS` maps each file
of the stage table to its type and version; :mod:`lego_build.runtime.artifacts` writes
them (with ``format_version``) and reads them back, refusing a file of another version
or with keys its type does not have. Per-layer rows and per-tile results stay JSON
objects inside the typed envelope: their fields follow the mapper's and simulator's
findings, and the report reads them by name.

A field whose metadata has ``omit_none`` is left out of the file when it is ``None``
(``sim/result.json`` of a skipped simulation has no tiles). What a target adds beyond the
simulation is its ``products`` (:class:`lego_build.targets.base.Product`: any JSON value per
product key), so a new target changes none of these types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lego_build.ir.adg import ADG
from lego_build.ir.dag import DAG
from lego_build.ir.host import HostMap
from lego_build.ir.soc import SocMap

OMIT = {"omit_none": True}
Json = Any  # a JSON value (dict, list, str, number, bool, None)


@dataclass(frozen=True)
class Analysis:
    """``analysis.json``: the workload's layers (kernel IR, tensors, reuse), PPU work, totals."""

    workload: str
    source: str
    layers: tuple[dict, ...]
    unmapped: tuple[dict, ...]
    totals: dict


@dataclass(frozen=True)
class Passes:
    """``passes.json``: the optimizer preset, its pass list, and what each pass did."""

    optimizer: str
    pipeline: tuple[str, ...]
    delay_matching: str
    passes: tuple[dict, ...]


@dataclass(frozen=True)
class MappingDoc:
    """``mapping.json``: per layer the chosen dataflow, schedule, cost and candidates; totals."""

    mapper: str
    objective: str
    family: str
    layers: tuple[dict, ...]
    totals: dict


@dataclass(frozen=True)
class SimResult:
    """``sim/result.json``: ``status`` pass / fail / skipped, the target that made it
    (``target.flow``), the tiles or whole layers simulated, and the target's ``products`` by key
    (e.g. ``lint``, ``synth``, ``asic``: :mod:`lego_build.targets`)."""

    status: str
    reason: str | None = field(default=None, metadata=OMIT)
    target: str | None = field(default=None, metadata=OMIT)
    products: dict = field(default_factory=dict)
    seed: int | None = field(default=None, metadata=OMIT)
    data: tuple[str, ...] | None = field(default=None, metadata=OMIT)
    overflow: str | None = field(default=None, metadata=OMIT)
    tiles: tuple[dict, ...] | None = field(default=None, metadata=OMIT)
    outputs: int | None = field(default=None, metadata=OMIT)
    comparisons: int | None = field(default=None, metadata=OMIT)
    mismatches: int | None = field(default=None, metadata=OMIT)
    match: bool | None = field(default=None, metadata=OMIT)
    cycles_match: bool | None = field(default=None, metadata=OMIT)
    scope: str | None = field(default=None, metadata=OMIT)
    memory: dict | None = field(default=None, metadata=OMIT)  # the DRAM model of whole-layer runs
    layers: tuple[dict, ...] | None = field(default=None, metadata=OMIT)  # whole layers: measured vs predicted
    network: dict | None = field(default=None, metadata=OMIT)  # their totals


@dataclass(frozen=True)
class Summary:
    """``summary.json``: the design's key figures (what sweeps tabulate)."""

    design: str
    arch: str
    workload: str
    mapper: str
    optimizer: str
    target: str
    array: tuple[int, ...]
    fu: dict  # arch.fu: name, doc, whether it is an FU-language expression, operand widths per tensor
    macs: int
    macs_mapped: int
    layers_mapped: int
    layers_unmappable: int
    unmapped_ops: int
    unmappable_mac_share: float
    # the headline (lego_build.report.evidence): each mapped layer's cycles from the best evidence, RTL-measured,
    # else the latency model, else the mapper's roofline; utilization and throughput from the same cycles
    cycles: int
    cycles_source: str  # e.g. "measured in RTL: 54 of 54 layers"
    cycles_by_source: dict  # per source (rtl, model, roofline): layers, cycles, MACs
    utilization: float  # MACs / (cycles x FUs)
    ops_per_cycle: float  # 2 x MACs / cycles
    gops: float | None  # ops_per_cycle at clock_mhz
    clock_mhz: float | None  # the clock of gops: arch.clock_mhz, or the asic flow's Fmax where that is lower
    mapper_cycles: int  # the mapper's per-tile roofline (no tile loads and stores): what it ranks mappings by
    mapper_utilization: float  # MACs / (mapper_cycles x FUs)
    mapper_gap: float | None  # cycles / mapper_cycles
    coverage: dict  # what ran in RTL: tiles or whole layers, and their share of the MACs
    cycles_end_to_end: int  # the headline cycles plus the PPU passes (cost model)
    energy_end_to_end_pj: float  # the array layers' and the PPU's energy
    energy_pj: float
    energy_source: str  # the cost model's (nothing measures energy per layer)
    pj_per_mac: float
    energy_by_level_pj: dict
    energy_by_tensor_pj: dict
    pipeline_latency: int
    register_bits: int
    accumulator: dict
    simulation: str | None
    simulated_tiles: tuple[dict, ...]
    # the target's products' headline figures (each product's ``summary``), e.g. cells, flip_flops and
    # transistors (target=yosys), area_mm2, fmax_mhz and power_mw (target=asic)
    figures: dict = field(default_factory=dict)
    clock_source: str = "arch.clock_mhz"  # where clock_mhz comes from (issue 44: the measured clock, when one is)


@dataclass(frozen=True)
class RtlManifest:
    """``rtl/manifest.json``: sha256 of every emitted Verilog file (the file is the mapping itself)."""

    files: dict[str, str]


@dataclass(frozen=True)
class ArtifactType:
    type: type
    version: int


#: every JSON artifact of the stage table: its type and format version (bump the version when the
#: type changes, so that an older design directory is rebuilt, not misread)
ARTIFACTS: dict[str, ArtifactType] = {
    "analysis.json": ArtifactType(Analysis, 1),
    "adg.json": ArtifactType(ADG, 1),
    "dag.json": ArtifactType(DAG, 1),
    "passes.json": ArtifactType(Passes, 1),
    "mapping.json": ArtifactType(MappingDoc, 1),
    "rtl/host_interface.json": ArtifactType(HostMap, 3),
    "rtl/soc_interface.json": ArtifactType(SocMap, 1),
    "rtl/manifest.json": ArtifactType(RtlManifest, 1),
    "sim/result.json": ArtifactType(SimResult, 2),
    "summary.json": ArtifactType(Summary, 5),
}
