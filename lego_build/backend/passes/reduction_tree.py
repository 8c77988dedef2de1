"""Reduction-tree extraction: seed 004 §5.3, fig. 5-5.

The ADG-to-DAG translation turns a spatial reduction into a chain of adders, one
per FU. Under a systolic control flow that chain is already pipelined in step
with the FUs, but when the FUs fire together (equal anchors: broadcast control)
the chain makes product ``i`` wait ``i`` adder stages, and delay matching pays for
that wait with registers on every product (fig. 5-5a). This pass collapses each
such chain into its leaf inputs (the reducer of fig. 5-5b) and rebuilds it as a
balanced tree of two-input registered adders (fig. 5-5c): depth ``ceil(log2 n)``.
Chains whose products are skewed in time are left alone.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG, Edge, Node


def _chains(dag: DAG) -> list[list[str]]:
    """Maximal chains of adders, head (the sink end) first: each member feeds only the next."""
    adds = {n.name for n in dag.nodes if n.kind == "add"}
    feeds: dict[str, list[str]] = {}
    for e in dag.edges:
        if e.src in adds:
            feeds.setdefault(e.src, []).append(e.dst)
    into = {a: [e.src for e in dag.edges if e.dst == a and e.src in adds and feeds[e.src] == [a]] for a in adds}
    heads = [a for a in sorted(adds) if not (len(feeds.get(a, [])) == 1 and feeds[a][0] in adds
                                             and a in into[feeds[a][0]])]
    chains = []
    for head in heads:
        chain, node = [head], head
        while len(into[node]) == 1:
            node = into[node][0]
            chain.append(node)
        chains.append(chain)
    return chains


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    anchor = dict(dag.anchors)
    nodes = {n.name: n for n in dag.nodes}
    edges = list(dag.edges)
    for chain in _chains(dag):
        members = set(chain)
        leaves = [e for e in edges if e.dst in members and e.src not in members]
        times = {anchor.get(e.src) for e in leaves}
        if len(chain) < 2 or len(times) != 1 or None in times:
            continue  # skewed (systolic) chains are already balanced in time
        head = nodes[chain[0]]
        outputs = [e for e in edges if e.src == head.name]
        edges = [e for e in edges if e.dst not in members and e.src not in members]
        for name in members:
            del nodes[name]
        level, signals = 0, [(e.src, e.src_port, e.width) for e in sorted(leaves, key=lambda e: (e.src, e.src_port))]
        while len(signals) > 1:
            paired = []
            for i in range(0, len(signals) - 1, 2):
                name = f"{head.name}_t{level}_{i // 2}"
                nodes[name] = Node(name, "add", head.latency, head.width)
                edges += [Edge(*signals[i][:2], name, "p", signals[i][2]),
                          Edge(*signals[i + 1][:2], name, "c0", signals[i + 1][2])]
                paired.append((name, "s", head.width))
            if len(signals) % 2:
                paired.append(signals[-1])
            signals, level = paired, level + 1
        src, port, width = signals[0]
        edges += [replace(e, src=src, src_port=port) for e in outputs]
    order = [n.name for n in dag.nodes if n.name in nodes] + sorted(set(nodes) - {n.name for n in dag.nodes})
    return replace(dag, nodes=tuple(nodes[n] for n in order), edges=tuple(edges),
                   passes=dag.passes + ("reduction_tree",))


PASS = Pass("reduction_tree", requires=("codegen",), provides=("reduction_trees",), run=run)
