"""Structured-config schemas: one dataclass per config-group option, the root :class:`LegoConfig`
and the table (:data:`SCHEMAS`) Hydra's ConfigStore is filled from.

Hydra composes ``conf/`` against these schemas (registered as ``base_<option>`` in
the ConfigStore), so an unknown key or a wrong type fails during composition with
the key's full name. Value checks that types cannot express (positive sizes,
known objective names) live in ``__post_init__`` and raise :class:`~lego_build.errors.ConfigError`
naming the key; they run when the composed config is turned into objects.

Each group's schema lives in a module of its own (:mod:`.workload`, :mod:`.arch`, :mod:`.mapper`,
:mod:`.optimizer`, :mod:`.target`, :mod:`.run`; the checks they share in :mod:`.checks`); this
module re-exports them all, so ``from lego_build.config.schema import ArchConf`` is the one way in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict

from omegaconf import MISSING

from lego_build.config.arch import (
    BROADCASTS,
    MAX_DRAM_LATENCY_CYCLES,
    MIN_DRAM_BYTES_PER_CYCLE,
    OVERFLOW,
    ArchConf,
    DataflowConf,
    EnergyConf,
    MemLevelConf,
    MemsysConf,
    MulticoreConf,
    UnrollConf,
)
from lego_build.config.checks import check_name
from lego_build.config.mapper import MapperConf
from lego_build.config.optimizer import OptimizerConf
from lego_build.config.run import RunConf
from lego_build.config.target import ASIC_TOPS, SCOPES, TargetConf
from lego_build.config.workload import (
    MAX_BITS,
    AttentionWorkload,
    Conv2dWorkload,
    GemmWorkload,
    ModelFileWorkload,
    MttkrpWorkload,
    NetworkWorkload,
    TtmcWorkload,
)

__all__ = [
    "LegoConfig", "SCHEMAS", "GROUPS", "RUN_GROUP", "MOVED",
    # workload
    "MAX_BITS", "GemmWorkload", "Conv2dWorkload", "MttkrpWorkload", "TtmcWorkload", "AttentionWorkload",
    "NetworkWorkload", "ModelFileWorkload",
    # arch
    "OVERFLOW", "BROADCASTS", "MIN_DRAM_BYTES_PER_CYCLE", "MAX_DRAM_LATENCY_CYCLES", "MemsysConf", "EnergyConf",
    "MemLevelConf", "MulticoreConf", "DataflowConf", "UnrollConf", "ArchConf",
    # the other groups
    "MapperConf", "OptimizerConf", "SCOPES", "ASIC_TOPS", "TargetConf", "RunConf",
]


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
            check_name(f"{group}.name", getattr(self, group).name)
        for i, level in enumerate(self.arch.memory):
            check_name(f"arch.memory[{i}].name", level.name)
        for key in self.arch.dataflows:
            check_name(f"arch.dataflows.{key}", key)


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
