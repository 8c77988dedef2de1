"""benchmarks/latency_check.py: the latency model against the RTL on two random combinations (--quick)."""
import json

import pytest

from benchmarks import latency_check


@pytest.mark.slow
def test_quick_run_summarises_the_error(tmp_path):
    assert latency_check.main(["--quick", "--seed", "3", "--only", "systolic", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["quick"] and doc["figures"]["summary"]["combos"] == 2 and doc["figures"]["summary"]["mismatches"] == 0
    assert doc["paper"]["source"].startswith("SPEC.md")
