"""benchmarks/asic.py: target=asic's figures and their 28 nm scaling beside seed 004's (a 2x2 array with --quick)."""
import json
import shutil

import pytest

from benchmarks import asic

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (shutil.which("sta") and shutil.which("yosys")),
                                                   reason="needs Debian's qflow (apt-get install -y qflow)")]


def test_quick_run_records_area_power_and_scaling(tmp_path):
    assert asic.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    (row,) = doc["figures"]["tables"][0]["rows"]
    assert row[0] == "array-2x2" and row[1] > 0 and row[9] < row[1] and doc["paper"]["lego_mnicoc mm²"] == 1.76
    assert row[2] != 100.0 and row[3] == 100.0  # Fmax no longer reads the probe clock (clamped before issue 44)
    assert doc["figures"]["paths"]["array-2x2"][0]["delay_ns"] > 0
