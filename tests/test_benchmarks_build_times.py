"""benchmarks/build_times.py: doit processes in a temporary project; a no-op rebuild runs no task."""
import json

import pytest

from benchmarks import build_times


@pytest.mark.slow
def test_quick_run_records_a_noop_rebuild(tmp_path):
    assert build_times.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    rows = json.loads((tmp_path / "r.json").read_text())["figures"]["tables"][0]["rows"]
    assert rows[0][2] == "analyze, graph, optimize, map" and rows[1][0] == "no-op rebuild" and rows[1][2] == "-"
