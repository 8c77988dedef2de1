"""benchmarks/sim_times.py: the simulate stage timed alone (the default design with --quick)."""
import json

import pytest

from benchmarks import sim_times


@pytest.mark.slow
def test_quick_run_times_the_simulate_stage(tmp_path):
    assert sim_times.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    (row,) = doc["figures"]["tables"][0]["rows"]
    assert row[0] == "(default)" and row[3] == 0 and row[4] == "yes" and doc["cache"] == "as found"
