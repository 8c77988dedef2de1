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


def test_only_reruns_the_named_design_and_keeps_the_others_rows(tmp_path, monkeypatch):
    """``--only``: the default 4x4 takes hours to route, so a run of the tile alone keeps its row."""
    from types import SimpleNamespace

    path = tmp_path / "pnr.json"
    record = {"fmax_mhz": 210.0, "pnr": {
        "module": "lego_top", "cells": 9000, "io_pins": 800, "die_um": [600, 500], "wirelength_mm": 40.0,
        "wire_pf": 90.0, "failed_routes": 0, "pre_mhz": 220.0, "post_mhz": 200.0, "ratio": 0.9091,
        "place_s": 60, "route_s": 300, "seconds": 400,
        "pre_paths": [{"delay_ns": 4.5, "from": "a", "to": "b", "to_class": "FUs"}],
        "post_paths": [{"delay_ns": 5.0, "from": "a", "to": "b", "to_class": "FUs"}]}}
    monkeypatch.setattr(pnr.harness, "run_stages", lambda *a, **k: None)
    monkeypatch.setattr(pnr, "read_artifact", lambda *a: SimpleNamespace(products={"asic": record}))
    assert pnr.main(["--only", "default-4x4", "--out", str(path)]) == 0
    record["pnr"]["post_mhz"], record["pnr"]["ratio"] = 150.0, 0.6818
    assert pnr.main(["--only", "gemmini_like-4x4-tile", "--out", str(path)]) == 0
    table = json.loads(path.read_text())["figures"]["tables"][0]
    rows = {r[0]: dict(zip(table["columns"], r)) for r in table["rows"]}
    assert sorted(rows) == ["default-4x4", "gemmini_like-4x4-tile"]
    assert rows["default-4x4"]["post-route MHz"] == 200.0 and rows["default-4x4"]["within 15 %"]
    assert rows["gemmini_like-4x4-tile"]["post-route MHz"] == 150.0 and not rows["gemmini_like-4x4-tile"]["within 15 %"]
    assert sorted(json.loads(path.read_text())["figures"]["paths"]) == sorted(rows)
