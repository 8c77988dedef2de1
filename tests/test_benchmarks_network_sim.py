"""benchmarks/network_sim.py: a whole network in RTL through the memory system (one small GEMM with
--quick); records of other runs in the results file stay."""
import json

import pytest

from benchmarks import network_sim


@pytest.mark.slow
def test_quick_run_adds_its_record_beside_the_others(tmp_path):
    out = tmp_path / "r.json"
    out.write_text(json.dumps([{**network_sim.earlier_runs(network_sim.harness.results_path("network_sim"))
                                ["resnet18-gemmini_like"], "commit": "x"}]))
    assert network_sim.main(["--quick", "--out", str(out)]) == 0
    runs = {r["name"]: r for r in json.loads(out.read_text())["figures"]["runs"]}
    assert set(runs) == {"gemm-4x4", "resnet18-gemmini_like"}
    assert runs["gemm-4x4"]["status"] == "pass" and runs["gemm-4x4"]["mismatches"] == 0
    assert runs["gemm-4x4"]["quick"] and runs["gemm-4x4"]["cache"] == "as found"
