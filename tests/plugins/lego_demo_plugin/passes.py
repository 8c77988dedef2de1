"""``optimizer.passes=[..., wire_audit]``: a checking pass after the bit-widths are known.

Every edge must join two nodes of the graph and no edge may be wider than the node it
leaves; otherwise the build stops with one line naming the edge. The graph is unchanged.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.errors import StageError


def run(dag, cfg):
    width = {n.name: n.width for n in dag.nodes}
    for e in dag.edges:
        for end in (e.src, e.dst):
            if end not in width:
                raise StageError(f"wire_audit: edge {e.src}.{e.src_port} -> {e.dst}.{e.dst_port} names no node {end}")
        if e.width > width[e.src]:
            raise StageError(f"wire_audit: edge {e.src}.{e.src_port} -> {e.dst}.{e.dst_port} is {e.width} bits, "
                             f"wider than {e.src} ({width[e.src]} bits)")
    return replace(dag, passes=dag.passes + ("wire_audit",))


PASS = Pass("wire_audit", requires=("widths",), provides=("wire_audit",), run=run)
