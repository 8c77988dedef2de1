"""benchmarks/artifacts.py: the default design's artifacts identical to the stored manifest (--quick)."""
import json

import pytest

from benchmarks import artifacts


@pytest.mark.slow
def test_quick_run_finds_the_default_designs_verilog_identical(tmp_path):
    """The Verilog must not change; other artifacts may have moved since the manifest was stored
    (``python -m benchmarks.artifacts --write`` after a change meant to alter them)."""
    artifacts.main(["--quick", "--out", str(tmp_path / "r.json")])
    doc = json.loads((tmp_path / "r.json").read_text())
    (row,) = doc["figures"]["tables"][0]["rows"]
    assert row[0] == "default" and row[1] > 0 and row[4] == 0
    assert doc["figures"]["headline"]["every Verilog file identical to the manifest"] is True
