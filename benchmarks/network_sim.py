"""Whole networks in RTL through the memory system (issue 18): measured cycles against the
latency model, per layer and in total, beside the published anchors.

    python benchmarks/network_sim.py [--only NAME ...] [--out DIR]

Runs (``target.scope=network``: every array layer of the network, every output element
compared with the exact golden model, one Verilator build per design):

* ``resnet18-16x16`` / ``mobilenetv2-16x16``: a 16 x 16 weight-stationary GEMM array (``GEMM16``:
  ``arch=tpu`` with searched tiles, 256 KB of banks, 16 GB/s at 1 GHz, 128-bit AXI, 64 cycles DRAM latency);
* ``resnet18-32x32-os`` / ``mobilenetv2-32x32-os``: a 32 x 32 output-stationary array
  (``arch=systolic``) with SCALE-Sim's resources: three 64 KB buffers (192 KB), and a full
  1024-bit AXI beat per cycle (128 B per cycle). The DRAM keeps up, and a beat brings four
  32-byte rows of operands, which the banks take in one write (four sub-banks each), so a
  tile loads in a quarter of the time the array takes to read it and the DRAM latency hides
  behind the previous tile;
* ``resnet18-32x32-os-16GBs``: the same array at 16 GB/s (128-bit AXI), to show how much of
  the gap to the ideal DRAM stalls explain;
* ``resnet18-eyeriss`` / ``resnet18-eyeriss-khoh``: Eyeriss's 12 x 14 array with its replicated
  row-stationary forms, and with KH-OH alone (``arch=eyeriss_khoh``), under EDP;
* ``resnet18-gemmini_like`` / ``mobilenetv2-gemmini_like`` / ``resnet50-eyeriss``: the presets as
  a user builds them, default settings (Gemmini's tiling rule; the energy objective).

Each run's figures are also written to ``benchmarks/results/network_sim.json``.

Anchors: ResNet-18 has 1,814,073,344 MACs, so 1,771,556 cycles on 1024 MACs is the ideal;
SCALE-Sim 3.0 reports 2,133,315 cycles for it on a 32 x 32 output-stationary array with
64 KB SRAMs and no DRAM stalls (1.20 x the ideal). Beside them, the array's own floor: its
time steps at the mapping's spatial padding (an output-stationary array holds output pixels
on one side, so ResNet-18's 14 x 14 and 7 x 7 layers fill 196 of 224 and 49 of 64 rows:
1,975,856 steps, 1.115 x the ideal, before any fill, drain or stall).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from lego_build import compose, run_all
from lego_build.runtime.artifacts import read_artifact

#: the 16 x 16 weight-stationary GEMM array these figures were measured on (what gemmini_like was before it
#: became seed 004 §6's conv baseline with Gemmini's tiling rule): a TPU-like array with 256 KB of banks
GEMM16 = ["arch=tpu", "arch.onchip_kb=256", "arch.clock_mhz=1000", "arch.dram_bytes_per_cycle=16"]
OS32 = ["arch=systolic", "arch.rows=32", "arch.cols=32", "arch.onchip_kb=192", "arch.clock_mhz=1000"]
RUNS = {
    "resnet18-16x16": [*GEMM16, "workload=resnet18"],
    "mobilenetv2-16x16": [*GEMM16, "workload=mobilenetv2"],
    "resnet18-32x32-os": [*OS32, "workload=resnet18", "arch.axi_data_bits=1024", "arch.dram_bytes_per_cycle=128"],
    "mobilenetv2-32x32-os": [*OS32, "workload=mobilenetv2", "arch.axi_data_bits=1024",
                             "arch.dram_bytes_per_cycle=128"],
    "resnet18-32x32-os-16GBs": [*OS32, "workload=resnet18", "arch.dram_bytes_per_cycle=16"],
    # Eyeriss (12 x 14, 108 KB, 4 B/cycle at 200 MHz) with its replicated row-stationary forms, and
    # with KH-OH alone (issue 22), both mapped for EDP
    "resnet18-eyeriss": ["arch=eyeriss", "workload=resnet18", "mapper.objective=edp"],
    "resnet18-eyeriss-khoh": ["arch=eyeriss_khoh", "workload=resnet18", "mapper.objective=edp"],
    # the presets as a user builds them (issue 42: the latency model off the benchmarks' settings):
    # seed 004's Gemmini-like baseline with Gemmini's tiling rule, and Eyeriss under the default
    # (energy) objective, whose mappings wait on DRAM far more than the EDP ones above
    "resnet18-gemmini_like": ["arch=gemmini_like", "workload=resnet18"],
    "mobilenetv2-gemmini_like": ["arch=gemmini_like", "workload=mobilenetv2"],
    "resnet50-eyeriss": ["arch=eyeriss", "workload=resnet50"],
}
IDEAL = {"resnet18": 1_814_073_344}
SCALE_SIM = {"resnet18-32x32-os": 2_133_315}


def run(name: str, out: Path) -> dict:
    cfg = compose([*RUNS[name], "target.scope=network", "target.max_cycles=1000000000", "target.max_minutes=0"])
    design = out / name
    start = time.perf_counter()
    run_all(cfg, design)
    wall = time.perf_counter() - start
    res = read_artifact(design, "sim/result.json")
    steps = {e["name"]: e["steps"] for e in read_artifact(design, "mapping.json").layers if e["status"] == "mapped"}
    return {"name": name, "cfg": cfg, "wall": wall, "res": res, "steps": sum(steps[x["layer"]] for x in res.layers)}


def report(r: dict) -> None:
    res, cfg, net = r["res"], r["cfg"], r["res"].network
    fus = cfg.arch.rows * cfg.arch.cols
    print(f"\n## {r['name']}: {cfg.arch.name} {cfg.arch.rows}x{cfg.arch.cols}, {cfg.workload.name}; "
          f"{cfg.arch.onchip_kb:g} KB banks, {cfg.arch.dram_bytes_per_cycle:g} B/cycle DRAM, "
          f"{cfg.arch.axi_data_bits}-bit AXI, {cfg.arch.dram_latency_cycles} cycles latency")
    print(f"{'layer':28} {'tiles':>6} {'measured':>11} {'predicted':>11} {'error':>7} {'mapper':>11} "
          f"{'load wait':>10} {'util':>6}")
    for layer in res.layers:
        print(f"{layer['layer'][:28]:28} {layer['tiles']:>6} {layer['cycles']:>11,} {layer['cycles_predicted']:>11,} "
              f"{layer['error']:>+7.1%} {layer['cycles_mapper']:>11,.0f} {layer['load_wait']:>10,} "
              f"{layer['utilization']:>6.1%}")
    macs = net["macs"]
    ideal = macs / fus
    print(f"{'total':28} {sum(x['tiles'] for x in res.layers):>6} {net['cycles']:>11,} {net['cycles_predicted']:>11,} "
          f"{net['error']:>+7.1%} {'':>11} {net['load_wait']:>10,} {macs / (net['cycles'] * fus):>6.1%}")
    print(f"status {res.status}: {res.outputs:,} outputs compared, {res.mismatches} mismatches; "
          f"model error {net['error']:+.2%} (network), worst layer {net['max_layer_error']:.2%}")
    print(f"wall {r['wall']:.0f} s (the whole build), {net['cycles'] / r['wall']:,.0f} simulated cycles per second")
    anchor = IDEAL.get(cfg.workload.name)
    line = f"ideal {ideal:,.0f} cycles ({macs:,} MACs on {fus}); measured {net['cycles'] / ideal:.3f} x the ideal"
    if anchor and anchor != macs:
        line += f" (MACs differ from the anchor's {anchor:,})"
    if r["name"] in SCALE_SIM:
        line += f"; SCALE-Sim 3.0 (32x32 OS, 64 KB SRAMs, no stalls): {SCALE_SIM[r['name']]:,} = " \
                f"{SCALE_SIM[r['name']] / ideal:.3f} x"
    if net["load_wait"]:
        line += f"; DRAM stalls (array waiting for loads) {net['load_wait']:,} cycles = " \
                f"{net['load_wait'] / max(1, net['cycles'] - ideal):.0%} of the gap to the ideal"
    print(line)
    print(f"the array's time steps (one per cycle at the mapping's spatial padding, the floor for this array): "
          f"{r['steps']:,} = {r['steps'] / ideal:.3f} x the ideal; measured {net['cycles'] / r['steps']:.3f} x "
          "the steps")


def record(r: dict) -> dict:
    """What a run measured, as data (``benchmarks/results/network_sim.json``)."""
    res, net = r["res"], r["res"].network
    fus = r["cfg"].arch.rows * r["cfg"].arch.cols
    return {"name": r["name"], "overrides": RUNS[r["name"]], "status": res.status, "outputs": res.outputs,
            "mismatches": res.mismatches, "cycles": net["cycles"], "cycles_predicted": net["cycles_predicted"],
            "error": net["error"], "max_layer_error": net["max_layer_error"], "macs": net["macs"],
            "utilization": round(net["macs"] / (net["cycles"] * fus), 4), "wall_s": round(r["wall"], 1),
            "ideal": round(net["macs"] / fus), "scale_sim": SCALE_SIM.get(r["name"]),
            "layers": [{k: x[k] for k in ("layer", "tiles", "cycles", "cycles_predicted", "error", "load_wait",
                                          "store_wait")} for x in res.layers]}


RESULTS = Path(__file__).resolve().parent / "results" / "network_sim.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), help="runs to do (default: all)")
    ap.add_argument("--out", type=Path, help="where the designs go (default: a temporary directory)")
    ap.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS.name}; each "
                    "run's record replaces the one of the same name)")
    args = ap.parse_args(argv)
    names = args.only or list(RUNS)
    with tempfile.TemporaryDirectory(prefix="lego_build-network-sim-") as tmp:
        out = args.out or Path(tmp)
        for name in names:
            r = run(name, out)
            report(r)
            records = {x["name"]: x for x in json.loads(args.results.read_text())} if args.results.is_file() else {}
            records[name] = record(r)
            args.results.parent.mkdir(parents=True, exist_ok=True)
            args.results.write_text(json.dumps([records[k] for k in sorted(records)], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
