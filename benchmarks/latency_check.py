"""The latency model against the RTL on randomised combinations (issue 42): more of them than the
test suite runs, with their distribution, written as data.

    python -m benchmarks.latency_check [--quick] [--combos N] [--seed S] [--only PRESET ...] [--out FILE]

Each combination (:mod:`lego_build.flow.latency_check`: a small variant of a preset, a real or
random small layer, a mapper objective, a DRAM bandwidth and latency) is built through the
stages and run whole through the generated memory system in Verilator, every output element
compared; per combination the measured cycles, the model's prediction and its error. The
summary gives the error's distribution (median, 90th and 99th percentile, worst) and the
error on the sum, beside the goal the specification sets (within 2 %, as Interstellar reports
against synthesis, seed 001) and the test suite's bounds (10 % per layer, 2 % on the sum).
Results go to ``benchmarks/results/latency_check.json``. ``--quick``: two combinations.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/latency_check.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.latency_check)

import contextlib
import io
import sys
import time

import numpy as np

from benchmarks import harness
from lego_build.flow.latency_check import PRESETS, combinations, run

GOAL = {"source": "SPEC.md §5 (Interstellar, seed 001: < 2 % against synthesis)", "per-layer error": "2 %"}


def summary(rows: list[dict]) -> dict:
    errors = np.abs([r["error"] for r in rows])
    measured, predicted = sum(r["cycles"] for r in rows), sum(r["cycles_predicted"] for r in rows)
    return {"combos": len(rows), "mismatches": sum(r["mismatches"] for r in rows),
            "median_error": round(float(np.median(errors)), 4),
            "p90_error": round(float(np.percentile(errors, 90)), 4),
            "p99_error": round(float(np.percentile(errors, 99)), 4),
            "worst_error": round(float(errors.max()), 4),
            "within_2pct": int((errors <= 0.02).sum()), "within_10pct": int((errors <= 0.10).sum()),
            "sum_error": round((predicted - measured) / measured, 4)}


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--combos", type=int, default=180, help="combinations to run (default 180)")
    ap.add_argument("--only", nargs="*", choices=sorted(PRESETS), help="presets to draw from (default: all)")
    args = ap.parse_args(argv)
    combos = combinations(2 if args.quick else args.combos, args.seed, tuple(args.only or PRESETS))
    start = time.perf_counter()

    def progress(row: dict) -> None:
        print(f"[{len(done) + 1}/{len(combos)}] {row['cycles']:>9,} measured {row['cycles_predicted']:>9,} "
              f"predicted {row['error']:+7.2%}  {row['combo']}", file=sys.stderr, flush=True)
        done.append(row)

    done: list[dict] = []
    with harness.workspace(args) as tmp, contextlib.redirect_stdout(io.StringIO()):  # one progress line per combination
        rows = run(combos, tmp, progress)
    wall = time.perf_counter() - start
    s = summary(rows)
    print(f"\n{s['combos']} combinations, {s['mismatches']} mismatched outputs; |error| median "
          f"{s['median_error']:.2%}, "
          f"90th percentile {s['p90_error']:.2%}, 99th {s['p99_error']:.2%}, worst {s['worst_error']:.2%}; "
          f"{s['within_2pct']} within 2 % (the specification's goal), {s['within_10pct']} within 10 % (the test "
          f"suite's bound); on the sum {s['sum_error']:+.2%}; {wall:.0f} s")
    write(s, rows, args.seed, sorted(args.only or PRESETS), round(wall, 1), args.quick, args.out, argv)
    return 0 if s["mismatches"] == 0 else 1


def write(s: dict, rows: list[dict], seed: int, presets: list[str], wall: float, quick: bool, out, argv, notes="",
          provenance: dict | None = None):
    headline = {"combinations": s["combos"], "mismatched outputs": s["mismatches"],
                "|error| median": f"{s['median_error']:.2%}", "|error| 90th percentile": f"{s['p90_error']:.2%}",
                "|error| worst": f"{s['worst_error']:.2%}", "within 2 %": s["within_2pct"],
                "within 10 % (the test suite's bound)": s["within_10pct"], "error on the sum": f"{s['sum_error']:+.2%}",
                "wall (s)": wall}
    return harness.write_results("latency_check", {"headline": headline, "summary": s, "seed": seed,
                                                   "presets": presets, "rows": rows},
                                 paper=GOAL, quick=quick, out=out, argv=argv, notes=notes, provenance=provenance,
                                 title="the latency model against the RTL on randomised combinations")


if __name__ == "__main__":
    sys.exit(main())
