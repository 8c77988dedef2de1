"""The map stage on the presets' real networks (issue 18 build item 5): every ResNet-50
layer maps on the four presets that claim it, the stride-2 ones on Eyeriss's ``khoh_s2``;
the mapper keeps reduction loops innermost above the array (outputs accumulate on chip)."""
import pytest

from lego_build import compose
from lego_build.flow.stages import STAGES, run_stage
from lego_build.runtime.artifacts import read_artifact

pytestmark = pytest.mark.slow


def _map(tmp_path, overrides):
    cfg = compose(overrides)
    for stage in STAGES[:[s.name for s in STAGES].index("map") + 1]:
        run_stage(stage.name, cfg, tmp_path)
    return read_artifact(tmp_path, "mapping.json")


@pytest.mark.parametrize("arch", ["eyeriss", "nvdla", "gemmini_like", "lego_mnicoc"])
def test_no_resnet50_layer_is_unmappable(tmp_path, arch):
    mapping = _map(tmp_path, [f"arch={arch}", "workload=resnet50"])
    layers = mapping.layers
    assert len(layers) == 54 and all(entry["status"] == "mapped" for entry in layers), \
        [(entry["name"], entry.get("reason")) for entry in layers if entry["status"] != "mapped"]
    for entry in layers:  # above the array's own level, the reduction loops are innermost
        reduction = {"ic", "kh", "kw"} if "ic" in entry["dims"] else {"k"}
        for order in entry["schedule"]["orders"][1:]:
            inner = [d in reduction for d in order]
            assert inner == sorted(inner), (entry["name"], order)
    if arch == "eyeriss":
        strided = {e["name"] for e in layers if e["dataflow"] == "khoh_s2"}
        assert strided == {"conv1", "layer2.0.conv2", "layer2.0.downsample.0", "layer3.0.conv2",
                           "layer3.0.downsample.0", "layer4.0.conv2", "layer4.0.downsample.0"}
