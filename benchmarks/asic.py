"""Physical figures of generated accelerators (issue 19): area, Fmax and power from the
standard-cell flow (``target=asic``: Yosys + ABC + OpenSTA on Debian qflow's OSU 0.18 µm
library), beside seed 004's figure for LEGO-MNICOC.

    python -m benchmarks.asic [--quick] [--only NAME ...] [--cold-cache]

Needs ``apt-get install -y qflow``. Each design is built with ``target=asic`` (the default
representative tiles simulated with toggle coverage: the array's modules at their measured
toggle rates, the memory system at the default 0.1) and printed with its area by class, Fmax,
power at 100 MHz, the wall time of the build, and the figures moved to 28 nm by classical
scaling (an estimate, see ``lego_build.targets.models.scaled``).

Fmax is checked against each design's clock target (``arch.clock_mhz``) and printed beside the
figure before issue 44 (``BEFORE``); the power is also given at the achieved clock (the target, or
Fmax where lower: leakage stays, the rest scales with the clock).

Seed 004, fig. 6-1: LEGO-MNICOC with Gemmini's resources, 1.76 mm² and 285 mW on chip in
TSMC 28 nm (Design Compiler; CACTI for the SRAM), clock not stated there (1 GHz in §6).
Yosys netlists are cached by content: ``--cold-cache`` times the builds with a fresh cache root.
``--quick``: a 2x2 array alone (no memory system) on a small GEMM.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/asic.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.asic)

import time

from benchmarks import harness
from lego_build.runtime.artifacts import read_artifact
from lego_build.targets.stdcell import SRAM, TABLES

RUNS = {
    "default-4x4": [],
    "gemmini_like-16x16": ["arch=gemmini_like"],
    "lego_mnicoc-16x16": ["arch=lego_mnicoc"],
}
QUICK = {"array-2x2": ["target.asic_top=array", "arch.ppu=false", "arch.rows=2", "arch.cols=2", "workload.M=4",
                       "workload.N=4", "workload.K=4"]}
SEED = {"lego_mnicoc-16x16": (1.76, 285.0)}  # mm², mW at 28 nm
#: Fmax (MHz) before issue 44 (its statement, this flow then: flat synthesis, no buffer trees, report_wns clamped
#: at the 100 MHz probe clock, so a faster design read exactly 100), beside the figures this run measures
BEFORE = {"default-4x4": 52.0, "gemmini_like-16x16": 23.0, "lego_mnicoc-16x16": 4.0, "array-2x2": 100.0}


#: the design the others' logic area is set against (issue 44: lego_mnicoc within 1.3x of it)
BASE = "gemmini_like-16x16"


def logic_mm2(a: dict) -> float:
    """A design's logic area: every module class but the SRAM banks' and the activation tables' macros."""
    return sum(v for k, v in a["area_um2"].items() if k not in (SRAM, TABLES)) / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), help="runs to do (default: all)")
    harness.cache_option(ap)
    args = ap.parse_args(argv)
    runs = QUICK if args.quick else {n: RUNS[n] for n in args.only or RUNS}
    rows = []
    with harness.workspace(args) as tmp, harness.cold_cache(args.cold_cache) as cache:
        for name, overrides in runs.items():
            start = time.perf_counter()
            harness.run_stages(harness.compose(["target=asic", *overrides]), "report", tmp / name)
            wall = time.perf_counter() - start
            a = read_artifact(tmp / name, "sim/result.json").products["asic"]
            rows.append((name, a, wall))
            print(f"\n## {name}: {a['library']} ({a['node_nm']:g} nm), toggle rates {a['activity_source']}")
            print(f"{'class':40} {'area um2':>12} {'power mW':>10}")
            for c, v in sorted(a["area_um2"].items(), key=lambda kv: -kv[1]):
                print(f"{c:40} {v:>12,} {a['power_mw'].get(c, 0.0):>10,.1f}")
    print(f"\n{'design':22} {'mm2':>8} {'Fmax MHz':>9} {'before':>7} {'target':>7} {'mW@100MHz':>10} "
          f"{'mW@Fmax':>8} {'wall s':>7} {'mm2 @28nm':>10} {'mW @28nm':>9} {'seed mm2':>9} {'seed mW':>8} "
          f"{'logic mm2':>9}")
    table = []
    logic = {name: logic_mm2(a) for name, a, _ in rows}
    for name, a, wall in rows:
        s28 = next((x for x in a["scaled"] if x["node_nm"] == 28), {})
        seed = SEED.get(name)
        t = a["timing"]
        met = f"{t['target_mhz']:g} {'met' if t['met'] else 'missed'}"
        print(f"{name:22} {a['area_mm2']:>8.2f} {a['fmax_mhz']:>9.1f} {BEFORE.get(name, float('nan')):>7.1f} "
              f"{met:>7} {a['power_total_mw']:>10.0f} {a['power_at_achieved_mw']:>8.0f} {wall:>7.0f} "
              f"{s28.get('area_mm2', float('nan')):>10.2f} {s28.get('power_mw', float('nan')):>9.1f} "
              f"{seed[0] if seed else '':>9} {seed[1] if seed else '':>8} {logic_mm2(a):>9.2f}")
        table.append([name, round(a["area_mm2"], 2), round(a["fmax_mhz"], 1), BEFORE.get(name), met,
                      round(a["power_total_mw"]), round(a["power_at_achieved_mw"]), round(a["achieved_mhz"], 1),
                      round(wall), round(s28.get("area_mm2", float("nan")), 2),
                      round(s28.get("power_mw", float("nan")), 1), seed[0] if seed else None,
                      seed[1] if seed else None, round(logic[name], 2),
                      round(logic[name] / logic[BASE], 2) if BASE in logic else None])
        print("  worst paths: " + "; ".join(f"{p['from']} -> {p['to']} ({p['to_class']}, {p['delay_ns']:.2f} ns)"
                                             for p in t["paths"][:3]))
    note = ("Fmax from OpenSTA on the flattened netlist, the memory system included; 'before' is the figure issue 44 "
            "states for the flow before it; the 28 nm columns are classical scaling of our 180 nm figures at the "
            "same 100 MHz clock; the seed's power is at its own clock")
    print(f"({note})")
    figures = {"tables": [harness.table(
        "target=asic: area, Fmax (and before issue 44), power at 100 MHz and at the achieved clock (OSU 0.18 um), "
        "and scaled to 28 nm beside seed 004's",
        ["design", "mm²", "Fmax MHz", "Fmax before (MHz)", "clock target", "mW at 100 MHz", "mW at achieved clock",
         "achieved MHz", "wall s", "mm² at 28 nm", "mW at 28 nm", "mm² (paper)", "mW (paper)",
         "logic mm² (SRAM and tables out)", f"logic vs {BASE}"], table, note=note)],
        "paths": {name: a["timing"]["paths"] for name, a, _ in rows},
        "area_um2": {name: a["area_um2"] for name, a, _ in rows}}
    harness.write_results("asic", figures, quick=args.quick, out=args.out, argv=argv, cache=cache,
                          title="physical figures of generated accelerators (target=asic)",
                          paper={"source": "seed 004 fig. 6-1: LEGO-MNICOC with Gemmini's resources, TSMC 28 nm",
                                 "lego_mnicoc mm²": 1.76, "lego_mnicoc mW": 285.0})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
