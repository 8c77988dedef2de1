"""lego_build.frontend.mst: the spanning forest solved per group of linked FUs equals the one
arborescence of the whole graph (seed 004 eq. 4.5), ties included."""
from __future__ import annotations

import random

import networkx as nx

from lego_build.frontend.mst import MEM, link_cost, port_cost, spanning_forest
from lego_build.ir.adg import Link


def whole_graph_forest(fus, candidates, reverse=False, bonus=None):
    """The reference: every FU and link in one graph, one networkx arborescence."""
    bonus = bonus or {}
    g = nx.DiGraph()
    g.add_node(MEM)
    g.add_nodes_from(fus)
    for order, fu in enumerate(fus):
        g.add_edge(MEM, fu, weight=port_cost(len(fus)) + order - bonus.get(fu, 0), link=None)
    for link in candidates:
        src, dst = (link.dst, link.src) if reverse else (link.src, link.dst)
        weight = link_cost(link) - bonus.get((link.src, link.dst), 0)
        if g.has_edge(src, dst) and g[src][dst]["weight"] <= weight:
            continue
        g.add_edge(src, dst, weight=weight, link=link)
    tree = nx.minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
    ports = tuple(sorted(v for u, v in tree.edges if u == MEM))
    links = tuple(sorted((d["link"] for u, _, d in tree.edges(data=True) if u != MEM), key=lambda k: (k.src, k.dst)))
    return links, ports


def random_case(rng: random.Random):
    rows, cols = rng.randint(1, 6), rng.randint(1, 6)
    fus = tuple((r, c) for r in range(rows) for c in range(cols))
    links = []
    for _ in range(rng.randint(0, 3 * len(fus))):
        a, b = rng.choice(fus), rng.choice(fus)
        if a == b:
            continue
        if rng.random() < 0.3:  # delay links: dearer, and duplicates of direct ones
            links.append(Link(a, b, rng.randint(1, 3), "delay", rng.randint(1, 4)))
        else:
            links.append(Link(a, b, rng.choice((0, 1))))  # few distinct costs: many ties
    bonus = {}
    if rng.random() < 0.3:
        bonus = {fu: rng.choice((0, 500)) for fu in fus} | {(lk.src, lk.dst): 50 for lk in links[:3]}
    return fus, tuple(links), rng.random() < 0.5, bonus


def test_grouped_forest_equals_the_whole_graph_arborescence():
    groups_seen = 0
    for seed in range(400):
        fus, links, reverse, bonus = random_case(random.Random(seed))
        assert spanning_forest(fus, links, reverse, bonus) == whole_graph_forest(fus, links, reverse, bonus), seed
        linked = nx.Graph([(lk.src, lk.dst) for lk in links])
        linked.add_nodes_from(fus)
        groups_seen += nx.number_connected_components(linked) > 1
    assert groups_seen > 100  # the cases do split into several groups


def test_chains_of_a_16x16_array():
    """Rows of links (an IC|OC array's input chains): 16 groups, one port each at the chain head."""
    fus = tuple((r, c) for r in range(16) for c in range(16))
    links = tuple(Link((r, c), (r, c + 1), 1) for r in range(16) for c in range(15))
    kept, ports = spanning_forest(fus, links)
    assert ports == tuple((r, 0) for r in range(16))
    assert kept == links
    assert (kept, ports) == whole_graph_forest(fus, links)
