"""Cross-group checks that no single schema can make (run right after compose).

They catch, before any task runs, what would otherwise fail half-way: a model
file that cannot be read (its errors name the file or node), a dataflow
naming dims its kernel family lacks, and a target whose tool (Verilator, Yosys)
is not installed (the target's own declaration, :meth:`lego_build.targets.base.Target.require`);
and a key that moved to another group (:data:`lego_build.config.schema.MOVED`).
Whether any layer of the workload runs on the array is the mapper's verdict, so
``doit analyze`` works for every workload whatever the arch.
"""
from __future__ import annotations

from pathlib import Path

from lego_build.config.schema import LegoConfig
from lego_build.errors import ConfigError


def check_names(cfg: LegoConfig) -> None:
    """Names a group gives that only the stages' registries know (built-ins and plugins,
    :mod:`lego_build.runtime.registry`): the FU kind and the widths it supports, a model
    file's format, the mapper's search, the back-end passes (known, with delay matching, in an
    order that meets every pass's requirements), no shared output lanes with FIFO links, the LP
    solver and the target (``target.flow``)."""
    from lego_build.analysis.importers import IMPORTERS
    from lego_build.backend.passes import ORDER, PASSES, check_order, pipeline
    from lego_build.backend.solver import SOLVERS
    from lego_build.config.schema import ModelFileWorkload
    from lego_build.fulang.kinds import FUS
    from lego_build.ir.families import FAMILIES
    from lego_build.mapping.searches import SEARCHES
    from lego_build.targets import TARGETS

    FUS.check(cfg.arch.fu)
    fu = FUS.get(cfg.arch.fu)
    if reason := fu.check(cfg.arch.operand_bits):
        raise ConfigError(f"arch.operand_bits={cfg.arch.operand_bits}: {reason}")
    if reason := fu.check_inputs(FAMILIES[cfg.arch.family].inputs):
        raise ConfigError(f"arch.family={cfg.arch.family}: {reason}")
    if isinstance(cfg.workload, ModelFileWorkload):
        IMPORTERS.check(cfg.workload.kind)
    SEARCHES.check(cfg.mapper.search)
    opt = cfg.optimizer
    unknown = [p for p in opt.passes if p not in PASSES]
    if unknown:
        raise ConfigError(f"optimizer.passes: unknown pass {unknown[0]!r}; choose from {', '.join(PASSES.names())}")
    if "delay_matching" not in opt.passes:
        raise ConfigError("optimizer.passes: delay_matching is mandatory (the RTL would not meet timing); add it")
    try:
        check_order(pipeline(tuple(opt.passes)))
    except ValueError as exc:
        raise ConfigError(f"optimizer.passes={list(opt.passes)}: {exc}; list them in the order "
                          f"{', '.join(ORDER)}") from None
    if 0 < cfg.arch.out_lanes < cfg.arch.rows and cfg.arch.d_t > 0:
        raise ConfigError(f"arch.out_lanes={cfg.arch.out_lanes}: shared output lanes hold a short accumulation's "
                          f"first step, which FIFO links (arch.d_t={cfg.arch.d_t}) cannot repeat; set arch.d_t=0 or "
                          "arch.out_lanes=0")
    SOLVERS.check(opt.solver)
    if reason := SOLVERS.get(opt.solver).unavailable():
        raise ConfigError(reason)
    TARGETS.check(cfg.target.flow)


def refuse_moved(overrides) -> None:
    """An override of a key that moved to another group (:data:`MOVED`): one line naming where it is now."""
    from lego_build.config.schema import MOVED

    for line in overrides:
        key, _, value = line.lstrip("+~").partition("=")
        if key in MOVED:
            new = MOVED[key]
            how = (f"write {new}={value}" if new != "target.flow" else
                   "pick what the simulate stage does with target=verilator, rtl, yosys or asic "
                   "(or target.flow=<name>)")
            raise ConfigError(f"{key} moved to {new}; {how}")


def compose(overrides=()) -> LegoConfig:
    """The public composition (:func:`lego_build.compose`): the groups' schemas, then the names
    only the stages know (:func:`check_names`)."""
    from lego_build.config.compose import compose as compose_groups

    overrides = list(overrides)
    refuse_moved(overrides)
    cfg = compose_groups(overrides)
    check_names(cfg)
    return cfg


def validate(cfg: LegoConfig):
    """Raise :class:`ConfigError` (one line, names the key) if the groups do not fit together;
    return the workload IR built on the way."""
    from lego_build.analysis.from_config import workload_from_config
    from lego_build.frontend.dataflow import arch_dataflows

    check_names(cfg)
    workload = workload_from_config(cfg.workload)  # parses model files
    if not workload.array_layers:
        path = getattr(cfg.workload, "path", None)
        where = f"workload.path={path}" if path else f"workload={cfg.workload.name}"
        raise ConfigError(f"{where}: no layer the array can run (conv, matmul, gemm); "
                          "give a workload with at least one")
    arch_dataflows(cfg.arch)  # every dataflow bijective and inside the array
    _check_widths(cfg, workload)
    if simulates(cfg) and "file" in cfg.target.data:
        _check_data_file(cfg.target.data_file)
    _check_unroll(cfg)
    if cfg.mapper.search == "tso" and cfg.arch.multicore is None:
        raise ConfigError(f"mapper.search=tso: arch={cfg.arch.name} has no arch.multicore; use arch=nmp")
    if cfg.mapper.search == "tso" and cfg.arch.family != "conv2d":
        raise ConfigError(f"mapper.search=tso: slices conv layers, so arch.family must be conv2d, "
                          f"not {cfg.arch.family}")
    _check_tools(cfg)
    return workload


def _check_unroll(cfg: LegoConfig) -> None:
    """``mapper.unroll=search`` costs a searched unrolling on model-only levels: it needs them
    (``arch.memory``) and the dims each axis may unroll (``arch.unroll.axes``, family dims)."""
    from lego_build.analysis.lowering import FAMILY_DIMS

    arch, dims = cfg.arch, FAMILY_DIMS[cfg.arch.family]
    for j, axis in enumerate(arch.unroll.axes):
        for d in axis:
            if d not in dims:
                raise ConfigError(f"arch.unroll.axes[{j}]: dim {d!r} is not a dim of arch.family={arch.family}; "
                                  f"use some of {', '.join(dims)}")
    if len(arch.unroll.axes) > 2:
        raise ConfigError(f"arch.unroll.axes: {len(arch.unroll.axes)} axes; the array has two (rows, cols)")
    bad = next((d for d in arch.unroll.required if not any(d in axis for axis in arch.unroll.axes)), None)
    if bad:
        raise ConfigError(f"arch.unroll.required: dim {bad!r} is on no axis of arch.unroll.axes; add it to one")
    if cfg.mapper.unroll != "search":
        return
    if not arch.memory:
        raise ConfigError(f"mapper.unroll=search: arch={arch.name} has no arch.memory, the model-only levels a "
                          "searched unrolling is costed on; use mapper.unroll=dataflows or an arch with them "
                          "(e.g. arch=eyeriss_ruby)")
    if not any(arch.unroll.axes):
        raise ConfigError(f"mapper.unroll=search: arch.unroll.axes is empty on arch={arch.name}; give the dims "
                          "each array axis may unroll, e.g. arch.unroll.axes=[[kh,ic],[oh,oc]]")


def _check_widths(cfg: LegoConfig, workload) -> None:
    """An accumulator too narrow for the worst-case sum of some layer the array can run (one that
    lowers to ``arch.family``) is an error unless ``arch.overflow=wrap``."""
    from lego_build.analysis.lowering import lower
    from lego_build.analysis.widths import reduction_length, required_acc_bits, worst_case_sum

    runnable = [layer for layer in workload.array_layers if lower(layer.kernel, cfg.arch.family) is not None]
    if cfg.arch.overflow == "wrap" or not runnable:
        return
    from lego_build.fulang.kinds import FUS

    bits, fu = cfg.arch.operand_bits, FUS.get(cfg.arch.fu)

    def product(layer) -> int:
        return fu.bound(bits, len(layer.kernel.inputs))
    worst = max(runnable, key=lambda layer: required_acc_bits(layer.kernel, bits, product(layer)))
    need = required_acc_bits(worst.kernel, bits, product(worst))
    if need > cfg.arch.acc_bits:
        what = f"{bits}-bit operands" if fu.product is None else f"arch.fu={fu.name}"
        raise ConfigError(
            f"arch.acc_bits={cfg.arch.acc_bits}: too narrow for layer {worst.name}, whose outputs sum "
            f"{reduction_length(worst.kernel):,} products of {what} (up to "
            f"{worst_case_sum(worst.kernel, bits, product(worst)):,} in magnitude) and need {need} bits; set "
            f"arch.acc_bits={need} or more, or arch.overflow=wrap to accept wrap-around on purpose")


def _check_data_file(path: str) -> None:
    from lego_build.sim.golden import load_data_file

    try:
        load_data_file(Path(path))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def simulates(cfg: LegoConfig) -> bool:
    """Whether the build runs the RTL on ``target.data`` (the target says so, and ``target.scope``
    is not ``none``)."""
    from lego_build.targets import TARGETS

    return TARGETS.get(cfg.target.flow).simulates and cfg.target.scope != "none"


def _check_tools(cfg: LegoConfig) -> None:
    """The target's tools and checks, from its own declaration."""
    from lego_build.targets import TARGETS

    TARGETS.get(cfg.target.flow).require(cfg)
