"""The per-layer lower bound and optimality gap (lego_build.mapping.bounds), the search's stops
(``mapper.gap``, ``mapper.budget``) and their bad values."""
from __future__ import annotations

import pytest
from conftest import long_where

from lego_build import compose
from lego_build.analysis.lowering import lower
from lego_build.analysis.stage import load_layers
from lego_build.errors import ConfigError
from lego_build.flow.stages import run_stage
from lego_build.mapping.bounds import lower_bound
from lego_build.mapping.searches import Exhaustive, RandomSearch
from lego_build.mapping.stage import layer_space, link_conflict
from lego_build.runtime.artifacts import read_artifact

#: generated arrays and model-only hierarchies, window and strided layers, GEMMs
CASES = {
    "systolic-gemm": ["workload.M=12", "workload.N=8", "workload.K=20"],
    "eyeriss-conv": ["arch=eyeriss", "workload=conv2d", "workload.in_ch=8", "workload.out_ch=6",
                     "workload.in_h=9", "workload.in_w=9"],
    "eyeriss-stride2": ["arch=eyeriss", "workload=conv2d", "workload.in_ch=4", "workload.out_ch=8",
                        "workload.in_h=12", "workload.in_w=12", "workload.stride=2"],
    "eyeriss_ruby-conv": ["arch=eyeriss_ruby", "workload=conv2d", "workload.in_ch=8", "workload.out_ch=8",
                          "workload.in_h=8", "workload.in_w=8"],
    "interstellar-conv": ["arch=interstellar_ck", "workload=conv2d", "workload.in_ch=8", "workload.out_ch=8",
                          "workload.in_h=6", "workload.in_w=6"],
}


def spaces(overrides, tmp_path, mapspace="pfm"):
    cfg = compose([*overrides, f"mapper.mapspace={mapspace}"])
    for stage in ("analyze", "graph", "optimize"):
        run_stage(stage, cfg, tmp_path)
    adg = read_artifact(tmp_path, "adg.json")
    for _, kernel in load_layers(tmp_path):
        k = lower(kernel, cfg.arch.family)
        for df in adg.dataflows:
            if not link_conflict(k, adg, df, cfg.arch):
                space = layer_space(k, adg, df, cfg.arch, cfg.mapper, 8)
                if not space.remainder_reason(df.name):  # as the map stage: PFM keeps spatial levels perfect
                    yield df.name, space


#: the two largest exhaustive searches (38 and 17 s on two cores): the long tier's; Eyeriss's stride-2 conv,
#: Interstellar's and the systolic GEMM are searched in CI
LONG = {"eyeriss_ruby-conv", "eyeriss-conv"}


@pytest.mark.slow  # an exhaustive search per real layer (43 s on eyeriss_ruby)
@pytest.mark.parametrize("case", long_where(sorted(CASES), LONG))
def test_no_mapping_beats_the_bound(case, tmp_path):
    """Every valid candidate of an exhaustive (or, where too large, long random) search costs at
    least the bound, in energy and in cycles; and the bound is reached within the model's
    counting where a layer fits on chip (the default GEMM: 5 %)."""
    checked = 0
    for mapspace in ("pfm", "ruby"):
        for name, space in spaces(CASES[case], tmp_path / mapspace, mapspace):
            b = lower_bound(space.m)
            search = Exhaustive(space, "energy", limit=20_000)
            if search.size() > search.limit:
                search = RandomSearch(space, "energy", patience=3000, seed=1)
            while (s := search.ask()) is not None:
                ev = search.evaluate(s)
                search.tell(s, ev)
                if ev.valid:
                    checked += 1
                    assert ev.energy_pj >= b.energy_pj * (1 - 1e-9), (name, s)
                    assert ev.cycles >= b.cycles, (name, s)
            assert search.best is not None
            assert 0 <= b.gap("edp", search.best[1].energy_pj, search.best[1].cycles) < 1
    assert checked > 50


def test_bound_prices_what_every_mapping_must_move(tmp_path):
    """On the default 4x4 array a 16x16x16 GEMM: 4,096 MACs on 16 PEs take at least 256 steps plus one
    controller run (a start cycle, the read-modify-write cycle and the pipeline's 8), and DRAM moves
    each operand once (256 words of 8 bits each) and each output once."""
    ((_, space),) = list(spaces([], tmp_path))
    b = lower_bound(space.m)
    assert b.cycles == 256 + 2 + 8
    dram = {role: pj for lv, role, pj in b.breakdown if lv == "dram"}
    e = space.m.h.levels[-1]
    assert dram["input"] == pytest.approx(256 * 8 / e.width_bits * e.read_pj)
    assert dram["output"] == pytest.approx(256 * 8 / e.width_bits * e.write_pj)
    assert b.gap("energy", b.energy_pj, b.cycles) == 0 and b.gap("energy", 2 * b.energy_pj, 1) == 0.5


def test_map_stage_reports_the_gap_and_stops_within_it(tmp_path):
    """``mapping.json`` carries each layer's bound and gap and the network's; ``mapper.gap`` ends a
    search once within the tolerance, ``mapper.budget`` after that many candidates."""
    base = ["workload=conv2d", "arch=eyeriss", "mapper.search=exhaustive"]
    results = {}
    for tag, extra in (("full", []), ("gap", ["mapper.gap=0.8"]), ("budget", ["mapper.budget=7"])):
        cfg = compose(base + extra)
        work = tmp_path / tag
        for stage in ("analyze", "graph", "optimize", "map"):
            run_stage(stage, cfg, work)
        results[tag] = read_artifact(work, "mapping.json")
    (full,), (gap,), (budget,) = (results[t].layers for t in ("full", "gap", "budget"))
    assert full["bound"]["cycles"] > 0 and 0 < full["gap"] < 1 and "stopped" not in full
    assert results["full"].totals["gap"] == pytest.approx(full["gap"], abs=1e-6)
    assert gap["gap"] <= 0.8 and gap["stopped"].startswith("mapper.gap:")
    assert sum(gap["candidates"].values()) < sum(full["candidates"].values())
    assert budget["stopped"] == "mapper.budget: 7 candidates evaluated"
    assert full["energy_pj"] <= gap["energy_pj"] and full["energy_pj"] <= budget["energy_pj"]


@pytest.mark.parametrize("override, message", [
    ("mapper.gap=0", r"^mapper.gap=0.0: a tolerance between 0 and 1"),
    ("mapper.gap=1", r"^mapper.gap=1.0: a tolerance between 0 and 1"),
    ("mapper.gap=-0.2", r"^mapper.gap=-0.2: a tolerance between 0 and 1"),
    ("mapper.budget=0", r"^mapper.budget=0: the candidates a layer's search may evaluate must be a positive"),
])
def test_bad_gap_and_budget(override, message):
    with pytest.raises(ConfigError, match=message):
        compose([override])


@pytest.mark.parametrize("overrides, note", [
    (["mapper=pfm"], None),
    (["mapper=ruby_t"], None),
    (["mapper=random"], None),
    (["mapper=ruby_s"], None),
    (["mapper=rtml"], "mapper=rtml: mapspace pfm with search rtml is what mapper=pfm runs"),
    (["arch=gemmini_like", "workload=conv2d"], "mapper=ruby_s: arch.tiling=gemmini picks every tile by Gemmini's rule"),
])
def test_presets_that_cannot_act_say_so(overrides, note):
    """Issue 22: a mapper preset that cannot change anything on an arch says so in one line
    (and those that can, say nothing)."""
    from lego_build.mapping.stage import preset_notes

    cfg = compose(overrides)
    notes = preset_notes(cfg.mapper, cfg.arch)
    assert (notes == []) if note is None else (len(notes) == 1 and notes[0].startswith(note) and "\n" not in notes[0])


def test_a_soft_stop_ends_the_search_with_its_best(tmp_path):
    """The first Ctrl-C of a map stage (lego_build.runtime.stop) ends a search at its next
    candidate once it has a valid one, keeping that best."""
    from lego_build.runtime import stop

    ((_, space),) = list(spaces(CASES["systolic-gemm"], tmp_path))
    full = Exhaustive(space, "energy")
    full.run()

    class Interrupted(Exhaustive):
        def tell(self, s, ev):
            improved = super().tell(s, ev)
            if sum(e["status"] == "valid" for e in self.log) == 3:
                stop.request()  # what tasks.on_signal does on the first SIGINT of the map stage
            return improved

    search = Interrupted(space, "energy")
    try:
        best = search.run()
    finally:
        stop.clear()
    assert search.stopped.startswith("interrupted (Ctrl-C): the best of ") and best is not None
    assert sum(e["status"] == "valid" for e in search.log) == 3 < sum(e["status"] == "valid" for e in full.log)
