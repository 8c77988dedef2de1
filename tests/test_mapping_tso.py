"""TSO slicing on the NMP multicore NPU (lego_build.mapping.tso) and its DRAM burst model (mapping.dram)."""
import json
from pathlib import Path

import pytest

from lego_build import compose, run_stage
from lego_build.analysis.kernels import conv2d
from lego_build.analysis.lowering import lower
from lego_build.analysis.networks import network
from lego_build.errors import ConfigError
from lego_build.flow.validate import validate
from lego_build.mapping.dram import bursts, fig1_slicings, fig1_time_us
from lego_build.mapping.tso import NPU, PARTITIONS, Conv, explore, explore_all, tle_slicing

NMP = NPU.from_conf(compose(["arch=nmp"]).arch.multicore)
INCEPTION_IV = Conv("inception §IV", N=80, M=192, H=73, L=73, KH=3, KW=3, S=1, R=71, C=71)


def test_fig1_bursts_and_calibrated_times():
    """Seed 003 fig. 1: 1024 / 512 / 256 bursts; 84 / 58 / 46 us measured on the board."""
    mc = compose(["arch=nmp"]).arch.multicore
    got = [fig1_time_us(n, tile, mc.bandwidth_gbps, mc.burst_ns, 256) for _, n, tile in fig1_slicings()]
    assert [b for b, _ in got] == [1024, 512, 256]
    for (_, us), paper in zip(got, (84, 58, 46)):
        assert us == pytest.approx(paper, rel=0.10)
    nominal = compose(["arch=nmp_nominal"]).arch.multicore  # the datasheet cannot explain the board
    fast = [fig1_time_us(n, tile, nominal.bandwidth_gbps, nominal.burst_ns)[1] for _, n, tile in fig1_slicings()]
    assert all(f < paper / 2 for f, paper in zip(fast, (84, 58, 46)))


def test_burst_counting_rules():
    assert bursts((80, 73, 73), (14, 4, 73), 2, 128) == 70  # full-width rows: 584 B per channel = 5 bursts
    assert bursts((80, 73, 73), (16, 11, 20), 2, 128) == 176  # 40 B rows: one burst each
    assert bursts((4, 8, 8), (4, 8, 8), 2, 128) == 4  # the whole tensor is one 512 B run
    assert bursts((1, 128, 128), (1, 64, 100), 2, 128) == 64 * 2  # 200 B rows


def test_partitions_of_algorithm_2():
    c = Conv("c", N=64, M=256, H=58, L=58, KH=3, KW=3, S=1, R=56, C=56)
    assert tle_slicing(c, "KS", 4) == (64, 56)
    assert tle_slicing(c, "KS&OFM", 4) == (128, 28)
    assert tle_slicing(c, "OFM", 4) == (256, 14)


def test_inception_layer_full_width_with_bursts_narrower_without():
    """§IV: burst-aware TSO takes whole input rows; the burst-oblivious model does not."""
    burst = explore(INCEPTION_IV, NMP, burst=True).best
    blind = explore(INCEPTION_IV, NMP, burst=False).best
    assert burst.T_L == 73 and blind.T_L < 73
    assert burst.total_bursts < blind.total_bursts
    assert burst.time_ns() < blind.time_ns()  # both timed with bursts, as on the board
    assert blind.dram_ns < blind.dram_burst_ns  # its own model did not see the bursts


@pytest.mark.parametrize("model", ["resnet50", "mobilenetv2"])
def test_chosen_tiles_fit_the_scratchpads(model):
    convs = [Conv.from_kernel(layer.name, lower(layer.kernel, "conv2d"))
             for layer in network(model, 1, 16) if layer.kernel is not None]
    for res in explore_all(convs, NMP):
        b, c = res.best, res.conv
        spans = -(-b.T_M // (c.M // c.groups)) if c.groups > 1 else 1
        assert b.T_N * spans * b.T_H * b.T_L * 2 <= NMP.mb_in, c
        assert b.T_M * b.T_N * c.KH * c.KW * 2 <= NMP.mb_w, c
        assert b.T_M * b.T_R * b.T_C * 2 <= NMP.mb_out, c
        assert b.mac_ns * NMP.tles * NMP.tlts * NMP.macs * NMP.clock_ghz >= c.macs  # no core beats its peak
        assert res.valid > 0 and all(count > 0 for count in res.rejected.values())


def test_depthwise_tiles_read_one_channel_per_filter():
    k = lower(conv2d(1, 32, 32, 112, 112, 3, 3, pad=1, groups=32, bits=16), "conv2d")
    c = Conv.from_kernel("dw", k)
    assert (c.N, c.M, c.groups) == (1, 32, 32)
    b = explore(c, NMP).best
    assert b.T_N == 1 and b.transfers[1] >= NMP.tles


def test_fixed_partition_and_schedule_are_kept():
    for p in PARTITIONS:
        assert explore(INCEPTION_IV, NMP, partitions=(p,)).best.partition == p
    for q in ("IS", "OS", "WS"):
        assert explore(INCEPTION_IV, NMP, schedules=(q,)).best.schedule == q
    free = explore(INCEPTION_IV, NMP).best.time_ns()
    assert all(explore(INCEPTION_IV, NMP, partitions=(p,)).best.time_ns() >= free for p in PARTITIONS)


def test_parallel_exploration_gives_the_same_slicings():
    convs = [Conv.from_kernel(layer.name, lower(layer.kernel, "conv2d"))
             for layer in network("squeezenet", 1, 16) if layer.kernel is not None]
    one = explore_all(convs, NMP, jobs=1)
    two = explore_all(convs, NMP, jobs=2)
    assert [r.best for r in one] == [r.best for r in two]


def test_tso_needs_a_multicore_conv_arch():
    with pytest.raises(ConfigError, match="^mapper.search=tso: arch=systolic has no arch.multicore"):
        validate(compose(["mapper=tso"]))
    validate(compose(["arch=nmp", "mapper=tso", "workload=lenet"]))


def test_map_stage_reports_the_slicing_per_layer(tmp_path: Path):
    cfg = compose(["arch=nmp", "mapper=tso", "workload=lenet"])
    for stage in ("analyze", "graph", "optimize", "map"):  # the mapper reads the generated array
        run_stage(stage, cfg, tmp_path)
    doc = json.loads((tmp_path / "mapping.json").read_text())
    rows = [e for e in doc["layers"] if e["status"] == "mapped"]
    assert rows and all(e["tso"]["partition"] in PARTITIONS and e["tso"]["schedule"] in ("IS", "OS", "WS")
                        for e in rows)
    t = doc["totals"]["tso"]
    assert t["time_us"] == pytest.approx(t["mac_us"] + t["dram_us"], rel=1e-6)
    assert t["bursts"] == sum(e["tso"]["bursts"] * e["count"] for e in rows)
    assert set(rows[0]["tso"]["tile"]) == {"T_M", "T_N", "T_R", "T_C", "T_H", "T_L"}
