"""Front-end time (seed 004 ch. 4) on large arrays: candidates, MSTs and the §4.3 merge.

    python benchmarks/frontend.py

Target (issue 4): a 32x32 array with three dataflows in under 5 s on 2 cores
(seed 004 reports 4 s in C++ for its 16x16 design). Prints one row per design.
"""
from __future__ import annotations

import sys
import time

from lego_build import compose
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.frontend.adg_build import build_adg

CASES = (
    ("gemm 16x16 MN+ICOC", gemm(64, 64, 64), ["arch=lego_mnicoc"]),
    ("gemm 32x32 IC-OC", gemm(64, 64, 64), ["arch=lego_icoc_1k"]),
    ("conv 32x32 three dataflows", conv2d(1, 64, 64, 34, 34, 3, 3, 1, 1),
     ["arch=lego_mnicoc", "arch.family=conv2d", "arch.rows=32", "arch.cols=32", "arch.max_fus=1024",
      "arch.dataflows.mn.spatial=[oh,ow]", "arch.dataflows.icoc.spatial=[ic,oc]"]),
)


def main() -> int:
    print(f"{'design':<28} {'dataflows':>9} {'FUs':>5} {'seconds':>8} {'links':>6} {'ports':>6}")
    for label, kernel, overrides in CASES:
        cfg = compose(overrides)
        if label.startswith("conv 32x32"):
            from lego_build.config.schema import DataflowConf

            cfg.arch.dataflows["khoh"] = DataflowConf(spatial=["oc:8,kh:4", "oh"])  # a third: Eyeriss-like KH-OH
        start = time.perf_counter()
        adg = build_adg(kernel, cfg.arch)
        seconds = time.perf_counter() - start
        links = sum(len(n.links) for n in adg.nets)
        ports = sum(len(n.ports) for n in adg.nets)
        print(f"{label:<28} {len(adg.dataflows):>9} {len(adg.fus):>5} {seconds:8.2f} {links:>6} {ports:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
