"""benchmarks/pnr.py: the array placed and routed, Fmax before and after routing (a 2x2 array with --quick)."""
import json
import shutil

import pytest

from benchmarks import pnr
from lego_build.targets import pnr as place_and_route

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("sta", "yosys", "graywolf", "qrouter", "tclsh")),
    reason="needs Debian's qflow (apt-get install -y qflow)")]


def test_quick_run_records_pre_and_post_route_fmax(tmp_path, monkeypatch):
    """The quick design's multiplier placed rather than its array (seconds, not eight minutes)."""
    monkeypatch.setattr(place_and_route, "PLACED", "lego_mul_8x8_16")
    assert pnr.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    table = doc["figures"]["tables"][0]
    row = dict(zip(table["columns"], table["rows"][0]))
    assert row["design"] == "array-2x2" and row["placed"] == "lego_mul_8x8_16" and row["failed routes"] == 0
    assert 0 < row["post-route MHz"] < row["pre-route MHz"] and row["design Fmax MHz"] > 0
    assert row["post / pre"] == round(row["post-route MHz"] / row["pre-route MHz"], 4) and row["within 15 %"]
    assert doc["figures"]["paths"]["array-2x2"]["post"][0]["delay_ns"] > 0
