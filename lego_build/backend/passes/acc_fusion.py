"""Accumulator fusion: a spatial adder whose sum only an accumulator (and a gated partial-sum
chain) reads becomes part of that accumulator (issue 44: the area of multi-dataflow arrays).

The FU-level graph gives a switchable array's FUs a registered adder (``add``: the product plus
the partial sum from the FU before it, that sum gated to the dataflows whose reduction runs
along the chain) in front of an accumulator (``acc``: ``y <= first ? s : y + s``), two adders
and two registers where a hardware engineer builds one of each. Two forms, each one register
and one carry chain in place of two:

* **select** (the chain's FUs): when the accumulator is written in none of the dataflows whose
  chain the adder serves, and its sum feeds the next FU only in those dataflows, the fused
  ``acc`` adds the product to the chain's partial sum in those dataflows and to its own sum in
  the others, ``y <= p + (chain ? c : first ? 0 : y)`` with ``chain`` the select's decode of
  the dataflows (the node's :class:`GateSpec`); the gate on the chain goes (the select is it);
* **three-input** (a chain's last FU, or any FU whose adder only its accumulator reads):
  ``y <= p + c0 + ... + (first ? 0 : y)``, the adder's inputs as they were (gates kept).

Either way the product reaches the accumulator one cycle earlier (a register stage less, which
delay matching then schedules: the pass runs before it) and the values are those of the pair:
in the select form the chain's sum is the adder's (the accumulator is not read in the chain's
dataflows, and the chain reads it in no other), in the three-input form ``y`` is the pair's.
A chain edge keeps the adder's width (the bitwidth pass's range), so the fused node's wider
register adds no bits to the chain's delay registers.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG, Edge, GateSpec


def _fusable(dag: DAG) -> dict[str, tuple[str, str]]:
    """Per fused adder, (its accumulator, ``"select"`` or ``"add"``)."""
    nodes = {n.name: n for n in dag.nodes}
    into = dag.edges_into()
    out: dict[str, list[Edge]] = {}
    for e in dag.edges:
        out.setdefault(e.src, []).append(e)

    def write_dataflows(acc: str) -> set[str]:
        dfs: set[str] = set()
        for e in out.get(acc, ()):
            if nodes[e.dst].kind != "write":
                return set(dag.dataflows) | {""}  # read by something else: every dataflow
            we = next(x for x in into[e.dst] if x.dst_port == "we")
            gate = nodes[we.src]
            dfs |= set(gate.spec(GateSpec).dataflows) if gate.kind == "gate" else set(dag.dataflows) | {""}
        return dfs

    fused = {}
    for a in (n for n in dag.nodes if n.kind == "add"):
        users = out.get(a.name, [])
        accs = [e for e in users if nodes[e.dst].kind == "acc" and e.dst_port == "p"]
        if len(accs) != 1 or a.latency != 1 or nodes[accs[0].dst].latency != 1:
            continue
        acc = accs[0].dst
        if len(users) == 1:
            fused[a.name] = (acc, "add")
            continue
        chains = [e for e in into[a.name] if e.dst_port != "p"]
        gates = [nodes[e.src] for e in chains]
        if len(chains) != 1 or gates[0].kind != "gate":
            continue
        along = set(gates[0].spec(GateSpec).dataflows)
        onward = [nodes[e.dst] for e in users if e.dst != acc]
        if (all(g.kind == "gate" and set(g.spec(GateSpec).dataflows) <= along for g in onward)
                and not write_dataflows(acc) & along):
            fused[a.name] = (acc, "select")
    return fused


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    fused = _fusable(dag)
    if not fused:
        return replace(dag, passes=dag.passes + ("acc_fusion",))
    nodes = {n.name: n for n in dag.nodes}
    into = dag.edges_into()
    # the select form's chain gates, each with the adder it feeds; its accumulator takes the gate's dataflows
    gate_of = {e.src: a for a, (_, form) in fused.items() if form == "select" for e in into[a] if e.dst_port != "p"}
    select = {fused[a][0]: nodes[g].spec(GateSpec) for g, a in gate_of.items()}
    new_nodes = tuple(replace(n, attrs=select[n.name]) if n.name in select else n
                      for n in dag.nodes if n.name not in fused and n.name not in gate_of)
    edges = []
    for e in dag.edges:
        if e.dst in fused and e.dst_port == "p" or e.src in fused and e.dst == fused[e.src][0] or e.src in gate_of:
            continue  # the product into the adder (re-added below), the sum into its accumulator, a gate's output
        src = replace(e, src=fused[e.src][0], src_port="y") if e.src in fused else e  # the accumulator's bits
        if e.dst in gate_of:  # the chain's partial sum and the select, straight into the accumulator
            acc = fused[gate_of[e.dst]][0]
            edges.append(replace(src, dst=acc, dst_port="c" if e.dst_port == "in" else e.dst_port))
        elif e.dst in fused:  # a three-input accumulator's other addends (through their gates)
            edges.append(replace(src, dst=fused[e.dst][0]))
        else:
            edges.append(src)
    edges += [replace(e, dst=fused[a][0]) for a in fused for e in into[a] if e.dst_port == "p"]
    return replace(dag, nodes=new_nodes, edges=tuple(edges), passes=dag.passes + ("acc_fusion",))


PASS = Pass("acc_fusion", requires=("widths",), provides=("accs_fused",), run=run, before=("schedule",))
