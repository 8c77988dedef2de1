"""``simulate`` stage: what ``target.flow`` does with the emitted RTL, through the registry.

The stage looks the target up (:data:`lego_build.targets.TARGETS`: built-ins and plugins'
entry points) and runs it on the stage's inputs; it writes the :class:`SimResult` the target
returns to ``sim/result.json`` (``target``: the flow that made it, ``products``: what it adds).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lego_build.config.schema import LegoConfig
from lego_build.errors import StageError
from lego_build.ir.artifacts import SimResult
from lego_build.targets import TARGETS


def run(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    target = TARGETS.get(cfg.target.flow)
    result = target.run(cfg, design_dir, inputs)
    if not isinstance(result, SimResult):
        raise StageError(f"target.flow={cfg.target.flow}: its run returned {type(result).__name__}, not a "
                         "SimResult; fix the target")
    return {"sim/result.json": replace(result, target=cfg.target.flow)}
