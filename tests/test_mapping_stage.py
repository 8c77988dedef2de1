"""The map stage on the presets' real networks (issue 18 build item 5): every ResNet-50
layer maps on the four presets that claim it, the stride-2 ones on Eyeriss's ``khoh_s2``;
the mapper keeps reduction loops innermost above the array (outputs accumulate on chip)."""
import pytest

from lego_build import compose
from lego_build.flow.stages import STAGES, run_stage
from lego_build.runtime.artifacts import read_artifact

#: a 16x16 weight-stationary GEMM array with gemmini_like's banks, tiled by the search
GEMM_WS = ["arch=gemmini_like", "arch.family=gemm", "arch.dataflows.ws.spatial=[k,n]", "arch.tiling=search"]

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
        # the sequencer walks tiles in the controller nest's order: the output loops that move
        # only above the array's level follow the mapper's DRAM-level order
        orders = entry["schedule"]["orders"]
        above = [d for d in orders[-1] if d not in orders[1] and d not in reduction]
        nest = [lp["dim"] for lp in entry["mapping"]["temporal"] if lp["dim"] in above]
        assert nest == above, (entry["name"], nest, orders)
    if arch == "eyeriss":  # the stride-2 layers run on forms whose input sharing holds at stride 2
        on = {e["name"]: e["dataflow"] for e in layers}
        strided = ("conv1", "layer2.0.conv2", "layer2.0.downsample.0", "layer3.0.conv2", "layer3.0.downsample.0",
                   "layer4.0.conv2", "layer4.0.downsample.0")
        assert all(on[name] not in ("khoh", "khic_oh") for name in strided), on
        assert on["conv1"] == "khoh_s2"  # its 7 filter rows need KH on the rows alone


def test_an_energy_tie_goes_to_fewer_cycles(tmp_path):
    """MobileNetV2's first depthwise conv on the 16x16 GEMM array (groups as batch, k=9, n=1):
    every tile size moves the same words, so energy ties; the tie-break by cycles keeps a big
    tile instead of a one-step one (14.9 M cycles of per-tile overhead before)."""
    layers = {e["name"]: e for e in _map(tmp_path, [*GEMM_WS, "workload=mobilenetv2"]).layers}
    dw = layers["features.1.conv.0.0"]
    assert dw["tile"]["m"] > 1 and dw["cycles"] < 1.1 * dw["steps"], (dw["tile"], dw["cycles"], dw["steps"])


def test_a_searched_unrolling_on_eyeriss_ruby(tmp_path):
    """Issue 22 item 1 (``mapper.unroll=search``, seed 002 §V): on eyeriss_ruby's model-only levels
    each ResNet-18 layer's unrolling is searched over KH, IC on the 12 rows and OH, OC on the 14
    columns (KH and OH always unrolled): PFM's factors divide the dims, Ruby-S's may leave a
    partial last tile and its network EDP is lower; a layer named with one of the array's
    dataflows has that dataflow's unrolling (clipped to the dims), the others are model only,
    and the simulator refuses to run them as a whole network."""
    from lego_build.errors import InputError
    from lego_build.sim.layers import scope_layers
    from lego_build.sim.tiles import runnable

    docs = {m: _map(tmp_path / m, ["arch=eyeriss_ruby", "workload=resnet18", f"mapper={m}", "mapper.objective=edp",
                                   "mapper.unroll=search"]) for m in ("pfm", "ruby_s")}
    adg = read_artifact(tmp_path / "pfm", "adg.json")
    axes = {df.name: df.axes for df in adg.dataflows}
    remainder = 0
    for m, doc in docs.items():
        assert doc.totals["layers_unmappable"] == 0
        for e in doc.layers:
            unroll = [dict((d, int(f)) for d, f in (p.split(":") for p in axis.split(",") if p))
                      for axis in e["unrolling"].split(" | ")]
            f = {d: v for axis in unroll for d, v in axis.items()}
            assert all(d in ("kh", "ic") for d in unroll[0]), e["unrolling"]
            assert all(d in ("oh", "oc") for d in unroll[1])
            assert (e["dims"]["oh"] == 1 or "oh" in f) and (e["dims"]["kh"] == 1 or "kh" in f)
            assert e["utilization"] <= 1
            rem = any(e["dims"][d] % v for d, v in f.items())
            assert not (m == "pfm" and rem), (e["name"], e["unrolling"])
            remainder += rem
            if e["dataflow"]:
                hw = [{d: min(x, e["dims"][d]) for d, x in axis if min(x, e["dims"][d]) > 1}
                      for axis in axes[e["dataflow"]]]
                assert hw == [{d: v for d, v in axis.items() if v > 1} for axis in unroll], (e["name"], e["dataflow"])
        assert doc.totals["model_only"] == sum(e["count"] for e in doc.layers if not e["dataflow"])
    assert remainder  # Ruby-S uses its remainders
    edp = {m: d.totals["energy_pj"] * d.totals["cycles"] for m, d in docs.items()}
    assert edp["ruby_s"] < edp["pfm"]
    doc = docs["ruby_s"]
    assert 0 < len(runnable(doc, adg)) < len(doc.layers)
    cfg = compose(["arch=eyeriss_ruby", "workload=resnet18", "mapper.unroll=search", "target.scope=network"])
    with pytest.raises(InputError, match=r"^target.scope=network: layer \S+ \(\d+ in all\) takes an unrolling none"):
        scope_layers(cfg, doc, [], adg)
