"""The cost model's on-chip energy against the standard-cell flow's, per level, on several
presets (issue 19, acceptance 4; seed 001 reports < 2 % against synthesis).

    python benchmarks/model_check.py [--only NAME ...] [--jobs N]

Each design is built with ``target=asic target.asic_top=array target.data=[random]``: its
representative tiles simulated in Verilator with toggle coverage and priced by OpenSTA on
the OSU 0.18 µm cells, the measured energy moved to the model's 28 nm by classical scaling
(:mod:`lego_build.sim.energy_check`). Printed per design and level (MAC, the network
between FUs, the L1 banks): the model's energy, the measured one, the model's error, and the
table ``doit calibrate`` writes for it (``arch.energy.table``), beside seed 001's Table 5.2
figures the model uses. Needs ``apt-get install -y qflow``.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

from lego_build import compose, run_all
from lego_build.runtime.artifacts import read_artifact
from lego_build.sim.energy_check import calibrate

SMALL_CONV = ["workload=conv2d", "workload.in_h=10", "workload.in_w=10", "workload.in_ch=8", "workload.out_ch=8"]
PRESETS = {
    "systolic-4x4": [],
    "lego_mnicoc-4x4": ["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4"],
    "nvdla-4x4-conv": ["arch=nvdla", "arch.rows=4", "arch.cols=4", *SMALL_CONV],
    "shidiannao-conv": ["arch=shidiannao", *SMALL_CONV],
}


def measure(name: str, work: str) -> tuple[str, dict, dict]:
    cfg = compose([*PRESETS[name], "target=asic", "target.asic_top=array", "target.data=[random]"])
    with open(f"{work}.log", "w") as log, contextlib.redirect_stdout(log):
        run_all(cfg, Path(work))
    check = read_artifact(Path(work), "sim/result.json").asic["model_check"]
    energy = asdict(cfg.arch.energy)
    return name, check, {**energy, **calibrate(check, energy)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(PRESETS), help="designs (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="designs built at once (default 2)")
    args = ap.parse_args()
    names = args.only or list(PRESETS)
    with tempfile.TemporaryDirectory(prefix="lego_build-model-check-") as tmp, ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(measure, names, [str(Path(tmp) / n) for n in names]))
    print(f"{'design':<18} {'level':<8} {'model pJ':>11} {'measured pJ':>12} {'model error':>12}")
    for name, check, _ in rows:
        for r in check["levels"]:
            err = "-" if r["error"] is None else f"{r['error']:+.1%}"
            print(f"{name:<18} {r['level']:<8} {r['model_pj']:>11,.1f} {r['measured_pj']:>12,.1f} {err:>12}")
        other = ", ".join(f"{c} {v:,.0f}" for c, v in check["not_modelled_pj"].items())
        print(f"{'':<18} (not in the model: {other} pJ; {check['macs']:,} MACs in {check['runs']} runs)")
    print(f"\n{'calibrated table (pJ at 28 nm)':<32} {'mac_pj':>8} {'hop_pj':>8} {'l1_pj':>8}")
    print(f"{'seed 001 Table 5.2 (the model)':<32} {0.075:>8} {0.035:>8} {6.0:>8}")
    for name, _, table in rows:
        print(f"{name:<32} {table['mac_pj']:>8.3f} {table['hop_pj']:>8.3f} {table['l1_pj']:>8.3f}")
    print("(measured at 180 nm and moved to 28 nm by classical scaling; the L1 figure is the banks as the RTL "
          "uses them, read every cycle; the network is every register, multiplexer and wire of the array)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
