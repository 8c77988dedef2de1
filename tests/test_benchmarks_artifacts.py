"""benchmarks/artifacts.py: the default design's artifacts identical to the stored manifest (--quick)."""
import json

import pytest

from benchmarks import artifacts


@pytest.mark.slow
def test_quick_run_finds_the_default_design_identical(tmp_path):
    assert artifacts.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    (row,) = doc["figures"]["tables"][0]["rows"]
    assert row[0] == "default" and row[1] == row[2] > 0 and doc["figures"]["headline"] == {
        "every artifact identical to the manifest": True}
