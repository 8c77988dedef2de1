"""Pass pipeline order and delay matching (seed 004 §5.2, eq. 5.1-5.2)."""
import pytest

from lego_build import compose
from lego_build.analysis.from_config import workload_from_config
from lego_build.analysis.kernels import gemm
from lego_build.backend.codegen import build_dag
from lego_build.backend.passes import ORDER, Pass, check_order, pipeline
from lego_build.backend.passes.bitwidth import signed_bits
from lego_build.backend.passes.delay_matching import greedy_schedule, lp_schedule
from lego_build.backend.passes.pipelined_rmw import PIPELINED_WRITE, forwards
from lego_build.backend.stage import optimize
from lego_build.config.schema import OptimizerConf
from lego_build.frontend.adg_build import build_adg
from lego_build.ir.dag import DAG, Edge, Node

#: the switchable GEMM array the LEGO-MNICOC preset was before it became seed 004 §6's conv array
GEMM_MNICOC = ["arch=lego_mnicoc", "arch.family=gemm", "~arch.dataflows.ohow", "arch.dataflows.mn.spatial=[m,n]",
               "arch.dataflows.icoc.spatial=[k,n]"]

LEGO_PASSES = list(OptimizerConf().passes)
LP = OptimizerConf(passes=LEGO_PASSES, delay_matching="lp", time_limit_s=30.0)
GREEDY = OptimizerConf(passes=["bitwidth", "delay_matching"], delay_matching="greedy", time_limit_s=30.0)


def test_pipeline_order_satisfies_every_requirement():
    check_order(pipeline())


def test_check_order_names_the_misplaced_pass():
    with pytest.raises(ValueError, match="delay_matching requires widths"):
        check_order(pipeline(("delay_matching", "bitwidth")))
    with pytest.raises(ValueError, match="needs"):
        check_order((Pass("x", ("needs",), (), lambda d, c: d),))


def test_signed_bits():
    assert signed_bits(-128, 127) == 8
    assert signed_bits(-16256, 16384) == 16
    assert signed_bits(0, 0) == 1


def _narrowing_dag() -> DAG:
    """A 4-bit control source widens into a 32-bit path that must wait for a 1-cycle read.

    Greedy matches at the unmatched node's nearest input (32 bits); the LP moves the
    register before the widening node (4 bits): the fig. 5-3 situation, cost 32 -> 4.
    """
    nodes = (
        Node("ctrl", "ctrl", 0, 4), Node("agen_A", "agen", 0, 8),
        Node("rd", "read", 1, 32), Node("widen", "pin", 0, 32), Node("mul", "mul", 1, 32),
    )
    edges = (
        Edge("agen_A", "addr", "rd", "addr", 8),
        Edge("ctrl", "first", "widen", "in", 4),
        Edge("rd", "data", "mul", "a", 32),
        Edge("widen", "out", "mul", "b", 32),
    )
    return DAG((1, 1), 1, 1, 16, (), nodes, edges)


def test_lp_moves_registers_to_narrow_edges_greedy_does_not():
    dag = _narrowing_dag()
    greedy = dag.with_delays(greedy_schedule(dag))
    schedule, objective = lp_schedule(dag, 30.0, "cbc")
    lp = dag.with_delays(schedule)
    assert greedy.register_bits() == 32
    assert lp.register_bits() == 4 == objective
    assert all(e.delay >= 0 for e in lp.edges)


def test_systolic_array_lp_beats_greedy_and_matches_every_path():
    cfg = compose(["arch.rows=8", "arch.cols=8"])
    adg = build_adg(workload_from_config(cfg.workload).layers[0].kernel, cfg.arch)
    lp, log_lp, _ = optimize(adg, LP)
    greedy, log_greedy, _ = optimize(adg, GREEDY)
    assert lp.register_bits() < greedy.register_bits()
    assert log_lp[-1]["register_bits"] == lp.register_bits()
    for dag in (lp, greedy):
        d = dag.start_times()
        lat = {n.name: n.latency for n in dag.nodes}
        for e in dag.edges:  # eq. 5.1 holds with equality once E is inserted
            assert d[e.dst] == d[e.src] + e.delay + lat[e.dst]
        base = d["mul_0_0"]
        for name, off in dag.anchors:  # FU s runs s·c cycles after FU 0 (eq. 3.6)
            assert d[name] - base == off
        assert dag.latency == 1 + 7 + 7 + 2 + 1  # read, row skew, column skew, operand + product, accumulate


def test_bitwidth_pass_narrows_products_to_16_bits():
    cfg = compose([])
    dag = build_dag(build_adg(workload_from_config(cfg.workload).layers[0].kernel, cfg.arch))
    assert dag.node("mul_0_0").width == 32
    from lego_build.backend.passes import bitwidth

    narrowed = bitwidth.run(dag, OptimizerConf())
    assert narrowed.node("mul_0_0").width == 16
    assert {e.width for e in narrowed.edges if e.src.startswith("mul_")} == {16}


def test_every_pass_module_declares_its_pass():
    assert tuple(p.name for p in pipeline()) == ORDER
    assert [p for p in ORDER if p in LEGO_PASSES] == LEGO_PASSES  # the default keeps the canonical order


@pytest.mark.parametrize("passes, message", [
    ("[bitwidth]", "delay_matching is mandatory"),
    ("[delay_matching,bitwidth]", "delay_matching requires widths"),
    ("[bitwidth,fold,delay_matching]", "unknown pass 'fold'"),
    ("[bitwidth,broadcast_rewiring,delay_matching]", "broadcast_rewiring requires schedule"),
    ("[bitwidth,delay_matching,registered_reads]", "registered_reads must run before the pass providing schedule"),
])
def test_optimizer_passes_are_validated(passes, message):
    from lego_build import ConfigError

    with pytest.raises(ConfigError, match=message):
        compose([f"optimizer.passes={passes}"])


def _icoc_adg(rows, c):
    cfg = compose(["arch.family=conv2d", f"arch.rows={rows}", "arch.cols=2", "arch.dataflows.main.spatial=[ic,oc]",
                   f"arch.control_flow=[{c[0]},{c[1]}]"])
    from lego_build.analysis.kernels import conv2d

    return build_adg(conv2d(1, 16, 4, 6, 6, 3, 3), cfg.arch)


def test_reduction_tree_balances_broadcast_chains():
    from lego_build.backend.passes import reduction_tree

    dag = build_dag(_icoc_adg(8, (0, 0)))
    tree = reduction_tree.run(dag, OptimizerConf())
    adds = [n for n in tree.nodes if n.kind == "add"]
    assert len(adds) == 2 * 7  # 8 leaves per column -> 7 two-input adders, two columns
    assert all(len(tree.inputs_of(n.name)) == 2 for n in adds)
    lp = dict(delay_matching="lp", time_limit_s=30.0)
    chain = optimize(_icoc_adg(8, (0, 0)), OptimizerConf(passes=["bitwidth", "delay_matching"], **lp))[0]
    balanced = optimize(_icoc_adg(8, (0, 0)), OptimizerConf(passes=LEGO_PASSES, **lp))[0]
    # a chain of seven adders becomes log2(8) = 3 levels, the root's in the accumulator (acc_fusion)
    assert balanced.latency == chain.latency - 7 + 3 - 1
    assert balanced.register_bits() < chain.register_bits() / 3


def test_reduction_tree_leaves_systolic_chains_alone():
    from lego_build.backend.passes import reduction_tree

    dag = build_dag(_icoc_adg(8, (1, 1)))
    assert reduction_tree.run(dag, OptimizerConf()).nodes == dag.nodes


def test_broadcast_rewiring_turns_fanout_delays_into_one_chain():
    from lego_build.backend.passes import broadcast_rewiring, delay_matching

    cfg = compose(["arch.rows=8", "arch.cols=8"])
    adg = build_adg(workload_from_config(cfg.workload).layers[0].kernel, cfg.arch)
    matched, _, _ = optimize(adg, OptimizerConf(passes=["bitwidth", "delay_matching"], delay_matching="lp",
                                                time_limit_s=30.0))
    rewired = broadcast_rewiring.run(matched, LP)
    assert rewired.register_bits() < matched.register_bits() / 4
    assert rewired.latency == matched.latency
    # the controller's commit pin now drives one tap chain instead of 64 private delay lines
    commit = [e for e in rewired.edges if e.src == "ctrl" and e.src_port == "commit"]
    assert len(commit) == 1 and commit[0].dst.startswith("ctrl_commit_tap")
    d = rewired.start_times()
    lat = {n.name: n.latency for n in rewired.nodes}
    assert all(d[e.dst] == d[e.src] + e.delay + lat[e.dst] >= d[e.src] for e in rewired.edges)
    assert delay_matching.broadcast_groups(rewired)


def test_pin_reuse_program_maps_exclusive_children_onto_one_pin():
    from lego_build.backend.passes.pin_reuse import _plan, remap

    table = {"p": {"a", "b"}, "c0": {"a"}, "c1": {"b"}}  # the product always, one child per dataflow
    mapping = remap(table, ("a", "b"), 30.0, "cbc")
    assert all(len(set(m.values())) == len(m) for m in mapping.values())  # one live input per pin
    plan = _plan(mapping, table, ("a", "b"), 2)
    assert plan is not None and sorted(len(feeding) for feeding, _ in plan) == [1, 2]  # p alone, c0/c1 shared
    (shared,) = [(f, c) for f, c in plan if len(f) == 2]
    assert {shared[0][shared[1]["a"]], shared[0][shared[1]["b"]]} == {"c0", "c1"}


def test_pin_reuse_shrinks_adders_of_the_switchable_conv_array():
    cfg = compose(["arch=lego_khoh_icoc", "arch.rows=4", "arch.cols=4", "workload=conv2d"])
    from lego_build.analysis.kernels import conv2d

    adg = build_adg(conv2d(1, 4, 4, 6, 6, 3, 3), cfg.arch)
    without, log_without, _ = optimize(adg, OptimizerConf(passes=["reduction_tree", "bitwidth", "delay_matching"],
                                                          delay_matching="lp", time_limit_s=30.0))
    reused, log_reused, _ = optimize(adg, LP)
    assert log_reused[-1]["adder_inputs"] < log_without[-1]["adder_inputs"]
    assert log_reused[-1]["muxes"] > log_without[-1]["muxes"]


def test_power_gating_enables_only_links_some_dataflow_leaves_idle():
    from lego_build.backend.passes.power_gating import live_edges

    cfg = compose([*GEMM_MNICOC, "arch.rows=4", "arch.cols=4"])
    adg = build_adg(gemm(16, 16, 16), cfg.arch)
    upto = LEGO_PASSES[:LEGO_PASSES.index("power_gating") + 1]
    dag, log, _ = optimize(adg, OptimizerConf(passes=upto, delay_matching="lp", time_limit_s=30.0))
    gated = [e for e in dag.edges if e.enable]
    assert gated and log[-1]["gated_register_bits"] == sum(e.width * e.delay for e in gated) > 0
    live = {df: live_edges(dag, df) for df in dag.dataflows}
    for i, e in enumerate(dag.edges):
        if e.enable:  # clocked exactly where live, and idle somewhere
            assert set(e.enable) == {df for df in dag.dataflows if i in live[df]} != set(dag.dataflows)
    # IC-OC's partial-sum links carry nothing in MN
    assert any(e.enable == ("icoc",) and e.src.startswith(("add_", "mul_", "gate_")) for e in gated)


def test_acc_fusion_folds_each_fus_adder_into_its_accumulator():
    """lego_mnicoc (MN and IC-OC on one 4x4 array): the adders of rows 1-2 join their accumulators
    by a select (IC-OC's chain, which never writes them), row 3's by a third input (its sum is
    written in both dataflows); no adder and no chain gate is left, and the product reaches the
    accumulator a cycle sooner. gemmini_like's columns end in the three-input form only."""
    from lego_build.ir.dag import GateSpec

    cfg = compose([*GEMM_MNICOC, "arch.rows=4", "arch.cols=4"])
    adg = build_adg(gemm(16, 16, 16), cfg.arch)
    without = [p for p in LEGO_PASSES if p != "acc_fusion"]
    plain, log_plain, _ = optimize(adg, OptimizerConf(passes=without, delay_matching="lp", time_limit_s=30.0))
    fused, log, _ = optimize(adg, LP)
    kinds = [n.kind for n in fused.nodes]
    assert "add" not in kinds and kinds.count("acc") == 16 and kinds.count("mul") == 16
    select = [n for n in fused.nodes if n.kind == "acc" and n.attrs is not None]
    assert sorted(n.name for n in select) == sorted(f"acc_{r}_{c}" for r in (1, 2) for c in range(4))
    assert {n.spec(GateSpec).dataflows for n in select} == {("icoc",)}
    into = fused.edges_into()
    for n in select:  # the chain's sum at the adder's width, not the accumulator's
        (c,) = (e for e in into[n.name] if e.dst_port == "c")
        assert c.src.startswith(("mul_0_", "acc_", "dly_mul_0_", "dly_acc_")) and c.width < n.width
    sums = [n.name for n in fused.nodes if n.kind == "acc" and any(e.dst_port == "c0" for e in into[n.name])]
    assert sorted(sums) == [f"acc_3_{c}" for c in range(4)]
    assert not [n for n in fused.nodes if n.kind == "gate" and n.name.startswith("gate_") and
                any(e.dst in {s.name for s in select} for e in fused.edges if e.src == n.name)]
    assert log[-1]["adders"] == log_plain[-1]["adders"] - 12
    assert fused.latency == plain.latency - 1
    gm = compose(["arch=gemmini_like", "arch.rows=4", "arch.cols=4", "workload=conv2d"])
    gdag, _, _ = optimize(build_adg(workload_from_config(gm.workload).layers[0].kernel, gm.arch), LP)
    assert [n.name for n in gdag.nodes if n.kind == "acc"] == [f"acc_3_{c}" for c in range(4)]
    assert not [n for n in gdag.nodes if n.kind == "acc" and n.attrs is not None]
    with pytest.raises(ValueError, match="mac_fusion"):  # a DSP accumulate would drop the fused inputs
        check_order(pipeline(("bitwidth", "acc_fusion", "mac_fusion")))


def test_mac_fusion_keeps_the_schedule_and_fuses_every_fu():
    cfg = compose([])
    adg = build_adg(workload_from_config(cfg.workload).layers[0].kernel, cfg.arch)
    plain, _, _ = optimize(adg, LP)
    fused = [p for p in compose(["optimizer=fpga"]).optimizer.passes if p not in ("registered_reads", "pipelined_rmw")]
    fpga, _, _ = optimize(adg, OptimizerConf(passes=fused, delay_matching="lp", time_limit_s=30.0))
    kinds = [n.kind for n in fpga.nodes]
    assert kinds.count("mac") == 16 and "mul" not in kinds and "acc" not in kinds
    assert fpga.latency == plain.latency and fpga.register_bits() <= plain.register_bits()


FPGA = OptimizerConf(passes=list(compose(["optimizer=fpga"]).optimizer.passes), delay_matching="lp", time_limit_s=30.0)


def test_fpga_passes_register_bank_reads_and_pipeline_the_output_writes():
    """registered_reads gives every bank read two cycles, pipelined_rmw every write three more:
    delay matching absorbs neither on the default array, whose pipeline grows by all three."""
    cfg = compose([])
    adg = build_adg(workload_from_config(cfg.workload).layers[0].kernel, cfg.arch)
    plain, _, _ = optimize(adg, LP)
    fpga, _, _ = optimize(adg, FPGA)
    assert {n.latency for n in fpga.nodes if n.kind == "read"} == {2}
    assert {n.latency for n in fpga.nodes if n.kind == "write"} == {PIPELINED_WRITE}
    assert fpga.latency == plain.latency + 1 + PIPELINED_WRITE
    # the FPGA flow's Yosys may then leave reads that meet a write undefined (targets.fpga.NO_RW_CHECK)
    assert forwards(fpga) and not forwards(plain)


def test_pipelined_rmw_leaves_folded_output_banks_in_one_cycle():
    """lego_mnicoc's output banks with a lane per port fold (one adder shared by banks and
    dataflows): its writes keep ``L_v`` 0, its reads are registered all the same."""
    from lego_build.analysis.lowering import reference_kernel

    cfg = compose(["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4", "arch.onchip_kb=0", "arch.buffer_depth=16",
                   "arch.out_lanes=0", "workload=conv2d"])
    kernel = reference_kernel([layer.kernel for layer in workload_from_config(cfg.workload).array_layers], "conv2d")
    fpga, _, _ = optimize(build_adg(kernel, cfg.arch), FPGA)
    (out,) = [b for b in fpga.buffers if b.role == "out"]
    assert out.logical_bits > out.addr_bits
    assert {n.latency for n in fpga.nodes if n.kind == "write"} == {0}
    assert {n.latency for n in fpga.nodes if n.kind == "read"} == {2}
    assert not forwards(fpga)  # its one-cycle read-modify-write does not forward


def test_delay_elaboration_turns_edge_delays_into_delay_blocks():
    cfg = compose([*GEMM_MNICOC, "arch.rows=4", "arch.cols=4"])
    adg = build_adg(gemm(16, 16, 16), cfg.arch)
    upto = LEGO_PASSES[:LEGO_PASSES.index("delay_elaboration")]
    timed, log_timed, _ = optimize(adg, OptimizerConf(passes=upto, delay_matching="lp", time_limit_s=30.0))
    elaborated, log, _ = optimize(adg, LP)
    assert all(e.delay == 0 and not e.enable for e in elaborated.edges)
    blocks = [n for n in elaborated.nodes if n.kind == "delay"]
    assert len(blocks) == sum(1 for e in timed.edges if e.delay)
    assert elaborated.register_bits() == timed.register_bits()
    assert log[-1]["gated_register_bits"] == log_timed[-1]["gated_register_bits"] > 0
    assert elaborated.latency == timed.latency
