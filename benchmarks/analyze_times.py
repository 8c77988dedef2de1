"""Wall time of ``doit analyze`` for every built-in network (issue target: llama7b under 5 s).

    python -m benchmarks.analyze_times [--quick]

Each row is one fresh ``doit analyze workload=<preset>`` process in a temporary project (a copy of
``dodo.py``), including Python start-up, config composition and the analysis itself: the time a
user waits. ``--quick``: LeNet-5 only.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/analyze_times.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.analyze_times)

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import harness

PRESETS = ["lenet", "alexnet", "vgg16", "resnet18", "resnet50", "mobilenetv2", "efficientnetv2", "squeezenet",
           "inceptionv3", "bert", "gpt2", "llama7b", "deepbench", "coatnet", "ddpm", "stable_diffusion"]
QUICK = ["lenet"]
TARGET = ("llama7b", 5.0)


def doit_analyze(preset: str, project: Path) -> tuple[float, dict]:
    """One ``doit analyze workload=<preset>`` process: its wall time and ``analysis.json``."""
    shutil.copy(harness.ROOT / "dodo.py", project / "dodo.py")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), "analyze",
                           f"workload={preset}"], cwd=project, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"doit analyze workload={preset} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return seconds, json.loads(next((project / "out").glob("*/analysis.json")).read_text())


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__).parse_args(argv)
    rows = []
    print(f"{'preset':<16} {'seconds':>8} {'layers':>7} {'array':>6} {'GMACs':>9}")
    with harness.workspace(args) as work:
        for preset in QUICK if args.quick else PRESETS:
            (work / preset).mkdir()
            seconds, doc = doit_analyze(preset, work / preset)
            row = [preset, round(seconds, 2), len(doc["layers"]), doc["totals"]["array_layers"],
                   round(doc["totals"]["macs"] / 1e9, 3)]
            rows.append(row)
            print(f"{row[0]:<16} {row[1]:8.2f} {row[2]:7d} {row[3]:6d} {row[4]:9.3f}")
    headline = {f"{r[0]} (s)": r[1] for r in rows if r[0] == TARGET[0]} | {f"target for {TARGET[0]} (s)": TARGET[1]}
    figures = {"headline": headline, "tables": [harness.table(
        "one doit analyze process per built-in network", ["workload", "seconds", "layers", "array layers", "GMACs"],
        rows)]}
    harness.write_results("analyze_times", figures, quick=args.quick, out=args.out, argv=argv,
                          title="wall time of doit analyze per built-in network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
