"""benchmarks/vs_zigzag.py: our side maps zigzag-dse's ResNet-18 ONNX file on the stock eyeriss_like
hardware through the product's stages (the benchmark broke silently when the map stage began to
read the generated array)."""
import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

if importlib.util.find_spec("zigzag") is None:
    pytest.skip("zigzag-dse is not installed (pip install -e '.[dev]'): it ships the ONNX file",
                allow_module_level=True)

import vs_zigzag  # noqa: E402


def test_our_side_maps_every_resnet18_layer_of_the_onnx_file():
    lego = vs_zigzag.run_lego(vs_zigzag.resnet18_onnx(), "ruby_s", "rtml")
    assert lego["layers"] == 21  # 20 convs and the fc, none unmappable (run_lego exits otherwise)
    assert sum(lego["levels"].values()) == pytest.approx(lego["energy_pj"], rel=1e-9)
    assert lego["levels"]["mac"] == pytest.approx(907.0e6, rel=0.01)  # 1.81 G MACs at 0.5 pJ
    assert lego["latency_cycles"] >= 1_814_073_344 / 168  # no faster than every PE busy every cycle
