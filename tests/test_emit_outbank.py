"""emit/outbank.py and the FPGA back end (optimizer=fpga: registered bank reads, the pipelined
read-modify-write, MAC fusion, an input bank's halves in one memory): whole layers through the
memory system, every output compared, cycles against the latency model. The read-modify-write's
forwarding is exercised on its own, back to back, in tests/test_rtl_templates.py."""
import re

import pytest

from lego_build import compose, run_all
from lego_build.backend.passes.pipelined_rmw import PIPELINED_WRITE
from lego_build.runtime.artifacts import read_artifact
from lego_build.sim import verilator

pytestmark = pytest.mark.slow

LAYERS = {
    # a partial last tile along m and k (Ruby's mapspace): output tiles accumulate over k tiles
    "gemm-partial-tiles": (["workload.M=50", "workload.N=30", "workload.K=37", "arch.buffer_depth=32",
                            "mapper.mapspace=ruby"], 50 * 30),
    # lego_mnicoc's folded input banks under MN: registered reads picking slices; its shared output
    # lanes (arch.out_lanes: 2) written in six cycles (the merged request registered, then five),
    # read ahead by the write engine's queue
    "folded-mn": (["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4", "arch.onchip_kb=0", "arch.buffer_depth=16",
                   "workload=conv2d", "workload.in_ch=32", "workload.out_ch=4", "workload.in_h=4", "workload.in_w=4",
                   "mapper.objective=latency"], 4 * 4 * 4),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_the_fpga_back_end_runs_whole_layers_bit_exactly(tmp_path, name):
    verilator.require_verilator()
    overrides, outputs = LAYERS[name]
    run_all(compose([*overrides, "optimizer=fpga", "target.scope=layers"]), tmp_path)
    res = read_artifact(tmp_path, "sim/result.json")
    assert res.status == "pass" and res.products["lint"] == "clean"
    (layer,) = res.layers
    assert layer["outputs"] == outputs and layer["mismatches"] == 0 and layer["tiles"] > 1
    assert abs(layer["error"]) <= 0.02
    dag = read_artifact(tmp_path, "dag.json")
    assert {n.latency for n in dag.nodes if n.kind == "read"} == {2}
    folded = name.startswith("folded")  # the input banks fold
    (out,) = [b for b in dag.buffers if b.role == "out"]
    assert bool(out.share) == folded and out.logical_bits == out.addr_bits  # shared output lanes do not fold
    # a shared lane registers its members' merged request before the read-modify-write: a cycle more
    assert {n.latency for n in dag.nodes if n.kind == "write"} == {PIPELINED_WRITE + folded}
    top = (tmp_path / "rtl" / "lego_top.v").read_text()
    assert "lego_rmw_pipe" in top
    # merged_halves: an input lane's halves are one memory unless its banks fold; outputs keep two
    halves = set(re.findall(r"\bu_bank_([A-Za-z]+)_0_h1\b", top))
    whole = set(re.findall(r"\bu_bank_([A-Za-z]+)_0\n", top))
    ins = {b.tensor for b in dag.buffers if b.role == "in"}
    assert out.tensor in halves and (halves, whole) == (({out.tensor} | ins, set()) if folded else ({out.tensor}, ins))
