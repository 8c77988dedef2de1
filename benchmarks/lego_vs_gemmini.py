"""Seed 004 §6.2 (figs. 6-2 and 6-3): LEGO-MNICOC against a Gemmini-like baseline, per network.

    python -m benchmarks.lego_vs_gemmini [--quick] [--only resnet50 ...] [--rtl resnet50 ...] [--objective latency edp]

Both designs have the same resources (``arch=gemmini_like`` and ``arch=lego_mnicoc``: 256 FUs,
256 KB of bank SRAM, a 128-bit bus at 16 GB/s, 16 PPU lanes; tests/test_presets.py checks them
in the generated RTL). The baseline tiles every layer with Gemmini's own rule on its one
weight-stationary dataflow; LEGO searches over MN, IC-OC and OH-OW per layer, once per
``mapper.objective`` given (default: latency, then EDP; the paper's scheduler is guided by its
performance simulator, and both objectives time candidates by the latency model): a table and
the geometric means for each.

Per network and design: end-to-end latency (array layers plus the PPU passes, in cycles and in
ms at 1 GHz), utilization (MACs / (cycles x 256)), on-chip energy (everything but DRAM) and
on-chip energy efficiency (GOPS/W = 2 x MACs per on-chip pJ x 1000), then the speed-up and the
energy ratio, and their geometric means beside the paper's 3.2x and 2.4x (the only typed-in
figures, labelled). ``source`` says where the latency comes from: ``model`` (the latency model of
``lego_build.mapping.latency`` that every whole-layer RTL run checks: tiles, DRAM bursts and
double buffering of the generated memory system, per layer from the chosen mapping) or ``rtl``
(``--rtl NET``: every array layer of the network run through the memory system in Verilator,
every output compared; the measured cycles replace the model's, and the table shows the model's
error beside them). The mapper's own figure (a roofline per tile) is printed too: it does not
see the memory system's layout, which is why the latency model, not it, is quoted. ``--quick``:
LeNet-5 on both designs at 4x4, latency objective.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/lego_vs_gemmini.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.lego_vs_gemmini)

import hashlib
import shutil
import sys
import time
from math import exp, log
from pathlib import Path

from benchmarks import harness
from lego_build.analysis.networks import NETWORKS
from lego_build.runtime.artifacts import read_artifact

DESIGNS = ("gemmini_like", "lego_mnicoc")
SEVEN = ("alexnet", "mobilenetv2", "resnet50", "efficientnetv2", "bert", "gpt2", "coatnet")
PAPER = {"speedup": 3.2, "energy": 2.4}  # seed 004 §6.2, geometric means over the seven networks
QUICK = ["arch.rows=4", "arch.cols=4"]
OBJECTIVES = ("latency", "edp")  # the objectives under which the map stage times layers by the latency model


def measure(design: str, net: str, objective: str, rtl: bool, out: Path, extra=(), hardware: dict | None = None) \
        -> dict:
    """One design on one network: the map stage's figures (``cycles_model``: the memory system's
    latency model, per layer times its count), and with ``rtl`` the whole network simulated.
    ``hardware`` (a dict the caller keeps across calls): optimized DAGs by their architecture graph,
    so a design whose ``adg.json`` is byte-identical to an earlier one's (the same arch on another
    network or batch) takes that one's ``dag.json`` instead of running the back end again."""
    overrides = [f"arch={design}", f"workload={net}", f"mapper.objective={objective}", *extra]
    if rtl:
        overrides += ["target.scope=network", "target.max_cycles=1000000000", "run.max_minutes=0"]
    cfg = harness.compose(overrides)
    work = out / f"{design}-{net}"
    start = time.perf_counter()
    harness.run_stages(cfg, "graph", work, quiet=False)
    skip = ["analyze", "graph"]
    if hardware is not None:
        key = hashlib.sha256((work / "adg.json").read_bytes() + repr(cfg.optimizer).encode()).hexdigest()
        if key in hardware:
            for name in ("dag.json", "passes.json"):
                shutil.copyfile(hardware[key] / name, work / name)
            skip.append("optimize")
        else:
            hardware[key] = work
    harness.run_stages(cfg, "map", work, skip=skip, quiet=False)
    doc = read_artifact(work, "mapping.json")
    t = doc.totals
    ppu = t["ppu"]["cycles"]
    row = {"design": design, "net": net, "macs": t["macs"], "mapper_cycles": t["cycles"], "ppu_cycles": ppu,
           "model_cycles": t["cycles_model"] + ppu, "cycles": t["cycles_model"] + ppu, "source": "model"}
    dram = t["energy_by_level_pj"].get("dram", 0.0)
    ppu_dram = t["ppu"]["dram_bytes"] * 8 / 16 * cfg.arch.energy.dram_pj
    row["onchip_pj"] = t["end_to_end_energy_pj"] - dram - ppu_dram
    if rtl:
        harness.run_stages(cfg, "simulate", work, skip=[s for s in ("analyze", "graph", "optimize", "map")],
                           quiet=False)
        res = read_artifact(work, "sim/result.json")
        measured = {x["layer"]: x["cycles"] for x in res.layers}
        counts = {e["name"]: e["count"] for e in doc.layers if e["status"] == "mapped"}
        if res.status == "pass" and res.mismatches == 0 and set(measured) == set(counts):
            row["cycles"] = sum(n * measured[name] for name, n in counts.items()) + ppu
            row["source"] = "rtl"
        else:
            row["source"] = f"model (rtl: {res.status}, {res.mismatches} mismatches)"
    row["wall_s"] = time.perf_counter() - start
    row["util"] = row["macs"] / (row["cycles"] * cfg.arch.rows * cfg.arch.cols)
    row["gops_w"] = 2 * row["macs"] / row["onchip_pj"] * 1000
    return row


def geomean(xs: list[float]) -> float:
    return exp(sum(log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", default=None, help="networks (default: the seven of §6.2)")
    ap.add_argument("--rtl", nargs="*", default=[], help="networks whose latency comes from whole-network RTL runs")
    ap.add_argument("--objective", nargs="+", default=list(OBJECTIVES), choices=OBJECTIVES,
                    help="LEGO's mapper.objective, one table each (the baseline's rule is fixed)")
    args = ap.parse_args(argv)
    if args.quick:
        args.only, args.objective = ["lenet"], ["latency"]
    nets = [n for n in (args.only or SEVEN) if n in NETWORKS]
    missing = [n for n in (args.only or SEVEN) if n not in NETWORKS]
    if missing:
        print(f"skipped (no such built-in network): {', '.join(missing)}", file=sys.stderr)
    means, hardware, tables = [], {}, []
    extra = QUICK if args.quick else []
    with harness.workspace(args) as out:
        base = {}
        for objective in args.objective:
            rows = {}
            for net in nets:
                for design in DESIGNS:
                    if design == "gemmini_like" and net in base:  # its rule does not depend on the objective
                        rows[design, net] = base[net]
                        continue
                    r = measure(design, net, objective if design != "gemmini_like" else "latency", net in args.rtl,
                                out / (objective if design != "gemmini_like" else "baseline"), extra, hardware)
                    rows[design, net] = r
                    if design == "gemmini_like":
                        base[net] = r
                    print(f"  {design} {net}: {r['cycles']:,} cycles ({r['source']}), {r['wall_s']:.1f} s",
                          file=sys.stderr)
            speed, energy = table(nets, rows, objective)
            means.append((objective, speed, energy))
            tables.append(harness.table(
                f"LEGO-MNICOC mapped for {objective} against the Gemmini-like baseline",
                ["network", "Gemmini-like cycles", "LEGO cycles", "speed-up", "on-chip energy ratio", "source"],
                [[net, rows["gemmini_like", net]["cycles"], rows["lego_mnicoc", net]["cycles"],
                  round(rows["gemmini_like", net]["cycles"] / rows["lego_mnicoc", net]["cycles"], 2),
                  round(rows["gemmini_like", net]["onchip_pj"] / rows["lego_mnicoc", net]["onchip_pj"], 2),
                  " / ".join(dict.fromkeys(rows[d, net]["source"] for d in DESIGNS))] for net in nets]
                + [["geometric mean", "", "", round(speed, 2), round(energy, 2), ""],
                   ["seed 004 §6.2 (paper)", "", "", PAPER["speedup"], PAPER["energy"], ""]]))
    if len(means) > 1:
        print("| LEGO's mapper.objective | speed-up (geometric mean) | on-chip energy ratio (geometric mean) |")
        print("|---|---:|---:|")
        for objective, s, e in means:
            print(f"| {objective} | {s:.2f}x | {e:.2f}x |")
        print(f"| seed 004 §6.2 (paper) | {PAPER['speedup']}x | {PAPER['energy']}x |")
    headline = {f"geometric-mean speed-up, LEGO mapped for {o}": round(s, 2) for o, s, _ in means}
    headline |= {f"geometric-mean on-chip energy ratio, LEGO mapped for {o}": round(e, 2) for o, _, e in means}
    harness.write_results("lego_vs_gemmini", {"headline": headline, "tables": tables}, quick=args.quick, out=args.out,
                          argv=argv, title="LEGO-MNICOC against a Gemmini-like baseline per network (seed 004 §6.2)",
                          paper={"source": "seed 004 §6.2, figs. 6-2 and 6-3, geometric means over seven networks",
                                 "speed-up": PAPER["speedup"], "energy ratio": PAPER["energy"]})
    return 0


def table(nets: list[str], rows: dict, objective: str) -> tuple[float, float]:
    """Print one objective's tables; return its geometric-mean speed-up and energy ratio."""
    print(f"### LEGO-MNICOC mapped for {objective}")
    print()
    print("| network | design | cycles | ms @ 1 GHz | utilization | PPU share | on-chip uJ | GOPS/W | mapper's cycles "
          "| source |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    speed, energy = [], []
    for net in nets:
        for design in DESIGNS:
            r = rows[design, net]
            print(f"| {net} | {design} | {r['cycles']:,} | {r['cycles'] / 1e6:.3f} | {r['util']:.1%} | "
                  f"{r['ppu_cycles'] / r['cycles']:.1%} | {r['onchip_pj'] / 1e6:,.1f} | {r['gops_w']:,.0f} | "
                  f"{r['mapper_cycles']:,} | {r['source']} |")
    print()
    print("| network | speed-up (LEGO / Gemmini-like) | on-chip energy ratio | model error (RTL runs) |")
    print("|---|---:|---:|---:|")
    for net in nets:
        g, lego = rows["gemmini_like", net], rows["lego_mnicoc", net]
        s, e = g["cycles"] / lego["cycles"], g["onchip_pj"] / lego["onchip_pj"]
        speed.append(s)
        energy.append(e)
        err = " / ".join(f"{(r['model_cycles'] - r['cycles']) / r['cycles']:+.2%}" for r in (g, lego)
                         if r["source"] == "rtl") or "-"
        print(f"| {net} | {s:.2f}x | {e:.2f}x | {err} |")
    print(f"| **geometric mean** | **{geomean(speed):.2f}x** | **{geomean(energy):.2f}x** | |")
    print(f"| seed 004 §6.2 (paper) | {PAPER['speedup']}x | {PAPER['energy']}x | |")
    print()
    return geomean(speed), geomean(energy)


if __name__ == "__main__":
    sys.exit(main())
