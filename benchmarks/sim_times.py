"""Wall time of the ``simulate`` stage: Verilator build + run of every representative tile.

    python -m benchmarks.sim_times [--quick] [--cold-cache] [extra overrides ...]

For each design, runs the stages up to emit in a temporary
directory, then times ``simulate`` alone (``-Wall`` lint, one Verilator build, one
process running a tile of each kind of layer back to back). Prints one row per
design: the tiles simulated (their kinds), outputs checked against the NumPy
golden model, mismatches, whether every tile's simulated cycle count equals the
predicted one, and the seconds taken.
Target: ``arch=eyeriss workload=resnet50`` under 90 s on 2 cores. The Verilator build is
cached by content: ``--cold-cache`` times it with a fresh cache root, else the user's (as found).
``--quick``: the default design alone.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/sim_times.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.sim_times)

import sys
import time
from pathlib import Path

from benchmarks import harness
from lego_build import ConfigError, StageError
from lego_build.runtime.atomic import read_json

DESIGNS = (
    (["arch=eyeriss", "workload=resnet50"], 90.0),
    (["arch=nvdla", "workload=resnet50"], None),
    (["arch=shidiannao", "workload=mobilenetv2"], None),
    (["arch=lego_mnicoc", "workload=mobilenetv2"], None),
    (["arch=systolic", "workload=bert"], None),
)
QUICK = (([], None),)
BEFORE = ("analyze", "graph", "optimize", "map", "emit")


def measure(overrides: list[str], work: Path) -> tuple[dict, float, str]:
    """``sim/result.json``, the seconds ``simulate`` took, and its error ("" when it passed)."""
    cfg = harness.compose(overrides)
    harness.run_stages(cfg, "emit", work)
    start = time.perf_counter()
    error = ""
    try:
        harness.run_stages(cfg, "simulate", work, skip=BEFORE)
    except StageError as exc:  # a failing tile still leaves sim/result.json behind
        error = str(exc)
    seconds = time.perf_counter() - start
    result_file = work / "sim" / "result.json"
    if not result_file.exists():
        raise StageError(error or "simulate wrote no sim/result.json")
    return read_json(result_file), seconds, error


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("overrides", nargs="*", help="Hydra overrides added to every design")
    harness.cache_option(ap)
    args = ap.parse_args(argv)
    extra = args.overrides
    rows, notes = [], []
    with harness.workspace(args) as tmp, harness.cold_cache(args.cold_cache) as cache:
        for i, (overrides, target) in enumerate(QUICK if args.quick else DESIGNS):
            design = " ".join(overrides) or "(default)"
            try:
                result, seconds, error = measure([*overrides, *extra], Path(tmp) / str(i))
            except (StageError, ConfigError) as exc:
                notes.append(f"{design}: n/a: {exc}")
                continue
            tiles = result.get("tiles", [])
            kinds = ", ".join(t["kind"] for t in tiles) or result.get("status", "-")
            same = all(t["cycles_simulated"] == t["cycles_predicted"] for t in tiles) if tiles else False
            limit = f"{target:.0f}" if target else "-"
            rows.append((design, f"{len(tiles)} ({kinds})", sum(t["outputs"] for t in tiles),
                         sum(t["mismatches"] for t in tiles), "yes" if same else "no", round(seconds, 1), limit))
            if error:
                notes.append(f"{design}: {error}")
    header = ("design", "tiles (kinds)", "outputs", "mismatches", "sim==pred", "seconds", "target")
    w0 = max([len(header[0])] + [len(r[0]) for r in rows])
    w1 = max([len(header[1])] + [len(r[1]) for r in rows])
    print(f"{header[0]:<{w0}}  {header[1]:<{w1}}  {header[2]:>7}  {header[3]:>10}  {header[4]:>9}  "
          f"{header[5]:>7}  {header[6]:>6}")
    for design, tiles, outputs, mismatches, same, seconds, limit in rows:
        print(f"{design:<{w0}}  {tiles:<{w1}}  {outputs:>7}  {mismatches:>10}  {same:>9}  {seconds:7.1f}  {limit:>6}")
    for note in notes:
        print(note)
    figures = {"tables": [harness.table("the simulate stage alone (lint, Verilator build, one run of every tile kind)",
                                        list(header), [list(r) for r in rows], note="; ".join(notes))]}
    harness.write_results("sim_times", figures, quick=args.quick, out=args.out, argv=argv, cache=cache,
                          title="wall time of the simulate stage")
    return 1 if notes else 0


if __name__ == "__main__":
    sys.exit(main())
