"""``target.flow=rtl``: emit the Verilog only; the simulate stage records that nothing ran."""
from __future__ import annotations

from lego_build.ir.artifacts import SimResult
from lego_build.targets.base import Target


def run(cfg, design_dir, inputs) -> SimResult:
    print("simulate: no simulation for this target")
    return SimResult(status="skipped", reason=f"target={cfg.target.name}", target=cfg.target.flow)


TARGET = Target("rtl", "emit the Verilog only", run)
