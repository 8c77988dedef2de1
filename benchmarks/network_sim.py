"""Whole networks in RTL through the memory system (issue 18): measured cycles against the
latency model, per layer and in total, beside the published anchors.

    python -m benchmarks.network_sim [--quick] [--only NAME ...] [--keep DIR] [--cold-cache]

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

Each run's record goes to ``benchmarks/results/network_sim.json``, replacing the one of the same
name (the others stay, with the commit and date they were measured at). Wall times include the
Verilator build: ``--cold-cache`` builds with a fresh cache root, else the user's (as found).
``--quick``: one small GEMM (``gemm-4x4``) on the default 4x4 array.

Anchors: ResNet-18 has 1,814,073,344 MACs, so 1,771,556 cycles on 1024 MACs is the ideal;
SCALE-Sim 3.0 reports 2,133,315 cycles for it on a 32 x 32 output-stationary array with
64 KB SRAMs and no DRAM stalls (1.20 x the ideal). Beside them, the array's own floor: its
time steps at the mapping's spatial padding (an output-stationary array holds output pixels
on one side, so ResNet-18's 14 x 14 and 7 x 7 layers fill 196 of 224 and 49 of 64 rows:
1,975,856 steps, 1.115 x the ideal, before any fill, drain or stall).
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/network_sim.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.network_sim)

import datetime
import json
import sys
import time
from pathlib import Path

from benchmarks import harness
from lego_build.runtime.artifacts import read_artifact

#: the 16 x 16 weight-stationary GEMM array these figures were measured on (what gemmini_like was before it
#: became seed 004 §6's conv baseline with Gemmini's tiling rule): a TPU-like array with 256 KB of banks
GEMM16 = ["arch=tpu", "arch.onchip_kb=256", "arch.clock_mhz=1000", "arch.memsys.dram_bytes_per_cycle=16"]
OS32 = ["arch=systolic", "arch.rows=32", "arch.cols=32", "arch.onchip_kb=192", "arch.clock_mhz=1000"]
RUNS = {
    "resnet18-16x16": [*GEMM16, "workload=resnet18"],
    "mobilenetv2-16x16": [*GEMM16, "workload=mobilenetv2"],
    "resnet18-32x32-os": [*OS32, "workload=resnet18", "arch.memsys.axi_data_bits=1024",
                          "arch.memsys.dram_bytes_per_cycle=128"],
    "mobilenetv2-32x32-os": [*OS32, "workload=mobilenetv2", "arch.memsys.axi_data_bits=1024",
                             "arch.memsys.dram_bytes_per_cycle=128"],
    "resnet18-32x32-os-16GBs": [*OS32, "workload=resnet18", "arch.memsys.dram_bytes_per_cycle=16"],
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
    # seed 004 §6's switchable MN / IC-OC / OH-OW array (issue 44 acceptance 3: bit-exact, model error <= 2 %
    # after the memory system's write path was pipelined)
    "resnet18-lego_mnicoc": ["arch=lego_mnicoc", "workload=resnet18"],
    "mobilenetv2-lego_mnicoc": ["arch=lego_mnicoc", "workload=mobilenetv2"],
}
QUICK = {"gemm-4x4": ["workload=gemm", "workload.M=8", "workload.N=8", "workload.K=8"]}
IDEAL = {"resnet18": 1_814_073_344}
SCALE_SIM = {"resnet18-32x32-os": 2_133_315}


def run(name: str, out: Path) -> dict:
    cfg = harness.compose([*{**RUNS, **QUICK}[name], "target.scope=network", "target.max_cycles=1000000000",
                           "run.max_minutes=0"])
    design = out / name
    start = time.perf_counter()
    harness.run_stages(cfg, "report", design, quiet=False)
    wall = time.perf_counter() - start
    res = read_artifact(design, "sim/result.json")
    steps = {e["name"]: e["steps"] for e in read_artifact(design, "mapping.json").layers if e["status"] == "mapped"}
    return {"name": name, "cfg": cfg, "wall": wall, "res": res, "steps": sum(steps[x["layer"]] for x in res.layers)}


def report(r: dict) -> None:
    res, cfg, net = r["res"], r["cfg"], r["res"].network
    fus = cfg.arch.rows * cfg.arch.cols
    print(f"\n## {r['name']}: {cfg.arch.name} {cfg.arch.rows}x{cfg.arch.cols}, {cfg.workload.name}; "
          f"{cfg.arch.onchip_kb:g} KB banks, {cfg.arch.memsys.dram_bytes_per_cycle:g} B/cycle DRAM, "
          f"{cfg.arch.memsys.axi_data_bits}-bit AXI, {cfg.arch.memsys.dram_latency_cycles} cycles latency")
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
    return {"name": r["name"], "overrides": {**RUNS, **QUICK}[r["name"]], "status": res.status, "outputs": res.outputs,
            "mismatches": res.mismatches, "cycles": net["cycles"], "cycles_predicted": net["cycles_predicted"],
            "error": net["error"], "max_layer_error": net["max_layer_error"], "macs": net["macs"],
            "utilization": round(net["macs"] / (net["cycles"] * fus), 4), "wall_s": round(r["wall"], 1),
            "ideal": round(net["macs"] / fus), "scale_sim": SCALE_SIM.get(r["name"]),
            "layers": [{k: x[k] for k in ("layer", "tiles", "cycles", "cycles_predicted", "error", "load_wait",
                                          "store_wait")} for x in res.layers]}


#: the commit that measured the records written before the harness (benchmarks/results/network_sim.json's history)
EARLIER = "b98dda8"
PEER = {"source": "SCALE-Sim 3.0: ResNet-18 on a 32x32 output-stationary array, 64 KB SRAMs, no DRAM stalls",
        "resnet18-32x32-os cycles": SCALE_SIM["resnet18-32x32-os"]}


def earlier_runs(path: Path) -> dict:
    """The records already in the results file, by name (a file from before the harness: its
    records, labelled with the commit that measured them)."""
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    if isinstance(doc, list):
        return {x["name"]: {**x, "commit": EARLIER, "date": "", "cache": "as found", "quick": False} for x in doc}
    return {x["name"]: x for x in doc["figures"]["runs"]}


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), help="runs to do (default: all)")
    harness.cache_option(ap)
    args = ap.parse_args(argv)
    names = list(QUICK) if args.quick else (args.only or list(RUNS))
    path = harness.results_path("network_sim", args.out)
    with harness.workspace(args) as out, harness.cold_cache(args.cold_cache) as cache:
        for name in names:
            r = run(name, out)
            report(r)
            runs = earlier_runs(path)
            runs[name] = {**record(r), "commit": harness.commit(), "cache": cache, "quick": args.quick,
                          "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
            write(runs, argv, path)
    return 0


def write(runs: dict, argv: list[str] | None, path: Path, provenance: dict | None = None) -> Path:
    rows = [[x["name"], x["cycles"], round(x["cycles"] / x["ideal"], 3), f"{x['error']:+.2%}",
             f"{x['max_layer_error']:.2%}", x["mismatches"], x["wall_s"], x.get("cache", ""), x["commit"][:7]]
            for x in sorted(runs.values(), key=lambda x: x["name"])]
    figures = {"tables": [harness.table(
        "whole networks in RTL: measured cycles, the latency model's error, wall time of the whole build",
        ["run", "cycles", "x ideal", "model error (network)", "worst layer", "mismatches", "wall s", "cache",
         "commit"], rows, note=f"records of commit {EARLIER} were measured before the harness recorded caches "
        "(as found: warm Verilator models)")], "runs": [runs[k] for k in sorted(runs)]}
    return harness.write_results("network_sim", figures, peer=PEER, quick=all(x.get("quick") for x in runs.values()),
                                 out=path, argv=argv, provenance=provenance,
                                 title="whole networks in RTL through the memory system, against the latency model",
                                 notes="Anchors: ResNet-18 has 1,814,073,344 MACs, 1,771,556 cycles on 1024 MACs "
                                 "is the ideal.")


if __name__ == "__main__":
    sys.exit(main())
