import pytest

from lego_build import ConfigError, compose
from lego_build.analysis.from_config import workload_from_config
from lego_build.analysis.lowering import lower
from lego_build.flow.validate import validate
from lego_build.frontend.dataflow import arch_dataflows


@pytest.mark.parametrize("overrides, key", [
    (["arch.dataflows.main.spatial=[m,q]"], "arch.dataflows.main.spatial[1]: dim 'q' is not a dim"),
    (["arch.family=conv2d"], "arch.dataflows.main.spatial[0]: dim 'm' is not a dim of this family"),
    (["arch.dataflows.main.spatial=[m,'n:8,b:2']"], "extents multiply to 16, but the axis has 4 FUs"),
    # issue 22: a replicated row-stationary form larger than Eyeriss's 12 rows
    (["arch=eyeriss_ruby", "arch.dataflows.khic_oh.spatial=['kh:3,ic:5',oh]"],
     "arch.dataflows.khic_oh.spatial[0]='kh:3,ic:5': extents multiply to 15, but the axis has 12 FUs"),
    (["arch.dataflows.main.spatial=[m,n]", "arch.dataflows.main.temporal=[b,m,k]"],
     "arch.dataflows.main.temporal: dim 'n' has no loop"),
    (["arch.dataflows.main.temporal=[b,m,n,k,k]"],
     "arch.dataflows.main.temporal: dim 'k' needs exactly one loop without a trip count"),
    (["arch.dataflows.main.spatial=[m]"], "one entry per array axis"),
    (["arch.dataflows.main.spatial=[]", "arch.dataflows.main.interstellar=C|Q"], "cannot read 'Q'"),
    (["workload=onnx", "workload.path=missing.onnx"], "workload.path=missing.onnx"),
    # issue 22: a searched unrolling needs model-only levels and the dims each axis may unroll
    (["mapper.unroll=search"], "mapper.unroll=search: arch=systolic has no arch.memory"),
    (["mapper.unroll=rows"], "mapper.unroll='rows': must be one of dataflows, search"),
    (["arch=eyeriss_ruby", "mapper.unroll=search", "arch.unroll.axes=[]", "arch.unroll.required=[]"],
     "mapper.unroll=search: arch.unroll.axes is empty on arch=eyeriss_ruby"),
    (["arch=eyeriss_ruby", "arch.unroll.axes=[[kh,q],[oh]]"], "arch.unroll.axes[0]: dim 'q' is not a dim"),
    (["arch=eyeriss_ruby", "arch.unroll.required=[ow]"], "arch.unroll.required: dim 'ow' is on no axis"),
])
def test_cross_group_errors_name_the_key(overrides, key):
    with pytest.raises(ConfigError) as err:
        validate(compose(overrides))
    assert key in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("overrides, ops, runnable", [
    ([], ["gemm"], 1),
    (["workload=conv2d"], ["conv2d"], 1),  # lowered to GEMM by im2col
    (["workload=conv2d", "arch.family=conv2d", "arch.dataflows.main.spatial=[oc,ow]"], ["conv2d"], 1),
    (["workload=attention"], ["attention_qk", "softmax", "attention_av"], 2),  # softmax on the PPU
    (["workload=mttkrp"], ["mttkrp"], 0),  # nothing maps on a GEMM array, but analysis must still run
    (["arch.dataflows.main.spatial=[k,n]"], ["gemm"], 1),  # weight stationary: partial sums reduce across the array
])
def test_valid_combinations(overrides, ops, runnable):
    """A valid configuration passes and gives back the workload IR it built: the workload's layers,
    of which ``runnable`` lower onto the arch's kernel family (the mapper's verdict, not an error)."""
    cfg = compose(overrides)
    workload = validate(cfg)
    assert workload == workload_from_config(cfg.workload)
    assert [layer.op for layer in workload.layers] == ops
    assert sum(lower(x.kernel, cfg.arch.family) is not None for x in workload.array_layers) == runnable
    spatial = [d for axis in arch_dataflows(cfg.arch)[0].axes for d, _ in axis]
    assert spatial == list(cfg.arch.dataflows["main"].spatial)  # the unrolling as written, parsed


@pytest.mark.parametrize("overrides, message", [
    (["mapper.search=greedy"], r"^mapper.search=greedy: unknown; choose one of rtml, placed, random, exhaustive, tso"),
    (["arch.fu=booth"], r"^arch.fu=booth: unknown; choose one of mac, bitfusion"),
    (["optimizer.solver=glpk"], r"^optimizer.solver=glpk: unknown; choose one of cbc, highs"),
    (["workload=onnx", "workload.kind=caffe", "workload.path=model.caffe"],
     r"^workload.kind=caffe: unknown; choose one of onnx, tflite, timeloop"),
])
def test_registry_names_are_checked_by_the_roof(overrides, message):
    """Names only a stage's registry knows (built-ins and plugins) fail at composition, in one line."""
    with pytest.raises(ConfigError, match=message):
        compose(overrides)
