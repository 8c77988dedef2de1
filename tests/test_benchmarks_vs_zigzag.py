"""benchmarks/vs_zigzag.py: our side maps zigzag-dse's ResNet-18 ONNX file on the stock eyeriss_like
hardware through the product's stages (the benchmark broke silently when the map stage began to
read the generated array)."""
import importlib.util
import sys
from pathlib import Path

import pytest

from lego_build import compose
from lego_build.analysis.networks import network

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

if importlib.util.find_spec("zigzag") is None:
    pytest.skip("zigzag-dse is not installed (pip install -e '.[dev]'): it ships the ONNX file",
                allow_module_level=True)

import vs_zigzag  # noqa: E402


def test_our_side_maps_every_resnet18_layer_of_the_onnx_file():
    lego = vs_zigzag.run_lego(vs_zigzag.resnet18_onnx(), "ruby_s", "rtml")
    assert lego["layers"] == 21  # 20 convs and the fc, none unmappable (run_lego exits otherwise)
    assert sum(lego["levels"].values()) == pytest.approx(lego["energy_pj"], rel=1e-9)
    arch = compose(["arch=zigzag_eyeriss_like"]).arch
    macs = sum(ly.kernel.macs for ly in network("resnet18") if ly.kernel is not None)  # the preset's
    assert lego["levels"]["mac"] == pytest.approx(macs * arch.energy.mac_pj, rel=1e-6)  # the file's MACs
    assert lego["latency_cycles"] >= macs / (arch.rows * arch.cols)  # no faster than every PE busy
