"""Resource estimates before work (lego_build.flow.budget) and the mapper's tile extents they count."""
from __future__ import annotations

from math import ceil

import pytest

from lego_build import compose
from lego_build.errors import BudgetError
from lego_build.flow import budget
from lego_build.flow.budget import check, estimates
from lego_build.flow.validate import validate
from lego_build.mapping.factors import divisors, useful


def _estimates(overrides):
    cfg = compose(overrides)
    return cfg, {e.stage: e for e in estimates(cfg, validate(cfg))}


def test_tile_extents_are_enumerated_in_square_root_time():
    for D in [*range(1, 300), 1000, 1024, 4096, 9973, 12345]:
        assert divisors(D) == tuple(d for d in range(1, D + 1) if D % d == 0)
        assert set(useful(D, True)) == set(divisors(D)) | {ceil(D / k) for k in range(1, D + 1)}
        assert useful(D, False) == divisors(D)
    big = useful(10 ** 9, True)  # was a loop over 10**9 values (minutes); now about 2 sqrt(D)
    assert len(big) < 2 * 31623 + 200 and big[0] == 1 and big[-1] == 10 ** 9


def test_presets_fit_the_machine_and_the_defaults():
    for overrides in ([], ["arch=eyeriss", "workload=resnet50"], ["arch=lego_icoc_1k", "workload=resnet50"],
                      ["workload.M=1000000000"]):
        cfg = compose(overrides)
        found = check(cfg, validate(cfg))
        assert {e.stage for e in found} == {"map", "simulate"}
        assert all(e.seconds < 60 * cfg.run.max_minutes for e in found)


def test_golden_memory_and_time_grow_with_the_tile():
    _, small = _estimates([])
    _, big = _estimates(["workload.M=1000000000", "target.tile_steps=100000000", "arch.rows=16", "arch.cols=16"])
    assert big["simulate"].memory_bytes > 1000 * 2 ** 30  # 2.6e10 points: terabytes of tensor windows
    assert small["simulate"].memory_bytes < 2 ** 30
    assert big["simulate"].seconds > 1000 * small["simulate"].seconds


def test_over_budget_is_one_line_unless_confirmed(monkeypatch):
    huge = ["workload.M=1000000000", "target.tile_steps=100000000", "arch.rows=16", "arch.cols=16"]
    cfg = compose(huge)
    with pytest.raises(BudgetError, match=r"the simulate stage would need about [\d,.]+ GiB .* run.confirm=true"):
        check(cfg, validate(cfg))
    cfg = compose([*huge, "run.confirm=true"])
    assert check(cfg, validate(cfg))  # estimates still reported
    cfg = compose(["run.max_memory_gb=0.000001"])
    with pytest.raises(BudgetError, match="run.max_memory_gb allows"):
        check(cfg, validate(cfg))
    cfg = compose(["run.max_minutes=0.00001"])
    with pytest.raises(BudgetError, match="over run.max_minutes"):
        check(cfg, validate(cfg))
    monkeypatch.setattr(budget, "available_memory", lambda: 0)  # unknown: no memory limit of the machine's
    cfg = compose(huge + ["run.max_minutes=0"])
    assert check(cfg, validate(cfg))


def test_available_memory_reads_the_machine():
    assert budget.available_memory() > 2 ** 26


# ----------------------------------------------------------------------------- whole layers
def _bounds(overrides):
    cfg = compose(overrides)
    return cfg, budget.layer_bounds(cfg, validate(cfg))


def test_compulsory_elements_count_what_the_loops_cover():
    cfg, (gemm,) = _bounds(["workload.M=12", "workload.N=10", "workload.K=7"])
    assert gemm.elements == 12 * 7 + 7 * 10 + 12 * 10 and gemm.dram_bytes == gemm.elements  # 8-bit operands
    # a padded 3x3 conv: its input is a sliding window (skipped); weights and outputs are covered,
    # the output channel 64 g + k too (g has bound 1)
    conv = ["arch=eyeriss", "workload=conv2d", "workload.in_ch=3", "workload.out_ch=64", "workload.in_h=8",
            "workload.in_w=8"]
    _, (b,) = _bounds(conv)
    assert b.elements == 64 * 3 * 3 * 3 + 64 * 8 * 8
    _, (dw,) = _bounds([*conv, "workload.in_ch=16", "workload.out_ch=16", "workload.groups=16"])
    assert dw.elements == 16 * 3 * 3 + 16 * 8 * 8  # a depthwise output, 16 groups of one channel
    _, (wide,) = _bounds(["workload.M=12", "workload.N=10", "workload.K=7", "arch.operand_bits=16",
                          "arch.acc_bits=48"])
    assert wide.dram_bytes == 2 * wide.elements


def test_a_layer_bound_is_the_larger_of_compute_and_dram_plus_the_latency():
    cfg, (b,) = _bounds(["arch.memsys.dram_bytes_per_cycle=0.5", "arch.memsys.dram_latency_cycles=100"])
    assert b.compute_cycles == 16 * 16 * 16 // 16 and b.dram_bound
    assert b.dram_cycles == ceil((768 - 2 * 16) / 0.5) and b.cycles == b.dram_cycles + 100  # two 16-byte beats held
    _, (fast,) = _bounds([])
    assert not fast.dram_bound and fast.cycles == 256 + 64


def test_a_whole_layer_over_max_cycles_stops_before_any_stage():
    slow = ["arch.memsys.dram_bytes_per_cycle=0.01", "target.scope=layers", "target.max_cycles=50000"]
    cfg = compose(slow)
    with pytest.raises(BudgetError) as err:
        check(cfg, validate(cfg))
    assert str(err.value) == (
        "target.scope=layers: layer gemm needs at least 73,664 cycles (768 bytes at "
        "arch.memsys.dram_bytes_per_cycle=0.01) but target.max_cycles=50,000 stops a layer's simulation before that; "
        "raise arch.memsys.dram_bytes_per_cycle or target.max_cycles, or use target.scope=tiles")
    for fine in (["target.scope=tiles"], ["target.max_cycles=80000"], ["run.confirm=true"], ["target=rtl"]):
        cfg = compose([*slow, *fine])  # tiles do not run whole layers; rtl simulates nothing
        check(cfg, validate(cfg))
    big = compose(["workload.M=1024", "workload.N=1024", "workload.K=1024", "target.scope=layers"])
    with pytest.raises(BudgetError, match=r"^target.scope=layers: layer gemm needs at least 67,108,928 cycles "
                                          r"\(1,073,741,824 MACs on 16 FUs\) .* raise target.max_cycles, or use a "
                                          r"larger array or smaller layers"):
        check(big, validate(big))


def test_layers_scope_counts_one_layer_per_kind_and_network_every_layer():
    cfg, bounds = _bounds(["arch=eyeriss", "workload=resnet50", "target.scope=layers"])
    assert len(bounds) == 54
    kinds = budget.scope_bounds(cfg, bounds)
    assert sorted(b.kind for b in kinds) == ["conv", "matmul", "pointwise"]  # the fc layer as written
    assert all(b.cycles == min(c.cycles for c in bounds if c.kind == b.kind) for b in kinds)
    net = compose(["arch=eyeriss", "workload=resnet50", "target.scope=network",
                   "arch.memsys.dram_bytes_per_cycle=0.05"])
    with pytest.raises(BudgetError, match=r"^target.scope=network: layer layer4.0.conv2 needs at least [\d,]+ cycles "
                                          r"\(2,384,384 bytes at arch.memsys.dram_bytes_per_cycle=0.05\)"):
        check(net, validate(net))  # its 2.4 MB of weights alone take 47 M cycles at 0.05 B/cycle


def test_whole_layer_time_is_estimated_from_the_bounds():
    cfg = compose(["arch=eyeriss", "workload=resnet50", "target.scope=network"])
    (_, sim) = estimates(cfg, validate(cfg))
    assert sim.what.startswith("54 whole layers of at least ") and "4,089,184,256 MACs on 168 FUs" in sim.what
    assert 60 < sim.seconds < 60 * cfg.run.max_minutes  # the documented ResNet-50 network run is not refused
    cfg = compose(["arch=eyeriss", "workload=resnet50", "target.scope=network", "run.max_minutes=1"])
    with pytest.raises(BudgetError, match=r"^the simulate stage would take about \d+ minutes \(54 whole layers .*\), "
                                          r"over run.max_minutes=1; lower the layer sizes, use target.scope=tiles"):
        check(cfg, validate(cfg))
    jobs = compose(["arch=eyeriss", "workload=resnet50", "target.scope=network", "run.jobs=4"])
    assert estimates(jobs, validate(jobs))[1].seconds < sim.seconds


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [
    ["workload=lenet", "target.scope=network", "arch.memsys.dram_bytes_per_cycle=0.5"],  # DRAM-bound
    ["workload=lenet", "target.scope=network"],  # compute-bound
])
def test_the_bounds_never_exceed_the_cycles_measured_in_rtl(tmp_path, overrides):
    from lego_build import run_all
    from lego_build.runtime.artifacts import read_artifact

    cfg, bounds = _bounds(overrides)
    run_all(cfg, tmp_path)
    measured = {r["layer"]: r for r in read_artifact(tmp_path, "sim/result.json").layers}
    assert set(measured) == {b.name for b in bounds}
    for b in bounds:
        row = measured[b.name]
        assert b.cycles <= row["cycles"] and b.dram_bytes <= row["bytes_read"] + row["bytes_written"], b
        assert b.cycles > row["cycles"] / 6  # a bound, but not a vacuous one
