"""benchmarks/lego_vs_gemmini.py: both designs through the map stage, the speed-up beside the paper's
(LeNet-5 at 4x4 with --quick)."""
import json

from benchmarks import lego_vs_gemmini


def test_quick_run_records_the_speedup_beside_the_papers(tmp_path):
    assert lego_vs_gemmini.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    rows = json.loads((tmp_path / "r.json").read_text())["figures"]["tables"][0]["rows"]
    assert rows[0][0] == "lenet" and rows[0][3] > 1 and rows[-1] == ["seed 004 §6.2 (paper)", "", "", 3.2, 2.4, ""]
