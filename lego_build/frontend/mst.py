"""Minimum-spanning interconnections: seed 004 eq. 4.5 (Chu-Liu/Edmonds via networkx).

All candidate links of a tensor form one directed graph. A virtual memory node
has an edge to every FU whose cost exceeds any forest of links, so the minimum
spanning arborescence rooted there is the cheapest forest plus the fewest memory
ports; the FUs it feeds directly are the roots that get data nodes. A direct link
costs its length (and delay); a delay link costs more (a FIFO of depth ``w``) but
far less than a port. Output tensors search the reversed graph (roots are sinks).

The memory node's edges are the only ones between groups of linked FUs, so the
arborescence decomposes: each group is solved on its own graph (memory node, its FUs,
the edges into them in the original order), which gives the same picks as the whole
graph (tests/test_frontend_mst.py) at a fraction of the cost, since networkx copies
its graph at every cycle it contracts.
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
    base = port_cost(len(fus))
    # (src, dst) -> (weight, link), in the order edges are first offered; a cheaper duplicate
    # replaces the weight in place
    edges: dict = {}
    for order, fu in enumerate(fus):
        # a tiny order term keeps memory ports on low coordinates when links tie
        edges[MEM, fu] = (base + order - bonus.get(fu, 0), None)
    for link in candidates:
        src, dst = (link.dst, link.src) if reverse else (link.src, link.dst)
        weight = link_cost(link) - bonus.get((link.src, link.dst), 0)
        if (src, dst) in edges and edges[src, dst][0] <= weight:
            continue
        edges[src, dst] = (weight, link)
    chosen = []
    # FUs no link joins never share a tree: each group of linked FUs is its own arborescence
    # problem from the memory node (the same picks, in a graph a fraction of the size)
    groups = _linked_groups(fus, [k for k in edges if k[0] != MEM])
    group_of = {fu: i for i, group in enumerate(groups) for fu in group}
    into: list[list] = [[] for _ in groups]
    for (u, v), (weight, link) in edges.items():
        into[group_of[v]].append((u, v, {"weight": weight, "link": link}))
    for group, group_edges in zip(groups, into):
        if len(group) == 1:  # an FU no link reaches: its memory port is its only edge
            chosen += [(u, v, d["link"]) for u, v, d in group_edges]
            continue
        g = nx.DiGraph()
        g.add_node(MEM)
        g.add_nodes_from(group)
        g.add_edges_from(group_edges)
        tree = nx.minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
        chosen += [(u, v, d["link"]) for u, v, d in tree.edges(data=True)]
    ports = tuple(sorted(v for u, v, _ in chosen if u == MEM))
    links = tuple(sorted((lk for u, _, lk in chosen if u != MEM), key=lambda lk: (lk.src, lk.dst)))
    return links, ports


def _linked_groups(fus: tuple[Coord, ...], pairs: list[tuple[Coord, Coord]]) -> list[tuple[Coord, ...]]:
    """The FUs joined by ``pairs`` (either direction), each group in ``fus`` order."""
    parent = {fu: fu for fu in fus}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
    groups: dict = {}
    for fu in fus:
        groups.setdefault(find(fu), []).append(fu)
    return [tuple(g) for g in groups.values()]
