"""benchmarks/frontend.py: the graph stage timed on each design (the conv2d-family presets lower the
workload's kernel, as the graph stage does)."""
import json

from benchmarks import frontend


def test_quick_run_records_every_design(tmp_path):
    assert frontend.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    (t,) = doc["figures"]["tables"]
    assert doc["quick"] and [r[1] for r in t["rows"]] == [3, 1, 3] and all(r[2] == 16 and r[4] > 0 for r in t["rows"])
