"""The latency model against the RTL on randomised combinations (issue 42): more of them than the
test suite runs, with their distribution, written as data.

    python benchmarks/latency_check.py [--combos N] [--seed S] [--only PRESET ...] [--out FILE]

Each combination (:mod:`lego_build.flow.latency_check`: a small variant of a preset, a real or
random small layer, a mapper objective, a DRAM bandwidth and latency) is built through the
stages and run whole through the generated memory system in Verilator, every output element
compared; per combination the measured cycles, the model's prediction and its error. The
summary gives the error's distribution (median, 90th and 99th percentile, worst) and the
error on the sum, beside the goal the specification sets (within 2 %, as Interstellar reports
against synthesis, seed 001) and the test suite's bounds (10 % per layer, 2 % on the sum).
Results go to ``benchmarks/results/latency_check.json`` (one record per run of this script).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lego_build.flow.latency_check import PRESETS, combinations, run

RESULTS = Path(__file__).resolve().parent / "results" / "latency_check.json"


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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--combos", type=int, default=180, help="combinations to run (default 180)")
    ap.add_argument("--seed", type=int, default=1, help="the draw's seed (the test suite uses 42)")
    ap.add_argument("--only", nargs="*", choices=sorted(PRESETS), help="presets to draw from (default: all)")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS.name})")
    args = ap.parse_args(argv)
    combos = combinations(args.combos, args.seed, tuple(args.only or PRESETS))
    start = time.perf_counter()

    def progress(row: dict) -> None:
        print(f"[{len(done) + 1}/{len(combos)}] {row['cycles']:>9,} measured {row['cycles_predicted']:>9,} "
              f"predicted {row['error']:+7.2%}  {row['combo']}", file=sys.stderr, flush=True)
        done.append(row)

    done: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="lego_build-latency-check-") as tmp, \
            contextlib.redirect_stdout(io.StringIO()):  # the stages' own lines: one progress line per combination
        rows = run(combos, Path(tmp), progress)
    wall = time.perf_counter() - start
    s = summary(rows)
    print(f"\n{s['combos']} combinations, {s['mismatches']} mismatched outputs; |error| median {s['median_error']:.2%}, "
          f"90th percentile {s['p90_error']:.2%}, 99th {s['p99_error']:.2%}, worst {s['worst_error']:.2%}; "
          f"{s['within_2pct']} within 2 % (the specification's goal), {s['within_10pct']} within 10 % (the test "
          f"suite's bound); on the sum {s['sum_error']:+.2%}; {wall:.0f} s")
    record = {"seed": args.seed, "presets": sorted(args.only or PRESETS), "wall_s": round(wall, 1), "summary": s,
              "goal": {"per_layer": 0.02, "source": "SPEC.md §5 (Interstellar, seed 001: < 2 % against synthesis)"},
              "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    records = json.loads(args.out.read_text()) if args.out.is_file() else []
    records.append(record)
    args.out.write_text(json.dumps(records, indent=1) + "\n")
    print(f"results: {args.out}")
    return 0 if s["mismatches"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
