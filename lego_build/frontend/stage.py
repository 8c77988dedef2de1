"""``graph`` stage: arch dataflow + the workload's reference kernel -> ``adg.json``, ``adg.dot``."""
from __future__ import annotations

from pathlib import Path

from lego_build.analysis.lowering import reference_kernel
from lego_build.analysis.stage import layers_of
from lego_build.config.schema import LegoConfig
from lego_build.errors import StageError
from lego_build.frontend.adg_build import build_adg
from lego_build.frontend.dot import adg_to_dot


def run(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    kernel = reference_kernel([k for _, k in layers_of(inputs["analysis.json"])], cfg.arch.family)
    if kernel is None:
        raise StageError(f"no layer of this workload runs on arch.family={cfg.arch.family}; choose an arch of "
                         "the workload's family (e.g. arch=systolic for GEMMs, arch=eyeriss for convs)")
    adg = build_adg(kernel, cfg.arch)
    summary = ", ".join(f"{n.tensor}: {len(n.links)} links, {len(n.ports)} ports" for n in adg.nets)
    print(f"graph: {adg.shape[0]}x{adg.shape[1]} {adg.fu} array for {kernel.name}; {summary}")
    return {"adg.json": adg, "adg.dot": adg_to_dot(adg)}
