"""Seed 004 Table 6.2: generated arrays against the human-designed ones with the same dataflow.

    python benchmarks/human_designs.py [--only eyeriss nvdla]

``arch=eyeriss_khoh`` (KH-OH, 12 x 14 = 168 FUs, 108 KB of banks) stands for LEGO-KHOH against
Eyeriss (Chen et al., JSSC 2017), ``arch=nvdla`` (IC-OC, 16 x 16 = 256 FUs, 128 KB) for
LEGO-ICOC against NVDLA. Each is built with ``target=asic`` (Yosys + ABC + OpenSTA on the OSU
0.18 µm library, the array's modules at the toggle rates of its simulated tiles, the memory
system at the default rate, the banks as SRAM macros), then moved to the node and clock of the
published figure by classical scaling (``lego_build.sim.asic.scaled``, an estimate: area by s²,
energy by s V²; power linear in the clock from our 100 MHz). Needs ``apt-get install -y qflow``.
The published figures are the only typed-in numbers, labelled, with their nodes as seed 004
states them.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from lego_build import compose, run_all
from lego_build.runtime.artifacts import read_artifact
from lego_build.sim.asic import scaled

#: name -> (overrides, the human design, its node, clock MHz, area mm², power mW, LEGO's figure in the paper)
RUNS = {
    "eyeriss": (["arch=eyeriss_khoh"], "Eyeriss", 60, 200, 9.6, 278, ("LEGO-KHOH", 65, 7.4, 112)),
    "nvdla": (["arch=nvdla"], "NVDLA", 16, 1000, 1.0, 135, ("LEGO-ICOC", 16, 0.9, 94)),
}
VDD = {60: 1.0, 65: 1.0, 16: 0.8}  # nominal supplies assumed at those nodes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), default=None)
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="lego_build-human-") as tmp:
        for name in args.only or list(RUNS):
            overrides, human, node, mhz, area, power, paper = RUNS[name]
            start = time.perf_counter()
            cfg = compose(["target=asic", *overrides])
            run_all(cfg, Path(tmp) / name)
            a = read_artifact(Path(tmp) / name, "sim/result.json").asic
            lib = SimpleNamespace(node_nm=a["node_nm"], vdd=a["vdd"])
            s = scaled(a["area_mm2"], a["fmax_mhz"], a["power_total_mw"], lib, paper[1], VDD[paper[1]])
            rows.append((name, cfg, a, s, mhz, time.perf_counter() - start))
    print("| design | dataflow | FUs | ours: mm² / mW at 180 nm, 100 MHz | ours scaled: node, mm², mW at the clock "
          "| paper's LEGO: node, mm², mW | human design: node, clock, mm², mW |")
    print("|---|---|---:|---|---|---|---|")
    for name, cfg, a, s, mhz, wall in rows:
        _, human, node, _, area, power, paper = RUNS[name]
        dfs = "+".join(cfg.arch.dataflows)
        print(f"| {cfg.arch.name} | {dfs} | {cfg.arch.rows * cfg.arch.cols} | {a['area_mm2']:.2f} / "
              f"{a['power_total_mw']:.0f} (Fmax {a['fmax_mhz']:.0f} MHz) | {paper[1]} nm, {s['area_mm2']:.2f} mm², "
              f"{s['power_mw'] * mhz / a['power_mhz']:.0f} mW at {mhz} MHz | {paper[0]}: {paper[1]} nm, "
              f"{paper[2]} mm², {paper[3]} mW | {human}: {node} nm, {mhz} MHz, {area} mm², {power} mW |")
    print("(paper: seed 004 Table 6.2; its LEGO-ICOC figures are projected from 28 nm; ours are classical scaling "
          "of a 180 nm flow, an estimate)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
