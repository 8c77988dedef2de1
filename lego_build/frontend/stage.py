"""``graph`` stage: arch dataflow + kernel -> ``adg.json``, ``adg.dot`` (seed 004 ch. 4)."""
from __future__ import annotations

from pathlib import Path

from lego_build.analysis.kernels import kernel_from_config
from lego_build.flow.atomic import write_json, write_text
from lego_build.flow.schema import LegoConfig
from lego_build.ir.serialize import to_jsonable

from .adg_build import build_adg
from .dot import adg_to_dot


def run(cfg: LegoConfig, design_dir: Path) -> None:
    kernel = kernel_from_config(cfg.workload, cfg.arch.acc_bits)
    adg = build_adg(kernel, cfg.arch)
    write_json(design_dir / "adg.json", to_jsonable(adg))
    write_text(design_dir / "adg.dot", adg_to_dot(adg))
    summary = ", ".join(f"{n.tensor}: {len(n.links)} links, {len(n.ports)} ports" for n in adg.nets)
    print(f"graph: {adg.shape[0]}x{adg.shape[1]} {adg.fu} array; {summary}")
