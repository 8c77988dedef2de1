"""Cross-group checks that no single schema can make (run right after compose).

They catch, before any task runs, what would otherwise fail half-way: a model
file that cannot be read (its errors name the file or node), a dataflow
naming dims its kernel family lacks, and a target whose tool (Verilator, Yosys)
is not installed.
Whether any layer of the workload runs on the array is the mapper's verdict, so
``doit analyze`` works for every workload whatever the arch.
"""
from __future__ import annotations

from .schema import ConfigError, LegoConfig


def validate(cfg: LegoConfig) -> None:
    """Raise :class:`ConfigError` (one line, names the key) if the groups do not fit together."""
    from lego_build.analysis.workloads import workload_from_config
    from lego_build.frontend.dataflow import arch_dataflows

    workload = workload_from_config(cfg.workload)  # parses model files
    if not workload.array_layers:
        path = getattr(cfg.workload, "path", None)
        where = f"workload.path={path}" if path else f"workload={cfg.workload.name}"
        raise ConfigError(f"{where}: no layer the array can run (conv, matmul, gemm); "
                          "give a workload with at least one")
    arch_dataflows(cfg.arch)  # every dataflow bijective and inside the array
    if cfg.mapper.search == "tso" and cfg.arch.multicore is None:
        raise ConfigError(f"mapper.search=tso: arch={cfg.arch.name} has no arch.multicore; use arch=nmp")
    if cfg.mapper.search == "tso" and cfg.arch.family != "conv2d":
        raise ConfigError(f"mapper.search=tso: slices conv layers, so arch.family must be conv2d, "
                          f"not {cfg.arch.family}")
    _check_tools(cfg)


def _check_tools(cfg: LegoConfig) -> None:
    from lego_build.flow.stages import StageError
    from lego_build.sim.verilator import require_verilator
    from lego_build.sim.yosys import require_yosys

    try:
        if cfg.target.simulate or cfg.target.lint:
            require_verilator()
        if cfg.target.synth:
            require_yosys()
    except StageError as exc:
        raise ConfigError(f"target={cfg.target.name}: {exc}") from None
