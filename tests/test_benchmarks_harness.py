"""benchmarks/harness.py and the package's rules: every benchmark runs through the harness, by its
module or its path, writes its results file, and has a test of its own (so none can rot)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import harness

BENCH = Path(harness.__file__).parent
#: modules of the package that are not benchmarks
SUPPORT = {"__init__", "_script", "harness", "docs", "rtml_paper", "zigzag_side", "accelforge_side", "peers"}
BENCHMARKS = sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in SUPPORT)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_each_benchmark_uses_the_harness_and_has_a_test(name):
    text = (BENCH / f"{name}.py").read_text()
    assert "sys.path" not in text, f"{name}: no sys.path edits (import benchmarks.<module>)"
    assert f'if __name__ == "__main__" and not __package__:  # python benchmarks/{name}.py' in text
    assert "harness.parser(" in text and "harness.write_results(" in text, name
    assert (Path(__file__).parent / f"test_benchmarks_{name}.py").is_file(), f"{name}: no test file of its own"


def test_write_results_records_where_and_how(tmp_path):
    path = harness.write_results("demo", {"headline": {"x": 1.5}, "tables": [harness.table("t", ["a"], [[1]])]},
                                 paper={"source": "seed 004 Table 6.1", "x": 2.0}, cache="cold",
                                 argv=["--quick"], quick=True, out=tmp_path / "demo.json")
    doc = json.loads(path.read_text())
    assert doc["command"] == "python -m benchmarks.demo --quick" and doc["quick"] is True
    assert doc["machine"]["cpus"] >= 1 and doc["machine"]["python"] and doc["date"] and doc["cache"] == "cold"
    assert doc["paper"]["source"] == "seed 004 Table 6.1" and doc["figures"]["headline"] == {"x": 1.5}
    with pytest.raises(ValueError, match="source"):
        harness.write_results("demo", {}, peer={"x": 1}, out=tmp_path / "x.json")


def test_run_stages_stops_after_the_stage_asked(tmp_path):
    cfg = harness.compose(["workload=gemm", "workload.M=4", "workload.N=4", "workload.K=4"])
    harness.run_stages(cfg, "graph", tmp_path)
    assert (tmp_path / "adg.json").is_file() and not (tmp_path / "dag.json").exists()


def test_a_benchmark_runs_by_its_path_as_by_its_module():
    """``python benchmarks/<name>.py`` re-runs itself as ``python -m benchmarks.<name>`` (no sys.path edits)."""
    proc = subprocess.run([sys.executable, str(BENCH / "docs.py"), "--help"], capture_output=True, text=True,
                          cwd=BENCH.parent.parent)
    assert proc.returncode == 0 and "docs/benchmarks.md" in proc.stdout, proc.stderr
