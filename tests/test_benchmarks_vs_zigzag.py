"""benchmarks/vs_zigzag.py: the hardware both tools describe, checked field by field from our config,
and our side as the benchmark times it (a whole ``doit map`` process on zigzag-dse's ResNet-18 ONNX
file, stock eyeriss_like hardware); ZigZag's own run (about 100 CPU s) is left to the benchmark."""
import importlib.util
import json

import pytest

from lego_build import compose
from lego_build.analysis.networks import network

if importlib.util.find_spec("zigzag") is None:
    pytest.skip("zigzag-dse is not installed (pip install -e '.[dev]'): it ships the hardware and ONNX files",
                allow_module_level=True)

from benchmarks import vs_zigzag  # noqa: E402


def test_zigzags_hardware_file_is_our_config_field_by_field():
    arch = compose(["arch=zigzag_eyeriss_like"]).arch
    rows = vs_zigzag.hardware_check(arch, {"I": 8, "W": 8, "O": 16})
    assert [r for r in rows if not r["same"]] == []
    assert len(rows) == 55  # 7 memories x 7 fields, the level names, MAC, hops, the array, two precisions
    other = compose(["arch=zigzag_eyeriss_like", "arch.acc_bits=24"]).arch
    assert [r["field"] for r in vs_zigzag.hardware_check(other, {"I": 8, "W": 8, "O": 16}) if not r["same"]] == [
        "partial sum bits"]


def test_our_side_is_a_whole_doit_map_process_on_every_layer_of_the_onnx_file(tmp_path):
    out = tmp_path / "vs_zigzag.json"
    assert vs_zigzag.main(["--quick", "--skip-zigzag", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    ours = doc["figures"]["ours"]
    assert doc["quick"] and doc["peer"] is None and doc["machine"]["cpus"] >= 1
    assert ours["layers"] == 21  # 20 convs and the fc, none unmappable (our_levels exits otherwise)
    assert ours["whole_process"]["repeats"] == 1 and ours["whole_process"]["cpu_s"] > 0.5  # imports included
    assert sum(ours["levels_pj"].values()) == pytest.approx(ours["energy_pj"], rel=1e-9)
    arch = compose(["arch=zigzag_eyeriss_like"]).arch
    macs = sum(ly.kernel.macs for ly in network("resnet18") if ly.kernel is not None)  # the preset's
    assert ours["levels_pj"]["mac"] == pytest.approx(macs * arch.energy.mac_pj, rel=1e-6)  # the file's MACs
    assert ours["latency_cycles"] >= macs / (arch.rows * arch.cols)  # no faster than every PE busy
