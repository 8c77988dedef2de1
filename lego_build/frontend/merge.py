"""Several spatial dataflows in one design: seed 004 §4.3, fig. 4-1.

Merging the per-dataflow MSTs as they are wastes links and ports, so the direct
links are re-planned chain by chain over all dataflows:

1. A *chain* is a connected group of FUs under one dataflow's direct candidates.
   FUs that can receive the tensor over a delay link are its root candidates
   (all FUs if none can).
2. Chains are built shortest first. The root is the candidate with the fewest
   possible input direct links, then one that already has a data node.
3. From the root the chain is spanned by a minimum arborescence in which links
   that earlier chains built cost nothing. This is the exact form of the paper's
   BFS towards the longest built chains: it reuses the most existing links.
   For an input tensor, FUs that already have a data node (from an earlier
   dataflow) read from it instead of receiving a new link: the port exists, so the
   chain becomes a forest rooted at existing ports (``broadcast="ports"``). With
   ``broadcast="links"`` the chain is spanned from one root all the same (an existing
   port preferred): one bank read per word, and the ports it passes are idle under
   this dataflow, so their banks fold onto the root's (:mod:`lego_build.ir.fold`).
   Outputs keep one sink per chain, since partial sums must meet before they are written.
4. A chain that nothing but memory can feed gets its data node at once (later
   chains see it). Roots that a FIFO could feed are settled last, per dataflow: a
   delay link from another chain or a data node, chosen by one more arborescence
   over the chains (existing ports and FIFOs cheaper), so no cycle of delay links
   can form.

The baseline the merge is measured against (each dataflow's eq. 4.5 MST, built on its own,
then united) lives in ``tests/test_frontend_merge.py``.
"""
from __future__ import annotations

from dataclasses import replace

import networkx as nx

from lego_build.frontend.mst import MEM, link_cost, port_cost, spanning_forest
from lego_build.ir.adg import Coord, Link

DataflowCandidates = tuple[str, tuple[Link, ...]]  # (dataflow name, its candidate links)


def _oriented(link: Link, reverse: bool) -> tuple[Coord, Coord]:
    return (link.dst, link.src) if reverse else (link.src, link.dst)


def _chains(fus: tuple[Coord, ...], direct: list[Link]) -> list[tuple[Coord, ...]]:
    g = nx.Graph()
    g.add_nodes_from(fus)
    g.add_edges_from((lk.src, lk.dst) for lk in direct)
    return sorted((tuple(sorted(c)) for c in nx.connected_components(g)), key=lambda c: (len(c), c))


def _span_chain(chain, direct, reverse, built, ports, root_candidates):
    """Links spanning ``chain`` from one root (existing links free); returns (links, roots)."""
    inside = set(chain)
    edges = {}
    for lk in direct:
        if lk.src in inside and lk.dst in inside:
            a, b = _oriented(lk, reverse)
            edges[(a, b)] = lk
    indegree = {v: sum(1 for (_, b) in edges if b == v) for v in chain}
    order = sorted(root_candidates, key=lambda v: (indegree[v], v not in ports, v))
    for root in order:
        g = nx.DiGraph()
        g.add_nodes_from(chain)
        for (a, b), lk in edges.items():
            if b != root:
                g.add_edge(a, b, weight=0 if (lk.src, lk.dst) in built else 1, link=lk)
        if len(chain) == 1:
            return [], [root]
        try:
            tree = nx.minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
        except nx.NetworkXException:
            continue
        return [d["link"] for _, _, d in tree.edges(data=True)], [root]
    # the direction of control flow leaves no single source: fall back to a forest
    bonus = {(lk.src, lk.dst): 99 for lk in direct if (lk.src, lk.dst) in built}
    links, roots = spanning_forest(chain, tuple(lk for lk in direct if lk.src in inside and lk.dst in inside),
                                   reverse, bonus)
    return list(links), list(roots)


def _span_from_ports(chain, direct, built, ports):
    """Input chain with existing data nodes: the cheapest forest where existing ports and links are free."""
    inside = set(chain)
    local = tuple(lk for lk in direct if lk.src in inside and lk.dst in inside)
    full = port_cost(len(chain))
    bonus = {v: full for v in chain if v in ports}
    bonus.update({(lk.src, lk.dst): link_cost(lk) for lk in local if (lk.src, lk.dst) in built})
    links, roots = spanning_forest(chain, local, False, bonus)
    return list(links), list(roots)


def merge_dataflows(fus: tuple[Coord, ...], per_dataflow: list[DataflowCandidates], reverse: bool,
                    broadcast: str = "ports"):
    """Return (links, ports, port_dataflows) of the merged design; links carry their dataflows."""
    built: dict[tuple[Coord, Coord], Link] = {}
    ports: dict[Coord, set[str]] = {}
    plans = []
    for name, candidates in per_dataflow:
        direct = [lk for lk in candidates if lk.kind == "direct"]
        fed = {lk.dst for lk in candidates if lk.kind == "delay"}
        for chain in _chains(fus, direct):
            plans.append((len(chain), name, chain, direct, fed))
    plans.sort(key=lambda p: (p[0], [n for n, _ in per_dataflow].index(p[1]), p[2]))
    roots_of: dict[str, list[tuple[tuple[Coord, ...], Coord]]] = {name: [] for name, _ in per_dataflow}
    for _, name, chain, direct, fed in plans:
        candidates = [v for v in chain if v in fed] or list(chain)
        if not reverse and broadcast == "ports" and any(v in ports for v in chain):
            links, roots = _span_from_ports(chain, direct, built, ports)
        else:
            links, roots = _span_chain(chain, direct, reverse, built, ports, candidates)
        for lk in links:
            key = (lk.src, lk.dst)
            old = built.get(key)
            built[key] = replace(lk, dataflows=tuple(sorted(set(old.dataflows if old else ()) | {name})))
        for root in roots:
            if any(v in fed for v in chain):
                roots_of[name].append((chain, root))  # may be fed by a FIFO: decided in step 4
            else:
                ports.setdefault(root, set()).add(name)  # needs memory: a data node now
    for name, candidates in per_dataflow:
        _feed_roots(name, candidates, roots_of[name], built, ports, len(fus))
    links = tuple(sorted(built.values(), key=lambda lk: (lk.src, lk.dst)))
    port_list = tuple(sorted(ports))
    return links, port_list, tuple(tuple(sorted(ports[p])) for p in port_list)


def _feed_roots(name, candidates, roots, built, ports, n_fus):
    """Step 4: delay link or data node for every chain root a FIFO could feed, acyclic by construction."""
    if not roots:
        return
    chain_of = {}
    for index, (chain, _) in enumerate(roots):
        for v in chain:
            chain_of[v] = index
    g = nx.DiGraph()
    g.add_node(MEM)
    for index, (_, root) in enumerate(roots):
        g.add_edge(MEM, index, weight=port_cost(n_fus) - (500 if root in ports else 0), link=None)
    for lk in candidates:
        if lk.kind != "delay" or lk.src not in chain_of or lk.dst not in chain_of:
            continue
        a, b = chain_of[lk.src], chain_of[lk.dst]
        if a == b or roots[b][1] != lk.dst:
            continue
        weight = link_cost(lk) - (50 if (lk.src, lk.dst) in built else 0)
        if not g.has_edge(a, b) or g[a][b]["weight"] > weight:
            g.add_edge(a, b, weight=weight, link=lk)
    tree = nx.minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
    for u, v, d in tree.edges(data=True):
        if u == MEM:
            ports.setdefault(roots[v][1], set()).add(name)
        else:
            lk = d["link"]
            old = built.get((lk.src, lk.dst))
            built[(lk.src, lk.dst)] = replace(lk, dataflows=tuple(sorted(set(old.dataflows if old else ()) | {name})))
