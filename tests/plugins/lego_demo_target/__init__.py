"""A user's target, registered by an entry point only (``lego_build.targets``): ``target=demo_lines``
counts the emitted Verilog's modules and lines with ``wc``. It declares its tool (a missing ``wc``
is a one-line error before any work), its product (``sim/result.json`` ``products.verilog``, the
line count in ``summary.json``, a line in the reports) and its run. Nothing in lego_build names it.
"""
from __future__ import annotations

import subprocess

from lego_build.ir.artifacts import SimResult
from lego_build.runtime.tools import Tool
from lego_build.targets.base import Product, Target

WC = Tool("wc", "LEGO_DEMO_WC", ("wc",), "apt-get install -y coreutils")


def run(cfg, design_dir, inputs) -> SimResult:
    rtl = design_dir / "rtl"
    files = [line.strip() for line in (rtl / "filelist.f").read_text().splitlines() if line.strip()]
    out = subprocess.run([WC.path(), "-l", *files], cwd=rtl, capture_output=True, text=True, check=True).stdout
    lines = int(out.splitlines()[-1].split()[0]) if len(files) > 1 else int(out.split()[0])
    figures = {"modules": len(files), "lines": lines}
    print(f"simulate: demo_lines: {figures['modules']} Verilog files, {figures['lines']} lines")
    return SimResult(status="skipped", reason="target=demo_lines counts lines", products={"verilog": figures})


TARGET = Target("demo_lines", "count the emitted Verilog's modules and lines", run, tools=(WC,),
                products=(Product("verilog", "Verilog size", {"verilog_lines": "lines"}),))
