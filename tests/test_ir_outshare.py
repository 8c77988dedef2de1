"""ir/outshare.py (issue 44): output lanes shared by the FUs of a column (``arch.out_lanes``).

The unit tests check the lane, slot and period arithmetic on real array shapes; the slow ones run
the generated RTL: random tiles through the host port (every output against NumPy, every cycle
count against the prediction), tiles with accumulations shorter than the lane's period (held by
the controller, the prediction counting the held cycles), and a whole layer through the memory
system's write engine, which reads each DRAM row from the bank rows that hold it."""
import re

import numpy as np
import pytest

from lego_build import ConfigError, compose, run_all, run_stage
from lego_build.analysis.kernels import gemm
from lego_build.analysis.lowering import lower
from lego_build.backend.interface import HostMap
from lego_build.ir import outshare
from lego_build.ir.adg import ADG
from lego_build.ir.mapping import Mapping, tiled_loops
from lego_build.ir.serialize import from_jsonable
from lego_build.ir.workload import layer_kind
from lego_build.mapping.sim_tile import fit_tile
from lego_build.mapping.stage import link_conflict
from lego_build.runtime.artifacts import read_artifact
from lego_build.runtime.atomic import read_json
from lego_build.sim import verilator
from lego_build.sim.tile_runs import run_tiles
from lego_build.sim.tiles import Tile

FUS_4X4 = tuple((r, c) for r in range(4) for c in range(4))


def test_a_lane_per_column_group_in_port_order():
    assert outshare.group_lanes(FUS_4X4, 1) == ()
    assert outshare.group_lanes(FUS_4X4, 4) == (0, 1, 2, 3) * 4
    lanes = outshare.group_lanes(FUS_4X4, 2)
    assert lanes == (0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7)
    assert outshare.count(lanes, 16) == 8 and outshare.count((), 16) == 16
    assert outshare.members(lanes)[5] == (9, 13) and outshare.depth_factor(lanes) == 2


def test_slots_shift_and_capacity_follow_the_ports_a_dataflow_uses():
    """lego_mnicoc's three dataflows on one column of 4 FUs: MN and OH-OW write every FU, IC-OC
    only the bottom one (its sums flow down the column), which then has the whole lane."""
    lanes = (0, 0, 0, 0)
    every, bottom = (0, 1, 2, 3), (-1, -1, -1, 0)
    assert outshare.slots(lanes, every) == (0, 1, 2, 3) and outshare.shift(lanes, every) == 2
    assert outshare.slots(lanes, bottom) == (-1, -1, -1, 0) and outshare.shift(lanes, bottom) == 0
    assert outshare.capacity(lanes, every, 42) == 42 and outshare.capacity(lanes, bottom, 42) == 168
    assert outshare.physical(lanes, every, 2, 5) == (0, 22) and outshare.physical(lanes, bottom, 3, 5) == (0, 5)
    # three used members take slots of four: a lane of 4 x 42 words holds 42 each
    assert outshare.shift(lanes, (0, -1, 1, 2)) == 2 and outshare.capacity(lanes, (0, -1, 1, 2), 42) == 42


def test_a_dram_row_is_read_beat_by_beat_from_the_bank_rows_that_hold_it():
    """A 4x4 array's row of 16 words (FU r*4+c at word r*4+c) over four column lanes: a 16-byte beat
    of 4-byte words is one bank row of every lane, slot r; a 32-byte beat would need two."""
    lanes = outshare.group_lanes(FUS_4X4, 4)
    sources = outshare.word_sources(lanes, tuple(range(16)), tuple(range(16)))
    assert sources[:5] == ((0, 0), (1, 0), (2, 0), (3, 0), (0, 1))
    assert outshare.beat_rows(sources, 4, 4) == (0, 1, 2, 3)
    assert outshare.beat_rows(sources, 4, 6) == (0, 1, 2, 3, 3, 3)  # padding beats keep the last row
    assert outshare.bank_reads((0, 0, 1, 1, 0, 0, 1, 1)) == (0, 1, 0, 1)  # half columns: rows read twice
    with pytest.raises(ConfigError, match="arch.out_lanes: a bus beat of 8 output words takes them from 2 bank"):
        outshare.beat_rows(sources, 8, 2)


def test_the_period_is_the_spread_of_a_lanes_write_cycles():
    """The systolic 4x4's column writes in four consecutive cycles (4 + r + c): an accumulation of
    four steps keeps them apart; members scheduled in one cycle cannot share."""
    lanes = outshare.group_lanes(FUS_4X4, 4)
    when = tuple(4 + r + c for r, c in FUS_4X4)
    assert outshare.periods(lanes, (tuple(range(16)),), when, ("main",)) == (4,)
    assert outshare.periods((), (tuple(range(16)),), when, ("main",)) == (1,)
    # a dataflow that writes only the bottom row needs none
    assert outshare.periods(lanes, ((-1,) * 12 + (0, 1, 2, 3),), when, ("icoc",)) == (1,)
    flat = tuple(4 + c for _, c in FUS_4X4)  # control flow 0 along the column
    with pytest.raises(ConfigError, match="arch.out_lanes: two FUs of output lane 0 write in the same cycle"):
        outshare.periods(lanes, (tuple(range(16)),), flat, ("main",))


def test_a_column_of_any_height_shares_its_lanes():
    """``ceil(rows / out_lanes)`` FUs per lane (the last lane of a column may have fewer), at most one
    lane per FU; a negative count is refused."""
    from lego_build.frontend.adg_build import build_adg

    for rows, lanes, want in ((4, 3, 8), (5, 2, 8), (4, 8, 0), (13, 2, 8)):
        cfg = compose([f"arch.rows={rows}", f"arch.out_lanes={lanes}"])
        net = build_adg(gemm(24, 20, 16), cfg.arch).net("Y")
        assert outshare.count(net.lanes, len(net.ports)) == want or (not want and not net.lanes)
    with pytest.raises(ConfigError, match=r"^arch.out_lanes=-1: must be >= 0"):
        compose(["arch.out_lanes=-1"])


def test_shared_lanes_keep_the_banks_bits_and_a_short_reduction_is_held(tmp_path):
    """The design: a bank pair per column, four times as deep (the same SRAM); a GEMM whose whole
    reduction is 2 steps holds each accumulation's first step 2 cycles more, which the mapper's
    model and the memory system's latency model count."""
    cycles = {}
    for group in (1, 4):
        cfg = compose([f"arch.out_lanes={4 // group}", "target=rtl", "workload.K=2"])
        for stage in ("analyze", "graph", "optimize", "map"):
            run_stage(stage, cfg, tmp_path / str(group))
        (layer,) = read_artifact(tmp_path / str(group), "mapping.json").layers
        assert layer["status"] == "mapped"
        cycles[group] = (layer["cycles"], layer["cycles_model"], layer["steps"])
    out = read_artifact(tmp_path / "4", "dag.json").buffer("Y")
    assert (out.lanes, out.banks, out.depth, out.share) == (16, 4, 4 * 4096, (0, 1, 2, 3) * 4)
    assert cycles[4][2] == cycles[1][2] == 32  # 16 accumulations of 2 steps, each held 2 more
    assert cycles[4][0] == cycles[1][0] + 32 and cycles[4][1] == cycles[1][1] + 32


def _gemm_tiles(adg: ADG, arch, rng, count: int, short: bool, period: int) -> list[Tile]:
    """Random GEMM tiles the array runs, every accumulation ``period`` steps or more (or, ``short``,
    fewer: held), each with several commits per FU (what would collide)."""
    out = []
    while len(out) < count:
        k = int(rng.integers(1, period)) if short else int(rng.integers(period, 3 * period))
        layer = gemm(int(rng.integers(5, 13)), int(rng.integers(3, 9)), k)
        kernel = lower(layer, adg.kernel)
        usable = [df for df in adg.dataflows if not link_conflict(kernel, adg, df, arch)
                  and outshare.shift(adg.net("Y").lanes, adg.net("Y").packs[adg.dataflows.index(df)])]
        if not usable:
            continue
        df = usable[int(rng.integers(len(usable)))]
        loops = tiled_loops(kernel, df.virtual)
        reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
        order = [d.name for d in kernel.dims if d.name not in reduction] + sorted(reduction)
        tile, tm = fit_tile(kernel, Mapping(df.virtual, tuple(loops[d] for d in order)), adg.capacities(df.name),
                            2000)
        out.append(Tile(f"k{k}-{len(out)}", layer_kind(layer), tile, tm, df.name))
    return out


@pytest.mark.slow
def test_random_tiles_are_exact_and_shorter_accumulations_are_held(tmp_path):
    """Every output exact and every cycle count the predicted one; the accumulations shorter than
    the lane's period take the period (the prediction counts the held first steps: without them
    the tiles would run fewer cycles, and the members' writes would meet). lego_mnicoc's shared
    lanes, whose period differs per dataflow, run tests/test_sim_random.py's random tiles."""
    verilator.require_verilator()
    cfg = compose(["arch.out_lanes=1", "target=rtl"])
    for stage in ("analyze", "graph", "optimize", "emit"):
        run_stage(stage, cfg, tmp_path)
    adg = from_jsonable(ADG, read_json(tmp_path / "adg.json"))
    hm = from_jsonable(HostMap, read_json(tmp_path / "rtl" / "host_interface.json"))
    period = max(hm.out_periods)
    assert period > 1
    top = (tmp_path / "rtl" / "lego_top.v").read_text()
    assert len(set(re.findall(r"\bu_bank_Y_(\d+)_h0\b", top))) == outshare.count(adg.net("Y").lanes, 16) < 16
    rng = np.random.default_rng(44)
    good, short = _gemm_tiles(adg, cfg.arch, rng, 12, False, period), _gemm_tiles(adg, cfg.arch, rng, 4, True, period)
    binary = verilator.build(tmp_path / "rtl", tmp_path / "build", False)
    results = run_tiles(binary, hm, adg, good + short, seed=5, max_cycles=10**6)
    assert all(r["match"] and r["cycles_match"] for r in results), [r for r in results if not r["match"]][:2]
    held = [r for r in results[len(good):]]
    assert all(r["cycles_simulated"] > hm.cycles(r["steps"]) for r in held)


@pytest.mark.slow
def test_a_whole_layer_leaves_through_the_write_engine_as_without_sharing(tmp_path):
    """The write engine reads a DRAM row's words from the bank rows of the shared lanes (a beat
    from one): every output exact, the cycles those of the design with a lane per FU (every
    accumulation of this layer's tiles is at least the lanes' four steps: none is held)."""
    verilator.require_verilator()
    layer = ["workload.M=30", "workload.N=22", "workload.K=32", "arch.buffer_depth=32", "target.scope=layers"]
    cycles = {}
    for group in (1, 4):
        run_all(compose([*layer, f"arch.out_lanes={4 // group}"]), tmp_path / str(group))
        res = read_artifact(tmp_path / str(group), "sim/result.json")
        (run,) = res.layers
        assert res.status == "pass" and run["mismatches"] == 0 and run["outputs"] == 30 * 22 and run["tiles"] > 1
        assert abs(run["error"]) <= 0.02
        cycles[group] = run["cycles"]
    assert cycles[4] == cycles[1]
