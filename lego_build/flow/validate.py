"""Cross-group checks that no single schema can make (run right after compose).

They catch, before any task runs, what would otherwise fail half-way: a model
file that cannot be read (its errors name the file or node), a dataflow
naming dims its kernel family lacks, and a target whose tool (Verilator, Yosys)
is not installed.
Whether any layer of the workload runs on the array is the mapper's verdict, so
``doit analyze`` works for every workload whatever the arch.
"""
from __future__ import annotations

from pathlib import Path

from .schema import ConfigError, LegoConfig


def validate(cfg: LegoConfig):
    """Raise :class:`ConfigError` (one line, names the key) if the groups do not fit together;
    return the workload IR built on the way."""
    from lego_build.analysis.workloads import workload_from_config
    from lego_build.frontend.dataflow import arch_dataflows

    workload = workload_from_config(cfg.workload)  # parses model files
    if not workload.array_layers:
        path = getattr(cfg.workload, "path", None)
        where = f"workload.path={path}" if path else f"workload={cfg.workload.name}"
        raise ConfigError(f"{where}: no layer the array can run (conv, matmul, gemm); "
                          "give a workload with at least one")
    arch_dataflows(cfg.arch)  # every dataflow bijective and inside the array
    _check_widths(cfg, workload)
    if cfg.target.simulate and "file" in cfg.target.data:
        _check_data_file(cfg.target.data_file)
    if cfg.mapper.search == "tso" and cfg.arch.multicore is None:
        raise ConfigError(f"mapper.search=tso: arch={cfg.arch.name} has no arch.multicore; use arch=nmp")
    if cfg.mapper.search == "tso" and cfg.arch.family != "conv2d":
        raise ConfigError(f"mapper.search=tso: slices conv layers, so arch.family must be conv2d, "
                          f"not {cfg.arch.family}")
    _check_tools(cfg)
    return workload


def _check_widths(cfg: LegoConfig, workload) -> None:
    """An accumulator too narrow for the worst-case sum of some layer the array can run (one that
    lowers to ``arch.family``) is an error unless ``arch.overflow=wrap``."""
    from lego_build.analysis.lowering import lower
    from lego_build.analysis.widths import reduction_length, required_acc_bits, worst_case_sum

    runnable = [layer for layer in workload.array_layers if lower(layer.kernel, cfg.arch.family) is not None]
    if cfg.arch.overflow == "wrap" or not runnable:
        return
    bits = cfg.arch.operand_bits
    worst = max(runnable, key=lambda layer: required_acc_bits(layer.kernel, bits))
    need = required_acc_bits(worst.kernel, bits)
    if need > cfg.arch.acc_bits:
        raise ConfigError(
            f"arch.acc_bits={cfg.arch.acc_bits}: too narrow for layer {worst.name}, whose outputs sum "
            f"{reduction_length(worst.kernel):,} products of {bits}-bit operands (up to "
            f"{worst_case_sum(worst.kernel, bits):,} in magnitude) and need {need} bits; set arch.acc_bits={need} "
            "or more, or arch.overflow=wrap to accept wrap-around on purpose")


def _check_data_file(path: str) -> None:
    from lego_build.sim.golden import load_data_file

    try:
        load_data_file(Path(path))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


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
