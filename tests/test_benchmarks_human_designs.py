"""benchmarks/human_designs.py: a design through target=asic, scaled to a published design's node and
clock beside it (the 2x2 array with --quick)."""
import json
import shutil

import pytest

from benchmarks import human_designs

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (shutil.which("sta") and shutil.which("yosys")),
                                                   reason="needs Debian's qflow (apt-get install -y qflow)")]


def test_quick_run_scales_to_the_published_node(tmp_path):
    assert human_designs.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    (row,) = json.loads((tmp_path / "r.json").read_text())["figures"]["tables"][0]["rows"]
    assert row[6] == "65 nm, 200 MHz" and 0 < row[7] < row[3] and row[10].startswith("Eyeriss: 60 nm")
