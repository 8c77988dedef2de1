"""benchmarks/model_check.py: the cost model's energy per level against the standard-cell flow's
(the 2x2 array with --quick), beside seed 001's table."""
import json
import shutil

import pytest

from benchmarks import model_check

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (shutil.which("sta") and shutil.which("yosys")),
                                                   reason="needs Debian's qflow (apt-get install -y qflow)")]


def test_quick_run_compares_every_level(tmp_path):
    assert model_check.main(["--quick", "--jobs", "1", "--out", str(tmp_path / "r.json")]) == 0
    levels, calibrated = json.loads((tmp_path / "r.json").read_text())["figures"]["tables"]
    assert {r[1] for r in levels["rows"]} >= {"mac", "l1"} and all(r[3] > 0 for r in levels["rows"])
    assert calibrated["rows"][0] == ["seed 001 Table 5.2 (paper)", 0.075, 0.035, 6.0]
