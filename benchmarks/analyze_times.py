"""Wall time of ``doit analyze`` for every built-in network (issue target: llama7b under 5 s).

    python benchmarks/analyze_times.py

Each row is one fresh ``doit analyze workload=<preset>`` in a temporary project,
including Python start-up, config composition and the analysis itself.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PRESETS = ["lenet", "alexnet", "vgg16", "resnet18", "resnet50", "mobilenetv2", "efficientnetv2", "squeezenet",
           "inceptionv3", "bert", "gpt2", "llama7b", "deepbench", "coatnet", "ddpm", "stable_diffusion"]


def main() -> int:
    print(f"{'preset':<12} {'seconds':>8} {'layers':>7} {'array':>6} {'GMACs':>9}")
    for preset in PRESETS:
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp)
            shutil.copy(REPO / "dodo.py", project / "dodo.py")
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), "analyze",
                                   f"workload={preset}"], cwd=project, capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                print(proc.stdout, proc.stderr)
                return proc.returncode
            doc = json.loads(next((project / "out").glob("*/analysis.json")).read_text())
            print(f"{preset:<12} {seconds:8.2f} {len(doc['layers']):7d} {doc['totals']['array_layers']:6d} "
                  f"{doc['totals']['macs'] / 1e9:9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
