"""Wall time of the incremental build: first build, no-op rebuild, and partial rebuilds.

    python benchmarks/build_times.py [extra overrides ...]

Runs doit in a temporary project (a copy of dodo.py) and prints one row per step
with the tasks that actually ran. Target: a no-op rebuild under 2 s.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STEPS = (
    ("first build", []),
    ("no-op rebuild", []),
    ("target.seed changed", ["target.seed=2"]),
    ("mapper.objective changed", ["target.seed=2", "mapper.objective=latency"]),
    ("no-op rebuild", ["target.seed=2", "mapper.objective=latency"]),
)


def main(extra: list[str]) -> int:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copy(REPO / "dodo.py", project / "dodo.py")
        for label, overrides in STEPS:
            cmd = [sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), "build", *extra, *overrides]
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                print(proc.stdout, proc.stderr, sep="\n")
                return proc.returncode
            ran = [ln[3:].split(":")[0] for ln in proc.stdout.splitlines() if ln.startswith(".  ")]
            rows.append((label, seconds, ", ".join(ran) or "-"))
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  {'seconds':>8}  tasks run")
    for label, seconds, ran in rows:
        print(f"{label:<{width}}  {seconds:8.2f}  {ran}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
