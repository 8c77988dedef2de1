"""Back-end savings on the Operation-Dataflow kernel suite (seed 004 fig. 6-4).

    python benchmarks/backend.py

For each kernel and dataflow, the array is generated twice: ``optimizer=delay_only``
(width inference + LP delay matching: the mandatory baseline) and ``optimizer=lego``
(every pass), without the output-path PPU (no pass touches it). Printed per design: DAG register bits, Yosys cells and flip-flops
(``synth -noabc``, buffer banks black-boxed), estimated transistors (Yosys's CMOS
cost model, an area proxy that weighs a flip-flop above a gate), and the
baseline/lego cell and transistor ratios.
Designs the back end cannot generate yet are listed with the reason. Then the
back end's run time on two 16x16 switchable designs (seed 004's C++ back end: 70 s
for 256 FUs).
Seed 004 reports 1.26x fewer cells on average (up to 2.03x).
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from lego_build import ConfigError, StageError, compose, run_stage
from lego_build.runtime.atomic import read_json
from lego_build.sim.yosys import synthesize

SMALL_CONV = ["workload.in_h=10", "workload.in_w=10", "workload.in_ch=8", "workload.out_ch=8"]
SUITE = (
    ("GEMM-ICOC", ["arch.rows=8", "arch.cols=8", "arch.dataflows.main.spatial=[k,n]", "arch.control_flow=[0,0]"]),
    ("GEMM-systolic", ["arch.rows=8", "arch.cols=8"]),
    ("GEMM-WS-systolic", ["arch=tpu", "arch.rows=8", "arch.cols=8"]),
    ("Conv-KHOH", ["arch=eyeriss", "arch.rows=3", "arch.cols=8", "workload=conv2d", *SMALL_CONV]),
    ("Conv-ICOC", ["arch=nvdla", "arch.rows=8", "arch.cols=8", "workload=conv2d", *SMALL_CONV]),
    ("Conv-OHOW", ["arch=shidiannao", "workload=conv2d", *SMALL_CONV]),
    ("Depthwise-OHOW", ["arch=nvdla", "arch.rows=8", "arch.cols=8", "arch.dataflows.icoc.interstellar=Y|X",
                        "workload=depthwise", "workload.in_h=16", "workload.in_w=16", "workload.in_ch=16",
                        "workload.out_ch=16"]),
    ("MTTKRP", ["arch.family=mttkrp", "arch.dataflows.main.spatial=[i,j]", "workload=mttkrp"]),
    ("Attention", ["arch.rows=8", "arch.cols=8", "workload=attention", "workload.seq_q=32", "workload.seq_kv=32"]),
    ("GEMM-MN+ICOC", ["arch=lego_mnicoc", "arch.rows=8", "arch.cols=8"]),
    ("Conv-KHOH+ICOC", ["arch=lego_khoh_icoc", "workload=conv2d", *SMALL_CONV]),
)

#: switchable designs at full size, for the back end's run time (issue acceptance 4)
TIMED = (
    ("GEMM-MN+ICOC 16x16", ["arch=lego_mnicoc"]),
    ("Conv-KHOH+ICOC 16x16", ["arch=lego_khoh_icoc", "arch.rows=16", "arch.cols=16", "workload=conv2d"]),
)


def measure(overrides: list[str], optimizer: str, work: Path) -> dict:
    cfg = compose([*overrides, f"optimizer={optimizer}", "target=rtl", "arch.ppu=false"])  # the array alone
    for stage in ("analyze", "graph", "optimize", "emit"):
        run_stage(stage, cfg, work)
    synth = synthesize(work / "rtl")
    passes = read_json(work / "passes.json")["passes"]
    return {"register_bits": passes[-1]["register_bits"], "cells": synth["cells"], "ffs": synth["flip_flops"],
            "transistors": synth["transistors"]}


def main() -> int:
    print(f"{'design':<18} {'reg bits base/lego':>19} {'cells base/lego':>17} {'FFs base/lego':>15} "
          f"{'transistors base/lego':>23} {'cells':>6} {'trans.':>6}")
    ratios, t_ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for label, overrides in SUITE:
            try:
                base = measure(overrides, "delay_only", Path(tmp) / label / "base")
                lego = measure(overrides, "lego", Path(tmp) / label / "lego")
            except (StageError, ConfigError) as exc:
                print(f"{label:<18} n/a: {exc}")
                continue
            ratio, t_ratio = base["cells"] / lego["cells"], base["transistors"] / lego["transistors"]
            ratios.append(ratio)
            t_ratios.append(t_ratio)
            print(f"{label:<18} {base['register_bits']:>9}/{lego['register_bits']:<9} "
                  f"{base['cells']:>8}/{lego['cells']:<8} {base['ffs']:>7}/{lego['ffs']:<7} "
                  f"{base['transistors']:>11}/{lego['transistors']:<11} {ratio:6.2f} {t_ratio:6.2f}")
    if ratios:
        print(f"average cell ratio {sum(ratios) / len(ratios):.2f}x over {len(ratios)} designs "
              f"(max {max(ratios):.2f}x); seed 004: 1.26x average, up to 2.03x")
        print(f"average transistor ratio {sum(t_ratios) / len(t_ratios):.2f}x (max {max(t_ratios):.2f}x)")
    print()
    print(f"{'back-end time (all lego passes)':<40} {'primitives':>10} {'seconds':>8}  (target: 16x16 under 30 s)")
    for label, overrides in TIMED:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = compose([*overrides, "optimizer=lego", "target=rtl"])
            for stage in ("analyze", "graph"):
                run_stage(stage, cfg, Path(tmp))
            start = time.perf_counter()
            run_stage("optimize", cfg, Path(tmp))
            seconds = time.perf_counter() - start
            nodes = read_json(Path(tmp) / "passes.json")["passes"][-1]["nodes"]
            print(f"{label:<40} {nodes:>10} {seconds:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
