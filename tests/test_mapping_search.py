from lego_build import compose
from lego_build.analysis.kernels import kernel_from_config
from lego_build.mapping.stage import map_layer


def test_search_rejects_with_reasons_and_keeps_reduction_innermost():
    cfg = compose(["workload.M=32", "workload.N=24", "workload.K=40", "arch.rows=8", "arch.cols=8"])
    result = map_layer(kernel_from_config(cfg.workload), cfg.arch, cfg.mapper)
    assert result["candidates"] == {"valid": 2, "rejected": 4}
    assert all("reduction loops must be innermost" in r for r in result["rejections"])
    temporal = result["mapping"]["temporal"]
    assert temporal[-1]["dim"] == "k" and temporal[-1]["bound"] == 40
    assert {lp["dim"]: lp["bound"] for lp in temporal} == {"m": 4, "n": 3, "k": 40}
    assert result["utilization"] == 1.0
    # one cycle to start, 480 steps, then skew 7+7 and the read/multiply/accumulate pipeline
    assert result["compute_cycles"] == 1 + 4 * 3 * 40 + 14 + 3


def test_buffer_too_small_is_a_reason_not_a_crash():
    cfg = compose(["workload.M=64", "workload.K=64", "arch.buffer_depth=64"])
    kernel = kernel_from_config(cfg.workload)
    import pytest

    from lego_build.flow.stages import StageError

    with pytest.raises(StageError, match="arch.buffer_depth=64"):
        map_layer(kernel, cfg.arch, cfg.mapper)


def test_objective_changes_nothing_it_should_not():
    cfg = compose(["mapper.objective=latency"])
    latency = map_layer(kernel_from_config(cfg.workload), cfg.arch, cfg.mapper)
    cfg = compose(["mapper.objective=edp"])
    edp = map_layer(kernel_from_config(cfg.workload), cfg.arch, cfg.mapper)
    assert latency["cycles"] == edp["cycles"] == 1 + 4 * 4 * 16 + 6 + 3
