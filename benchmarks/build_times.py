"""Wall time of the incremental build: first build, no-op rebuild, and partial rebuilds.

    python -m benchmarks.build_times [--quick] [overrides ...]

Runs ``doit build`` processes in a temporary project (a copy of dodo.py) and records one row per
step with the tasks that actually ran. Target: a no-op rebuild under 2 s. The cache root is a fresh
one: the first build's simulate stage builds its Verilator model (cold cache); a last step builds
the same design in a second project with that cache (warm). ``--quick``: ``doit map`` instead of
``doit build`` (no RTL), the first build and a no-op rebuild.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/build_times.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.build_times)

import shutil
import subprocess
import sys
import time

from benchmarks import harness

STEPS = (
    ("first build", []),
    ("no-op rebuild", []),
    ("target.seed changed", ["target.seed=2"]),
    ("mapper.objective changed", ["target.seed=2", "mapper.objective=latency"]),
    ("no-op rebuild", ["target.seed=2", "mapper.objective=latency"]),
    ("first build, another project (warm cache)", []),
)
TARGET_S = 2.0


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("overrides", nargs="*", help="Hydra overrides given to every step")
    args = ap.parse_args(argv)
    task = "map" if args.quick else "build"
    rows = []
    with harness.workspace(args) as work, harness.cold_cache():
        for label, overrides in STEPS[:2] if args.quick else STEPS:
            project = work / ("b" if "another project" in label else "a")
            project.mkdir(exist_ok=True)
            shutil.copy(harness.ROOT / "dodo.py", project / "dodo.py")
            cmd = [sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), task, *args.overrides, *overrides]
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                print(proc.stdout, proc.stderr, sep="\n")
                return proc.returncode
            ran = [ln[3:].split(":")[0] for ln in proc.stdout.splitlines() if ln.startswith(".  ")]
            rows.append([label + (" (cold cache)" if not rows else ""), round(seconds, 2), ", ".join(ran) or "-"])
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  {'seconds':>8}  tasks run")
    for label, seconds, ran in rows:
        print(f"{label:<{width}}  {seconds:8.2f}  {ran}")
    noop = max(r[1] for r in rows if r[0] == "no-op rebuild")
    figures = {"headline": {"slowest no-op rebuild (s)": noop, "target (s)": TARGET_S},
               "tables": [harness.table(f"doit {task} {' '.join(args.overrides)}".strip() + ", step by step",
                                        ["step", "seconds", "tasks run"], rows)]}
    harness.write_results("build_times", figures, quick=args.quick, out=args.out, argv=argv,
                          cache="n/a" if args.quick else "cold",
                          notes="" if args.quick else "A fresh cache root: the first build is cold, the last step "
                          "builds the same design in another project with the cache the first filled (warm).",
                          title="first build, no-op and partial rebuilds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
