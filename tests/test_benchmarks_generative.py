"""benchmarks/generative.py: Table 6.1's columns, the paper's beside ours (LLaMA-7B on a 4x4 with --quick)."""
import json

import pytest

from benchmarks import generative


@pytest.mark.slow
def test_quick_run_puts_the_papers_figures_beside_ours(tmp_path):
    assert generative.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    (row,) = json.loads((tmp_path / "r.json").read_text())["figures"]["tables"][0]["rows"]
    assert row[0] == "llama7b_bs1" and row[4] == "3.1%" and row[6] == 63 and row[10] == "model"
