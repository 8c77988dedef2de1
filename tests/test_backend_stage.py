"""Differential test per pass: every pipeline the optimizer accepts still computes what NumPy computes."""
import pytest

from lego_build import compose, run_all
from lego_build.flow.atomic import read_json

ICOC = ["workload=conv2d", "arch.family=conv2d", "arch.dataflows.main.spatial=[ic,oc]", "arch.control_flow=[0,0]",
        "workload.in_h=6", "workload.in_w=5", "workload.in_ch=6", "workload.out_ch=5"]


@pytest.mark.parametrize("passes", [
    "[bitwidth,delay_matching]",  # the mandatory pair: widths for the LP's weights, then timing
    "[reduction_tree,bitwidth,delay_matching]",
    "[bitwidth,delay_matching,broadcast_rewiring]",
    "[reduction_tree,bitwidth,delay_matching,broadcast_rewiring]",
])
def test_each_pass_keeps_the_array_bit_exact(tmp_path, passes):
    run_all(compose([*ICOC, f"optimizer.passes={passes}"]), tmp_path)
    result = read_json(tmp_path / "sim" / "result.json")
    assert result["match"] and result["cycles_match"], result
    log = read_json(tmp_path / "passes.json")
    assert [p["pass"] for p in log["passes"]] == ["codegen", *passes.strip("[]").split(",")]
