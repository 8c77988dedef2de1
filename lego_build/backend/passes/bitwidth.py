"""Bit-width inference by value-range propagation (seed 004 §5.1, the range R on edges).

Ranges start at the signed operand range of each buffer read; pins and FIFOs forward them;
a multiplier's range is the hull of its corner products; a spatial adder's
range is the sum of its inputs' ranges; a multiplexer's (and a FIFO pick's) the hull of its inputs; a
gate's the hull of its input and zero. Accumulators keep
the configured accumulator width because their trip count is a run-time loop
bound. Each node's width becomes the fewest two's-complement bits of its range,
and every edge takes the width of its source.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG


def signed_bits(lo: int, hi: int) -> int:
    """Fewest two's-complement bits holding every value in ``[lo, hi]``."""
    bits = 1
    while not (-(1 << (bits - 1)) <= lo and hi <= (1 << (bits - 1)) - 1):
        bits += 1
    return bits


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    order = _topological(dag)
    ranges: dict[str, tuple[int, int]] = {}
    width: dict[str, int] = {n.name: n.width for n in dag.nodes}
    into = dag.edges_into()
    for node in order:
        ins = {e.dst_port: ranges.get(e.src) for e in into.get(node.name, ())}
        if node.kind == "read":
            half = 1 << (node.width - 1)
            ranges[node.name] = (-half, half - 1)
        elif node.kind == "pin":
            ranges[node.name] = ins["in"]
        elif node.kind == "mul":
            corners = [1]
            for port in sorted(ins):  # a, b (, c): the hull of the corner products
                lo, hi = ins[port]
                corners = [x * y for x in corners for y in (lo, hi)]
            ranges[node.name] = (min(corners), max(corners))
        elif node.kind == "add":
            ranges[node.name] = (sum(r[0] for r in ins.values()), sum(r[1] for r in ins.values()))
        elif node.kind == "fifo":
            ranges[node.name] = ins["in"]
        elif node.kind in ("mux", "pick"):
            data = [r for port, r in ins.items() if port != "sel"]
            ranges[node.name] = (min(r[0] for r in data), max(r[1] for r in data))
        elif node.kind == "gate" and ins.get("in") is not None:
            lo, hi = ins["in"]
            ranges[node.name] = (min(lo, 0), max(hi, 0))
        if node.name in ranges and node.kind in ("pin", "mul", "add", "mux", "gate", "fifo", "pick"):
            width[node.name] = min(node.width, signed_bits(*ranges[node.name]))
    nodes = tuple(replace(n, width=width[n.name]) for n in dag.nodes)
    by_name = {n.name: n for n in nodes}
    edges = tuple(
        replace(e, width=by_name[e.src].width if by_name[e.src].kind not in ("ctrl", "agen", "cfg") else e.width)
        for e in dag.edges
    )
    return replace(dag, nodes=nodes, edges=edges, passes=dag.passes + ("bitwidth",))


def _topological(dag: DAG):
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(n.name for n in dag.nodes)
    g.add_edges_from((e.src, e.dst) for e in dag.edges)
    by_name = {n.name: n for n in dag.nodes}
    return [by_name[v] for v in nx.lexicographical_topological_sort(g)]


PASS = Pass("bitwidth", requires=("codegen",), provides=("widths",), run=run)
