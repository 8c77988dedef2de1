"""Post-route check of generated accelerators (issue 44): the array placed by graywolf and routed
by qrouter (Debian's qflow), its wires extracted and timed again by OpenSTA, beside its Fmax
before routing (the flow's wire-load model), with the wall times.

    python -m benchmarks.pnr [--quick] [--only NAME ...] [--cold-cache]

Needs ``apt-get install -y qflow``. Each design is built with ``target=asic target.pnr=true
target.scope=none`` (nothing simulated: Fmax does not depend on the toggle rates); the placed
module is the array (``lego_top``) with the SRAM banks' pins as I/O pins
(``lego_build.targets.pnr``). Issue 44's acceptance: post-route Fmax of the default 4x4 (or a 4x4
tile of ``gemmini_like``: its systolic array at 4 x 4, no PPU) within 15 % of its pre-route Fmax.
``--only``: those runs, the others' rows kept from the results file (each row names its commit).
``--quick``: a 2x2 array alone (no PPU) on a small GEMM. The build
times include the synthesis, which the netlist cache may hold (``--cold-cache``: a fresh one).
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/pnr.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.pnr)

import time

from benchmarks import harness
from lego_build.runtime.artifacts import read_artifact

BASE = ["target=asic", "target.pnr=true", "target.scope=none"]
RUNS = {"default-4x4": [],
        "gemmini_like-4x4-tile": ["arch=gemmini_like", "arch.rows=4", "arch.cols=4", "arch.ppu=false",
                                  "target.asic_top=array"]}
QUICK = {"array-2x2": ["target.asic_top=array", "arch.ppu=false", "arch.rows=2", "arch.cols=2", "workload.M=4",
                       "workload.N=4", "workload.K=4"]}
WITHIN = 0.15  # the acceptance: post-route Fmax at least 85 % of pre-route


def row(name: str, a: dict, wall: float) -> list:
    """The table row of run ``name`` from its ``products["asic"]`` record ``a``."""
    p = a["pnr"]
    return [name, p["module"], p["cells"], p["io_pins"], f"{p['die_um'][0]} x {p['die_um'][1]}", p["wirelength_mm"],
            p["wire_pf"], p["failed_routes"], p["pre_mhz"], p["post_mhz"], p["ratio"], p["ratio"] >= 1 - WITHIN,
            p["place_s"], p["route_s"], p["seconds"], round(wall), a["fmax_mhz"], harness.commit()[:7]]


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), help="runs to do (default: all)")
    harness.cache_option(ap)
    args = ap.parse_args(argv)
    runs = QUICK if args.quick else {k: RUNS[k] for k in (args.only or RUNS)}
    path = harness.results_path("pnr", args.out)
    kept = {} if args.quick or not args.only or not path.is_file() else harness.read_results(path)["figures"]
    rows = {r[0]: r for r in (kept.get("tables") or [{"rows": []}])[0]["rows"] if r[0] in RUNS}
    paths = {k: v for k, v in kept.get("paths", {}).items() if k in rows}
    with harness.workspace(args) as tmp, harness.cold_cache(args.cold_cache) as cache:
        for name, overrides in runs.items():
            start = time.perf_counter()
            harness.run_stages(harness.compose([*BASE, *overrides]), "report", tmp / name)
            wall = time.perf_counter() - start
            a = read_artifact(tmp / name, "sim/result.json").products["asic"]
            p = a["pnr"]
            rows[name] = row(name, a, wall)
            paths[name] = {"pre": p["pre_paths"], "post": p["post_paths"]}
            print(f"{name}: {p['module']} {p['cells']:,} cells, {p['wirelength_mm']} mm of wire, "
                  f"{p['failed_routes']} failed routes; Fmax {p['pre_mhz']} MHz before routing, {p['post_mhz']} "
                  f"after ({p['ratio']:.1%}); place {p['place_s']} s, route {p['route_s']} s, build {wall:.0f} s")
            for when in ("pre", "post"):
                w = p[f"{when}_paths"][0]
                print(f"  worst path {when}-route: {w['from']} -> {w['to']} ({w['to_class']}), {w['delay_ns']:.2f} ns")
    note = ("pre-route: OpenSTA on the placed netlist with the flow's wire-load model (the flow's own Fmax when the "
            "array is the synthesised top); post-route: the same with qrouter's extracted RC (SPEF), the clock ideal; "
            "'design Fmax' is the flow's figure for the synthesised top (the memory system included)")
    figures = {"tables": [harness.table(
        "target.pnr: the array placed (graywolf) and routed (qrouter), Fmax before and after routing (OSU 0.18 um)",
        ["design", "placed", "cells", "I/O pins", "die (um)", "wire (mm)", "wire (pF)", "failed routes",
         "pre-route MHz", "post-route MHz", "post / pre", "within 15 %", "place s", "route s", "pnr s", "build s",
         "design Fmax MHz", "commit"], [rows[k] for k in sorted(rows)], note=note)],
        "paths": {k: paths[k] for k in sorted(paths)}}
    harness.write_results("pnr", figures, quick=args.quick, out=path, argv=argv, cache=cache,
                          title="post-route Fmax of the generated array (target.pnr)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
