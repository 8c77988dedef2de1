"""Minimum-spanning interconnections: seed 004 eq. 4.5 (Chu-Liu/Edmonds via networkx).

All candidate links of a tensor form one directed graph. A virtual memory node
has an edge to every FU whose cost exceeds any forest of links, so the minimum
spanning arborescence rooted there is the cheapest forest plus the fewest memory
ports; the FUs it feeds directly are the roots that get data nodes. A direct link
costs its length (and delay); a delay link costs more (a FIFO of depth ``w``) but
far less than a port. Output tensors search the reversed graph (roots are sinks).
"""
from __future__ import annotations

import networkx as nx

from lego_build.ir.adg import Coord, Link

MEM = "mem"


def link_cost(link: Link) -> int:
    length = sum(abs(a - b) for a, b in zip(link.src, link.dst))
    return 100 * length + link.delay + (50 + 10 * link.fifo if link.kind == "delay" else 0)


def port_cost(n_fus: int) -> int:
    return 1000 * (n_fus + 1)


def spanning_forest(
    fus: tuple[Coord, ...], candidates: tuple[Link, ...], reverse: bool = False,
    bonus: dict | None = None,
) -> tuple[tuple[Link, ...], tuple[Coord, ...]]:
    """Return (links kept, FUs with a data node), both in a deterministic order.

    ``bonus`` lowers the cost of links (by ``(src, dst)``) or ports (by FU) that a
    design already has, so a second dataflow reuses them (§4.3).
    """
    bonus = bonus or {}
    g = nx.DiGraph()
    g.add_node(MEM)
    g.add_nodes_from(fus)
    base = port_cost(len(fus))
    for order, fu in enumerate(fus):
        # a tiny order term keeps memory ports on low coordinates when links tie
        g.add_edge(MEM, fu, weight=base + order - bonus.get(fu, 0), link=None)
    for link in candidates:
        src, dst = (link.dst, link.src) if reverse else (link.src, link.dst)
        weight = link_cost(link) - bonus.get((link.src, link.dst), 0)
        if g.has_edge(src, dst) and g[src][dst]["weight"] <= weight:
            continue
        g.add_edge(src, dst, weight=weight, link=link)
    tree = nx.minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
    ports = tuple(sorted(v for u, v in tree.edges if u == MEM))
    links = tuple(sorted(
        (d["link"] for u, v, d in tree.edges(data=True) if u != MEM), key=lambda lk: (lk.src, lk.dst)
    ))
    return links, ports
