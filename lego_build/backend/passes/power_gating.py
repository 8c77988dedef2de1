"""Power gating of idle delay blocks: seed 004 §5.5, fig. 5-7.

In a switchable design some links and their delay registers serve only some
dataflows. The liveness analysis of §5.4 finds, per dataflow, the edges that feed
a memory write that dataflow performs: a gate passes its input only in its
dataflows, a multiplexer only the input it selects, a write only fires in the
dataflows of its enable gate. A delayed edge that is dead in some dataflow gets a
clock enable listing the dataflows where it is live, so its registers stop
toggling otherwise. The function is unchanged; ``gated_register_bits`` counts the
registers that gain an enable.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG, GateSpec, MuxSpec


def live_edges(dag: DAG, dataflow: str) -> set[int]:
    """Indices of edges that feed, in ``dataflow``, a buffer write that ``dataflow`` performs."""
    nodes = {n.name: n for n in dag.nodes}
    into: dict[str, list[int]] = {}
    for i, e in enumerate(dag.edges):
        into.setdefault(e.dst, []).append(i)

    def passes(node, port) -> bool:
        if node.kind == "gate":
            return port == "sel" or dataflow in node.spec(GateSpec).dataflows
        if node.kind == "acc" and node.attrs is not None:  # a fused accumulator's chain input (acc_fusion)
            return port != "c" or dataflow in node.spec(GateSpec).dataflows
        if node.kind == "mux":
            return port in ("sel", f"i{node.spec(MuxSpec).input_of(dataflow)}")
        return True

    def writes(node) -> bool:
        gate = next((dag.edges[i] for i in into.get(node.name, ()) if dag.edges[i].dst_port == "we"), None)
        if gate is None or nodes[gate.src].kind != "gate":
            return True
        return dataflow in nodes[gate.src].spec(GateSpec).dataflows

    live: set[int] = set()
    stack = [n.name for n in dag.nodes if n.kind == "write" and writes(n)]
    seen = set(stack)
    while stack:
        name = stack.pop()
        for i in into.get(name, ()):
            e = dag.edges[i]
            if passes(nodes[name], e.dst_port):
                live.add(i)
                if e.src not in seen:
                    seen.add(e.src)
                    stack.append(e.src)
    return live


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    if len(dag.dataflows) < 2:
        return replace(dag, passes=dag.passes + ("power_gating",))
    live = {df: live_edges(dag, df) for df in dag.dataflows}
    edges = []
    for i, e in enumerate(dag.edges):
        users = tuple(df for df in dag.dataflows if i in live[df])
        gate = e.delay > 0 and 0 < len(users) < len(dag.dataflows)
        edges.append(replace(e, enable=users) if gate else e)
    return replace(dag, edges=tuple(edges), passes=dag.passes + ("power_gating",))


PASS = Pass("power_gating", requires=("schedule",), provides=("clock_enables",), run=run)
