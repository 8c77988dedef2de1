"""lego_build.targets.energy_check: the cost model's per-level energy against the standard-cell
flow's, the table calibrated from it, and the mapper reading that table (issue 19, acceptance 4)."""
import json
import math

import pytest

from lego_build import ConfigError, compose, run_stage
from lego_build.targets.energy_check import calibrate, check

ASIC = {"node_nm": 180, "vdd": 1.8, "power_mhz": 100,
        "power_mw": {"FUs": 10.0, "array registers": 2.0, "array muxes and interconnect": 3.0, "SRAM banks": 20.0,
                     "controller": 1.0}}
TILES = [{"layer": "L", "macs": 128, "cycles": 200}, {"layer": "L", "macs": 16, "cycles": 30, "full": False}]
LAYERS = [{"name": "L", "status": "mapped", "macs": 1024,
           "energy_breakdown_pj": {"mac": 76.8, "acc": 20.48, "network": 10.0, "l1": 500.0, "dram": 9999.0}}]
ENERGY = {"mac_pj": 0.075, "hop_pj": 0.035, "l1_pj": 6.0, "dram_pj": 200.0, "table": ""}


def test_levels_by_hand():
    """A 128-MAC tile of a 1024-MAC layer: the model's levels are an eighth of the layer's; the
    measured ones are power x 200 cycles / 100 MHz = 2 us, moved to 28 nm at 0.9 V by
    28 / 180 x (0.9 / 1.8)²; DRAM is off chip, the controller has no level; the run on a
    reduced tile is left out."""
    got = check(ASIC, TILES, LAYERS)
    s = 28 / 180 * 0.25
    want = {"mac": ((76.8 + 20.48) / 8, 10 * 2e3 * s), "network": (10 / 8, 5 * 2e3 * s), "l1": (500 / 8, 20 * 2e3 * s)}
    assert [r["level"] for r in got["levels"]] == list(want)
    for r in got["levels"]:
        model, measured = want[r["level"]]
        assert math.isclose(r["model_pj"], model, abs_tol=1e-3)
        assert math.isclose(r["measured_pj"], measured, abs_tol=1e-3)
        assert math.isclose(r["error"], (model - measured) / measured, abs_tol=1e-4)
    assert got["macs"] == 128 and math.isclose(got["acc_pj"], 20.48 / 8)
    assert math.isclose(got["not_modelled_pj"]["controller"], 1 * 2e3 * s, abs_tol=1e-3)


def test_calibrated_table_makes_the_model_equal_the_measurement():
    """mac_pj so that MACs x mac_pj + the accumulator's energy is the FUs'; hop and l1 scaled by
    their level's measured / model ratio."""
    got = check(ASIC, TILES, LAYERS)
    lv = {r["level"]: r for r in got["levels"]}
    table = calibrate(got, ENERGY)
    assert math.isclose(128 * table["mac_pj"] + got["acc_pj"], lv["mac"]["measured_pj"], rel_tol=1e-5)
    assert math.isclose(table["hop_pj"] / 0.035, lv["network"]["measured_pj"] / lv["network"]["model_pj"], rel_tol=1e-5)
    assert math.isclose(table["l1_pj"] / 6.0, lv["l1"]["measured_pj"] / lv["l1"]["model_pj"], rel_tol=1e-5)
    with pytest.raises(ValueError, match="no model or no measured energy"):
        calibrate(check({**ASIC, "power_mw": {"FUs": 1.0}}, TILES, LAYERS), ENERGY)


def _choices(tmp_path, name, overrides):
    cfg = compose(["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4", "workload=bert", *overrides])
    for stage in ("analyze", "graph", "optimize", "map"):
        run_stage(stage, cfg, tmp_path / name)
    doc = json.loads((tmp_path / name / "mapping.json").read_text())
    return [(e["name"], e.get("dataflow"), json.dumps(e.get("schedule"), sort_keys=True)) for e in doc["layers"]]


def test_the_mapper_reads_the_table_and_nothing_else(tmp_path):
    """A calibrated table (the figures `doit calibrate` measured on a 4x4 lego_mnicoc) changes
    BERT's mapping on that array, exactly as the same numbers typed as overrides do."""
    table = tmp_path / "energy_table.yaml"
    table.write_text("# calibrated\nmac_pj: 1.266722\nhop_pj: 2.916842\nl1_pj: 13.703006\n")
    default = _choices(tmp_path, "default", [])
    from_table = _choices(tmp_path, "table", [f"arch.energy.table={table}"])
    typed = _choices(tmp_path, "typed", ["arch.energy.mac_pj=1.266722", "arch.energy.hop_pj=2.916842",
                                         "arch.energy.l1_pj=13.703006"])
    assert from_table == typed and from_table != default


@pytest.mark.parametrize("text, match", [
    (None, r"arch.energy.table=.*missing.yaml: cannot read it"),
    ("mac_pj: 1\nhop_pj: 2\n", r"arch.energy.table=.*: no positive l1_pj"),
    ("mac_pj: -1\nhop_pj: 2\nl1_pj: 3\n", r"arch.energy.table=.*: no positive mac_pj"),
])
def test_a_bad_table_is_a_one_line_error(tmp_path, text, match):
    path = tmp_path / "missing.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        compose([f"arch.energy.table={path}"])
