"""FPGA MAC fusion: seed 004 §5.5's pattern-matching pass for FPGA targets.

A multiplier whose only consumer is an accumulator becomes one ``mac`` primitive
(``y <= first ? a*b : y + a*b`` with the product registered inside), the shape
FPGA tools map onto one DSP slice (multiplier, pipeline register, accumulator).
The fused node keeps the pair's latency and the multiplier's control-flow anchor,
so delay matching and the schedule are unchanged; the ``first`` input is delayed
inside the primitive to meet the product at the accumulate stage. Multipliers of an FU
kind that is no DSP-slice multiply (``FU.dsp_fusable`` false, e.g. ``bitfusion``) are left
alone, and so, all or nothing, is the whole array. The memory system reads that this pass ran
(``HostMap.dsp``): its PPU lanes then multiply with one Verilog product per partial product, for
DSP blocks too (:func:`rtl_templates_free.mk_ppu_lane_pipe`).
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.fulang.kinds import FUS
from lego_build.ir.dag import DAG, MulSpec, Node


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    nodes = {n.name: n for n in dag.nodes}
    consumers: dict[str, list] = {}
    for e in dag.edges:
        consumers.setdefault(e.src, []).append(e)
    fused = {}
    for n in dag.nodes:
        if n.kind != "mul" or not FUS.get(n.spec(MulSpec).fu).dsp_fusable:
            continue
        outs = consumers.get(n.name, [])
        two_operands = sum(1 for e in dag.edges if e.dst == n.name) == 2
        if two_operands and len(outs) == 1 and nodes[outs[0].dst].kind == "acc" and outs[0].dst_port == "p":
            fused[outs[0].dst] = n.name
    anchored = {name for name, _ in dag.anchors}
    if not fused or not anchored <= set(fused.values()):
        # fusing only some FUs would shift their anchors against the others: all or nothing
        return replace(dag, passes=dag.passes + ("mac_fusion",))
    mul_of_mac = {acc: mul for acc, mul in fused.items()}
    muls = set(fused.values())
    new_nodes = []
    for n in dag.nodes:
        if n.name in muls:
            continue
        if n.name in fused:
            mul = nodes[fused[n.name]]
            new_nodes.append(Node(n.name.replace("acc_", "mac_", 1), "mac", mul.latency + n.latency, n.width))
        else:
            new_nodes.append(n)
    rename = {acc: acc.replace("acc_", "mac_", 1) for acc in fused}
    edges = []
    for e in dag.edges:
        if e.src in muls:
            continue  # the internal product wire
        dst = rename.get(e.dst, mul_of_mac.get(e.dst, e.dst))
        if e.dst in muls:
            dst = rename[next(acc for acc, mul in fused.items() if mul == e.dst)]
        edges.append(replace(e, src=rename.get(e.src, e.src), dst=dst))
    anchors = tuple((rename[next(a for a, m in fused.items() if m == name)] if name in muls else name, off)
                    for name, off in dag.anchors)
    return replace(dag, nodes=tuple(new_nodes), edges=tuple(edges), anchors=anchors,
                   passes=dag.passes + ("mac_fusion",))


PASS = Pass("mac_fusion", requires=("codegen",), provides=("macs_fused",), run=run,
            before=("accs_fused",))  # a fused accumulator adds more than its product: no DSP accumulate
