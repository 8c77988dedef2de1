"""benchmarks/tso.py: seed 003's table on LeNet-5 (--quick), the paper's row beside ours."""
import json

from benchmarks import tso


def test_quick_run_puts_the_papers_row_beside_ours(tmp_path):
    assert tso.main(["--quick", "--jobs", "1", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    rows = doc["figures"]["tables"][0]["rows"]
    assert [r[0] for r in rows] == ["lenet", "lenet (paper)"] and rows[1][2] == 199
    assert doc["paper"]["source"].startswith("seed 003")
