"""Randomized differential test (issue 6 acceptance 3): seeded random shapes, dataflows and loop
orders, many tiles per Verilator build, every output compared with NumPy and every cycle count
with the prediction."""
import numpy as np
import pytest

from lego_build import compose, run_stage
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.analysis.lowering import lower
from lego_build.backend.interface import HostMap
from lego_build.ir.adg import ADG
from lego_build.ir.mapping import Mapping, tiled_loops
from lego_build.ir.serialize import from_jsonable
from lego_build.ir.workload import layer_kind
from lego_build.mapping.controller import pre_check
from lego_build.mapping.sim_tile import fit_tile
from lego_build.mapping.stage import link_conflict
from lego_build.runtime.atomic import read_json
from lego_build.sim import verilator
from lego_build.sim.tile_runs import run_tiles
from lego_build.sim.tiles import Tile

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

CASES = 40  # per design; four designs: 160 cases
#: epilogues drawn for the post-processing unit: raw, requantise, ReLU, and every LUT activation
EPILOGUES = ((), ("batchnorm",), ("relu",), ("batchnorm", "relu6"), ("gelu",), ("sigmoid",), ("tanh",),
             ("silu",), ("hswish",), ("softmax",))


def _random_gemm(rng):
    return gemm(int(rng.integers(1, 21)), int(rng.integers(1, 21)), int(rng.integers(1, 25)),
                batch=int(rng.integers(1, 3)))


def _random_conv(rng):
    in_ch = int(rng.integers(1, 7))
    depthwise = rng.random() < 0.25
    out_ch = in_ch if depthwise else int(rng.integers(1, 7))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    stride, dilation, pad = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(0, 2))
    in_h = int(rng.integers(max(3, (kh - 1) * dilation + 1 - 2 * pad), 10))
    in_w = int(rng.integers(max(3, (kw - 1) * dilation + 1 - 2 * pad), 10))
    return conv2d(int(rng.integers(1, 3)), in_ch, out_ch, in_h, in_w, kh, kw, stride, pad, dilation,
                  groups=in_ch if depthwise else 1)


def _random_tile(rng, index, adg, arch, make):
    """One random case the array can run, or None: shape, dataflow and loop order all drawn."""
    layer = make(rng)
    kernel = lower(layer, adg.kernel)
    if kernel is None:
        return None
    usable = [df for df in adg.dataflows if not link_conflict(kernel, adg, df, arch)]
    if not usable:
        return None
    df = usable[int(rng.integers(len(usable)))]
    loops = tiled_loops(kernel, df.virtual)
    reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
    outer = [d.name for d in kernel.dims if d.name not in reduction]
    inner = [d.name for d in kernel.dims if d.name in reduction]
    order = [*rng.permutation(outer), *rng.permutation(inner)]
    mapping = Mapping(df.virtual, tuple(loops[str(d)] for d in order))
    if not pre_check(kernel, mapping).ok:
        return None
    tile, tile_mapping = fit_tile(kernel, mapping, adg.capacities(df.name), 300)
    epilogue = EPILOGUES[int(rng.integers(len(EPILOGUES)))]
    return Tile(f"case{index}", layer_kind(layer), tile, tile_mapping, df.name, epilogue)


@pytest.mark.parametrize("overrides,make", [
    (["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4"], _random_gemm),  # switchable MN / IC-OC
    (["arch=lego_khoh_icoc", "arch.rows=4", "arch.cols=4", "workload=conv2d"], _random_conv),  # switchable conv
    (["arch=shidiannao", "arch.rows=4", "arch.cols=4", "workload=conv2d"], _random_conv),  # FIFO links
    (["arch.rows=3", "arch.cols=5"], _random_gemm),  # systolic: skewed control flow c = [1, 1]
    # Eyeriss's six row-stationary forms at full size: idle input banks fold under four of them,
    # with the same slice count but different banks under KH-OH and its stride-2 twin
    (["arch=eyeriss", "workload=conv2d"], _random_conv),
], ids=["gemm-mn-icoc", "conv-khoh-ocic", "conv-ohow-fifo", "gemm-systolic-3x5", "conv-eyeriss-replicated"])
def test_random_tiles_match_numpy_in_predicted_cycles(tmp_path, overrides, make):
    verilator.require_verilator()
    cfg = compose([*overrides, "target=rtl"])
    for stage in ("analyze", "graph", "optimize", "emit"):
        run_stage(stage, cfg, tmp_path)
    adg = from_jsonable(ADG, read_json(tmp_path / "adg.json"))
    hm = from_jsonable(HostMap, read_json(tmp_path / "rtl" / "host_interface.json"))
    rng = np.random.default_rng(2026)
    tiles, drawn = [], 0
    while len(tiles) < CASES:
        drawn += 1
        assert drawn < 10 * CASES, "the array runs too few of the random cases"
        tile = _random_tile(rng, drawn, adg, cfg.arch, make)
        if tile is not None:
            tiles.append(tile)
    binary = verilator.build(tmp_path / "rtl", tmp_path / "build", False)
    results = run_tiles(binary, hm, adg, tiles, seed=11, max_cycles=10**6)
    bad = [r for r in results if not (r["match"] and r["cycles_match"])]
    assert not bad, bad[:3]
    assert len({t.dataflow for t in tiles}) == len(adg.dataflows)  # every dataflow exercised
    assert {r["ppu"]["mode"] for r in results} == {0, 1, 3, 5}  # raw, requantised, + ReLU, + LUT
    if hm.shifts:  # some random tiles use the FIFOs, some fall back to the banks
        used = {g["depth"] is not None for r in results for g in r["fifo_groups"]}
        assert used == {True, False}
