"""Minimum-spanning interconnections: seed 004 eq. 4.5 (Chu-Liu/Edmonds via networkx).

All candidate links of a tensor form one directed graph. A virtual memory node
has an edge to every FU whose cost exceeds any forest of links, so the minimum
spanning arborescence rooted there is the cheapest forest plus the fewest memory
ports; the FUs it feeds directly are the roots that get data nodes. Output
tensors search the reversed graph (their roots are sinks).
"""
from __future__ import annotations

import networkx as nx

from lego_build.ir.adg import Coord, Link

_MEM = "mem"


def spanning_forest(
    fus: tuple[Coord, ...], candidates: tuple[Link, ...], reverse: bool = False
) -> tuple[tuple[Link, ...], tuple[Coord, ...]]:
    """Return (links kept, FUs with a data node), both in a deterministic order."""
    g = nx.DiGraph()
    g.add_node(_MEM)
    g.add_nodes_from(fus)
    port_cost = 1000 * (len(fus) + 1)
    for order, fu in enumerate(fus):
        # a tiny order term keeps memory ports on low coordinates when links tie
        g.add_edge(_MEM, fu, weight=port_cost + order, link=None)
    for link in candidates:
        src, dst = (link.dst, link.src) if reverse else (link.src, link.dst)
        length = sum(abs(a - b) for a, b in zip(link.src, link.dst))
        g.add_edge(src, dst, weight=100 * length + link.delay, link=link)
    tree = nx.minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
    ports = tuple(sorted(v for u, v in tree.edges if u == _MEM))
    links = tuple(sorted(
        (d["link"] for u, v, d in tree.edges(data=True) if u != _MEM), key=lambda lk: (lk.src, lk.dst)
    ))
    return links, ports
