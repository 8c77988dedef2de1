"""Differential test per pass: every pipeline the optimizer accepts still computes what NumPy computes."""
import pytest

from lego_build import compose, run_all
from lego_build.runtime.atomic import read_json

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

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


KHOH_ICOC = ["arch=lego_khoh_icoc", "arch.rows=4", "arch.cols=4", "workload=conv2d", "workload.in_h=6",
             "workload.in_w=6", "workload.in_ch=4", "workload.out_ch=4"]
MNICOC = ["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4"]
SHIDIANNAO = ["arch=shidiannao", "workload=conv2d", "workload.in_h=8", "workload.in_w=8", "workload.in_ch=2",
              "workload.out_ch=2"]


@pytest.mark.parametrize("design,extra,changes", [
    (KHOH_ICOC, "pin_reuse", "adder_inputs"),  # switchable reducers share pins
    (MNICOC, "power_gating", "gated_register_bits"),  # IC-OC's links idle in MN
    (ICOC, "delay_elaboration", None),  # edge delays become explicit delay blocks
    (SHIDIANNAO, "fifo_sizing", "fifo_bits"),  # kw-shift FIFOs shrink to one word
    ([], "mac_fusion", "nodes"),  # multiply + accumulate in one primitive
    (MNICOC, "acc_fusion", "adders"),  # the FUs' adders into their accumulators
], ids=["pin_reuse", "power_gating", "delay_elaboration", "fifo_sizing", "mac_fusion", "acc_fusion"])
def test_each_remaining_pass_acts_and_keeps_the_array_bit_exact(tmp_path, design, extra, changes):
    """The mandatory pair plus one pass, on a design where that pass changes the hardware."""
    from lego_build.backend.passes import ORDER, get

    needed = {"bitwidth", "delay_matching", extra}
    needed |= {p for p in ORDER if set(get(p).provides) & set(get(extra).requires) - {"schedule", "widths"}}
    passes = [p for p in ORDER if p in needed]
    run_all(compose([*design, f"optimizer.passes=[{','.join(passes)}]"]), tmp_path)
    result = read_json(tmp_path / "sim" / "result.json")
    assert result["match"] and result["cycles_match"], result
    log = {p["pass"]: p for p in read_json(tmp_path / "passes.json")["passes"]}
    before = log[passes[passes.index(extra) - 1]] if passes.index(extra) else log["codegen"]
    if changes:
        assert log[extra][changes] != before[changes], (extra, changes)
    else:
        dag = read_json(tmp_path / "dag.json")
        assert any(n["kind"] == "delay" for n in dag["nodes"])
