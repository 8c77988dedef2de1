"""The pipeline as data: each stage, what it does, the config keys it reads, its files.

``dodo.py`` turns this table into doit tasks; tests and notebooks call
:func:`run_stage` directly. Paths are relative to the design directory
``out/<design-id>/``. A stage function is ``fn(cfg, design_dir, inputs) -> outputs``:
it reads only the inputs it declares and returns the outputs the runner writes
(:func:`run_stage`).

A stage is up to date while the config keys it declares (``reads``) keep their values
(:func:`lego_build.config.compose.config_slice`): a key covers everything below it
(``target``, ``arch.energy``, ``arch.energy.mac_pj``), and a key no stage declares (the
``run`` settings: jobs, time and memory budgets) re-runs nothing. The design directory
fixes the workload and the hardware (:data:`~lego_build.config.compose.DESIGN_KEYS`);
inside it, what re-runs stages is the arch's cost model (only ``map`` reads it), the
``mapper``, ``optimizer`` and ``target`` settings. ``tests/test_flow_stages.py`` records
the keys each stage reads and checks that it declares them.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from lego_build.config.compose import HARDWARE
from lego_build.config.schema import LegoConfig


@dataclass(frozen=True)
class Stage:
    name: str
    reads: tuple[str, ...]  # config keys its up-to-date check covers (a key covers its subtree)
    inputs: tuple[str, ...]  # artifacts it reads (file_dep)
    outputs: tuple[str, ...]  # artifacts it writes (targets)
    func: str  # "module:function", imported when the stage runs
    config_files: tuple[str, ...] = ()  # config keys naming files it reads (e.g. a model file)
    what: str = ""  # what it makes, in one line (doit list, doit info)


#: the resolved config of the last stage run, beside the artifacts it made (every stage writes it;
#: the report declares it)
CONFIG_FILE = "config.yaml"

#: the Verilog depends on the DAG and the memory system (``arch.memsys``, of which the RTL uses the
#: bus width); the cost model changes no RTL (``tests/test_flow_stages.py``: emit reads no other key)
EMIT_READS: tuple[str, ...] = ("arch.memsys",)
#: the names the summary records; its figures come from the artifacts
NAMES: tuple[str, ...] = ("mapper.name", "optimizer.name", "target.name")

STAGES: tuple[Stage, ...] = (
    Stage("analyze", ("workload",), (), ("analysis.json",), "lego_build.analysis.stage:run", ("workload.path",),
          what="the workload's layers as affine IR: MACs, tensor sizes, reuse, the unit that runs each"),
    Stage("graph", HARDWARE, ("analysis.json",), ("adg.json", "adg.dot"), "lego_build.frontend.stage:run",
          what="the FU-level architecture graph of the arch's dataflows (LEGO front end)"),
    Stage("optimize", ("optimizer",), ("adg.json",), ("dag.json", "passes.json"), "lego_build.backend.stage:run",
          what="the primitive-level DAG and the back-end passes (LP delay matching, ...)"),
    # the mapper costs the generated hardware: its links and ports (adg.json), its pipeline (dag.json)
    Stage("map", ("arch", "mapper"), ("analysis.json", "adg.json", "dag.json"), ("mapping.json",),
          "lego_build.mapping.stage:run",
          what="each layer's mapping on the hardware, costed by the arch's cost model (energy, cycles)"),
    Stage(
        "emit",
        EMIT_READS,
        ("dag.json",),
        ("rtl/lego_top.v", "rtl/host_interface.json", "rtl/soc_interface.json", "rtl/manifest.json",
         "rtl/filelist.f"),
        "lego_build.emit.stage:run",
        what="Verilog of the array and its memory system (Veriloggen)",
    ),
    Stage(
        "simulate",
        ("target", *HARDWARE),
        ("rtl/manifest.json", "rtl/host_interface.json", "rtl/soc_interface.json", "analysis.json", "adg.json",
         "mapping.json"),
        ("sim/result.json",),
        "lego_build.targets.stage:run",
        what="the target's run (target.flow): lint and Verilator runs against the NumPy golden model, synthesis, "
             "the ASIC flow, or a plugin's",
    ),
    Stage(
        "report",
        ("workload", *HARDWARE, *NAMES),
        ("analysis.json", "mapping.json", "adg.json", "passes.json", "sim/result.json"),
        ("report.md", "summary.json", "report.html", CONFIG_FILE),
        "lego_build.report.stage:run",
        what="report.md, report.html and summary.json: the design's figures and where each comes from",
    ),
)
STAGE_BY_NAME = {s.name: s for s in STAGES}


def config_file_deps(stage: Stage, cfg: LegoConfig) -> list[str]:
    """The files named by ``stage.config_files`` in this config (unset keys are skipped)."""
    deps = []
    for key in stage.config_files:
        group, field = key.split(".", 1)
        value = getattr(getattr(cfg, group), field, None)
        if value:
            deps.append(str(value))
    return deps


def run_stage(name: str, cfg: LegoConfig, design_dir: Path) -> None:
    """Run one stage on ``design_dir`` (created if needed). The runner does the artifact I/O: the
    stage function ``fn(cfg, design_dir, inputs) -> outputs`` reads its declared inputs from
    ``inputs`` (:class:`lego_build.runtime.artifacts.Inputs`: typed objects, format version and
    keys checked) and returns the outputs it declares, which the runner writes in order (typed
    artifacts with their format version, text as text; files whose set depends on the design,
    the Verilog modules and the simulator's work tree, the stage writes itself; each returned
    artifact is checked against its type as it is encoded); then the resolved config is written
    beside them (``config.yaml``). Every write is journaled."""
    from omegaconf import OmegaConf

    from lego_build.errors import StageError
    from lego_build.runtime.artifacts import Inputs, write_outputs
    from lego_build.runtime.atomic import write_text

    stage = STAGE_BY_NAME[name]
    module, func = stage.func.split(":")
    design_dir = Path(design_dir)
    design_dir.mkdir(parents=True, exist_ok=True)
    for path in stage.inputs:
        if not (design_dir / path).is_file():
            raise StageError(f"{design_dir / path}: missing; run the stages before {name} (doit {name} runs them)")
    outputs = getattr(importlib.import_module(module), func)(cfg, design_dir, Inputs(design_dir, stage.inputs, name))
    write_outputs(design_dir, outputs or {}, stage.outputs, name)
    write_text(design_dir / CONFIG_FILE, OmegaConf.to_yaml(OmegaConf.structured(cfg)))


def run_all(cfg: LegoConfig, design_dir: Path) -> None:
    for stage in STAGES:
        run_stage(stage.name, cfg, design_dir)
