"""benchmarks/analyze_times.py: one doit analyze process per network (LeNet-5 with --quick)."""
import json

from benchmarks import analyze_times


def test_quick_run_times_a_doit_analyze_process(tmp_path):
    assert analyze_times.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    (row,) = json.loads((tmp_path / "r.json").read_text())["figures"]["tables"][0]["rows"]
    assert row[0] == "lenet" and row[1] > 0 and row[2] >= row[3] > 0
