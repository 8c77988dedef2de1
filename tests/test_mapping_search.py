from math import factorial

import pytest

from lego_build import compose
from lego_build.analysis.from_config import workload_from_config
from lego_build.analysis.kernels import gemm
from lego_build.analysis.lowering import reference_kernel
from lego_build.backend.stage import optimize
from lego_build.frontend.adg_build import build_adg
from lego_build.mapping.stage import map_layer, map_workload


def hardware(cfg, kernels):
    """What the graph and optimize stages give the mapper: the array and its pipeline latency."""
    adg = build_adg(reference_kernel(kernels, cfg.arch.family), cfg.arch)
    return adg, optimize(adg, cfg.optimizer)[0].latency


def _map(overrides):
    cfg = compose(overrides)
    (layer,) = workload_from_config(cfg.workload).layers
    adg, latency = hardware(cfg, [layer.kernel])
    return map_layer(layer.kernel, adg, adg.dataflows[0], cfg.arch, cfg.mapper, latency)


def _map_workload(layers, cfg):
    return map_workload(layers, *hardware(cfg, [k for _, k in layers]), cfg.arch, cfg.mapper)


def test_search_rejects_with_reasons_and_keeps_reduction_innermost():
    result = _map(["workload.M=32", "workload.N=24", "workload.K=40", "arch.rows=8", "arch.cols=8"])
    # The expected candidate counts, from the layer. The 8 x 8 array takes m and n by 8 each,
    # so the l1 level loops over m, n, k (4, 3, 40 trips; b = 1 has no loop).
    # * rejected: in a gemm, each of m, n, k is the only loop that does not index one tensor
    #   (B, A, Y), so no second loop extends its reuse. The RTML trie keeps one order per
    #   innermost loop, with the other two loops outside in kernel order, and logs one Obs2
    #   rejection per kept order: the 2! - 1 other orders of those two free loops. The
    #   hardware rule (the FU accumulates in place) then rejects each kept order whose
    #   innermost loop is not the reduction loop k.
    trie_orders = [tuple(d for d in "mnk" if d != inner) + (inner,) for inner in "mnk"]
    obs2 = len(trie_orders) * (factorial(2) - 1)
    not_k_innermost = [o for o in trie_orders if o[-1] != "k"]
    # * valid: level by level, inner to outer, the search asks one schedule per
    #   (maximal tile, order left). acc sits below the array fan-out with no memory of
    #   its own, so its factors are all 1: one tile and no loop to order; it is the level
    #   below the outermost on-chip one, so its tile is scored as if l1 held the rest
    #   (Rtml._walk), not asked. l1 holds the whole 4 x 3 x 40 block (one maximal tile;
    #   see the tiles below), and one trie order is left. dram then has no loop left.
    valid = (len(trie_orders) - len(not_k_innermost)) + 1
    assert result["candidates"] == {"valid": valid, "rejected": obs2 + len(not_k_innermost)}
    rule = [r for r in result["rejections"] if "reduction loops are innermost" in r]
    assert sorted(r.split(":")[0] for r in rule) == ["order m/k/n", "order n/k/m"]
    assert sorted(r.split(":")[0] for r in rule) == sorted(f"order {'/'.join(o)}" for o in not_k_innermost)
    assert all("pruned by" in r for r in result["rejections"] if r not in rule)  # the RTML trie, with its rule
    temporal = result["mapping"]["temporal"]
    assert temporal[-1]["dim"] == "k" and temporal[-1]["bound"] == 40
    assert {lp["dim"]: lp["bound"] for lp in temporal} == {"b": 1, "m": 4, "n": 3, "k": 40}
    assert result["utilization"] == 1.0
    # one cycle to start, 480 steps, then skew 7+7, the read/operand/multiply/accumulate pipeline
    # and the output banks' read-modify-write cycle
    assert result["compute_cycles"] == 1 + 4 * 3 * 40 + 14 + 4 + 1
    # the whole layer fits the L1 banks: one tile, every tensor crosses DRAM once
    assert result["schedule"]["tiles"] == {"b": [1, 1], "m": [1, 4], "n": [1, 3], "k": [1, 40]}
    assert result["accesses"]["dram/input"]["reads"] == 32 * 40
    assert result["accesses"]["dram/output"]["writes"] == 32 * 24


def test_small_buffer_tiles_through_dram_and_pays_refetches():
    big = _map(["workload.M=32", "workload.N=24", "workload.K=40", "arch.rows=8", "arch.cols=8"])
    small = _map(["workload.M=32", "workload.N=24", "workload.K=40", "arch.rows=8", "arch.cols=8",
                  "arch.buffer_depth=16"])
    # 16 words per bank: k is tiled, the 32x24 outputs stay in L1 across the k tiles
    assert small["schedule"]["tiles"]["k"][1] <= 16
    assert small["energy_breakdown_pj"]["dram"] == big["energy_breakdown_pj"]["dram"]
    tiles = 40 // small["schedule"]["tiles"]["k"][1]
    assert small["compute_cycles"] == 480 + tiles * (1 + 14 + 4 + 1) > big["compute_cycles"]
    # 4 words per bank cannot hold the outputs either: inputs are fetched again per output tile
    tiny = _map(["workload.M=32", "workload.N=24", "workload.K=40", "arch.rows=8", "arch.cols=8",
                 "arch.buffer_depth=4"])
    assert tiny["energy_breakdown_pj"]["dram"] > big["energy_breakdown_pj"]["dram"]
    assert tiny["accesses"]["dram/input"]["reads"] + tiny["accesses"]["dram/weight"]["reads"] > 32 * 40 + 40 * 24


def test_objectives_agree_on_this_mapspace():
    latency = _map(["mapper.objective=latency"])
    edp = _map(["mapper.objective=edp"])
    assert latency["cycles"] == edp["cycles"] == 1 + 4 * 4 * 16 + 6 + 4 + 1  # + the read-modify-write cycle


def test_network_layers_lowered_and_identical_layers_mapped_once():
    cfg = compose([])
    layers = [({"name": f"l{i}", "op": "matmul", "count": 2}, gemm(20, 12, 9)) for i in range(3)]
    layers.append(({"name": "relu", "op": "relu", "count": 1}, None))
    result = _map_workload(layers, cfg)
    assert result["totals"]["distinct_mapped"] == 1
    assert result["totals"]["layers_mapped"] == 6
    assert result["totals"]["macs"] == 6 * 20 * 12 * 9
    assert [e["name"] for e in result["layers"]] == ["l0", "l1", "l2"]


def test_layer_whose_reuse_breaks_a_link_is_reported():
    # Eyeriss-like KH-OH unrolling: X moves along the diagonal Δs=(1,-1) only when stride == 1
    from lego_build.analysis.kernels import conv2d
    from lego_build.mapping.stage import link_conflict

    cfg = compose(["arch.family=conv2d", "arch.dataflows.main.spatial=[kh,oh]", "arch.control_flow=[0,0]"])
    stride1 = conv2d(1, 4, 4, 8, 8, 3, 3, 1, 1)
    adg = build_adg(stride1, cfg.arch)
    assert any(tuple(b - a for a, b in zip(lk.src, lk.dst)) in {(1, -1), (-1, 1)} for lk in adg.net("X").links)
    df = adg.dataflows[0]
    assert link_conflict(stride1, adg, df, cfg.arch) == ""
    reason = link_conflict(conv2d(1, 4, 4, 8, 8, 3, 3, 2, 1), adg, df, cfg.arch)
    assert reason.startswith("tensor X cannot use the array's direct link")


def test_exhaustive_search_on_a_large_layer_stops_with_advice():
    from lego_build.errors import InputError

    cfg = compose(["arch=nvdla", "workload=resnet18", "mapper.search=exhaustive"])
    layers = [({"name": layer.name, "op": layer.op, "count": layer.count}, layer.kernel)
              for layer in workload_from_config(cfg.workload).layers]
    with pytest.raises(InputError, match=r"^layer conv1: exhaustive mapspace has about .* use mapper.search=rtml"):
        _map_workload(layers, cfg)


def test_network_totals_break_energy_down_by_level_and_tensor():
    cfg = compose(["arch=nvdla", "workload=lenet"])
    layers = [({"name": layer.name, "op": layer.op, "count": layer.count}, layer.kernel)
              for layer in workload_from_config(cfg.workload).layers]
    totals = _map_workload(layers, cfg)["totals"]
    assert set(totals["energy_by_level_pj"]) == {"mac", "acc", "l1", "dram", "network"}
    assert set(totals["energy_by_tensor_pj"]) == {"mac", "input", "weight", "output"}
    for key in ("energy_by_level_pj", "energy_by_tensor_pj"):
        assert sum(totals[key].values()) == pytest.approx(totals["energy_pj"], rel=1e-6)
