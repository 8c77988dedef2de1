"""benchmarks/ruby.py: Ruby-S against PFM through the map stage, on LeNet-5 (--quick)."""
import json

import pytest

from benchmarks import ruby


@pytest.mark.slow
def test_quick_run_compares_both_unrolling_spaces(tmp_path):
    assert ruby.main(["--quick", "--out", str(tmp_path / "r.json")]) == 0
    rows = json.loads((tmp_path / "r.json").read_text())["figures"]["tables"][0]["rows"]
    assert [r[0] for r in rows] == ["mapper.unroll=search", "mapper.unroll=dataflows",
                                    "paper (seed 002 §V, its searched unrolling)"]
