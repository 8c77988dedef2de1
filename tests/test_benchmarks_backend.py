"""benchmarks/backend.py: optimizer=delay_only against optimizer=lego in physical units (a 2x2 GEMM
array with --quick)."""
import json
import shutil

import pytest

from benchmarks import backend

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (shutil.which("sta") and shutil.which("yosys")),
                                                   reason="needs Debian's qflow (apt-get install -y qflow)")]


def test_quick_run_records_both_optimizers(tmp_path):
    assert backend.main(["--quick", "--jobs", "2", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    (row,) = doc["figures"]["tables"][0]["rows"]
    assert row[0] == "GEMM 2x2" and row[7] > 0 and row[8] > 0
    assert "area saving, average (max)" in doc["figures"]["headline"]
