"""Broadcast pin rewiring: seed 004 §5.3, fig. 5-4, in its three stages.

A source pin that drives several edges (the controller's ``first``/``commit``, an
address generator, a broadcast operand) gets one register chain per edge after
delay matching: ``sum_i W E_i`` bits. Rewired into a forward chain of taps
``src -> t1 -> t2 ...`` it costs ``W max_i E_i``.

1. The LP is re-solved with the virtual objective that charges each broadcast pin
   only its largest delay, so the solver moves latency onto broadcasts.
2. Each broadcast is rewired: the distinct delays, sorted, become a chain of taps
   (pin nodes); each destination hangs off the tap of its delay. This is the MST of
   the paper when every destination may forward to every other (costs
   ``|E_u - E_v|``); wire locality is not modelled.
3. The ordinary LP of eq. 5.2 runs again on the rewired graph.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.backend.passes.delay_matching import broadcast_groups, greedy_schedule, lp_schedule
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG, Edge, Node


def rewire(dag: DAG) -> DAG:
    """Stage 2 on a scheduled DAG (edge delays set)."""
    edges = list(dag.edges)
    nodes = list(dag.nodes)
    for (src, port), members in broadcast_groups(dag).items():
        delays = sorted({dag.edges[i].delay for i in members if dag.edges[i].delay > 0})
        if len(delays) < 2 and sum(1 for i in members if dag.edges[i].delay > 0) < 2:
            continue
        width = max(dag.edges[i].width for i in members)
        taps, prev, prev_delay = {}, (src, port), 0
        for k, d in enumerate(delays):
            name = f"{src}_{port}_tap{k}"
            nodes.append(Node(name, "pin", 0, width))
            edges.append(Edge(prev[0], prev[1], name, "in", width, d - prev_delay))
            taps[d], prev, prev_delay = name, (name, "out"), d
        for i in members:
            e = edges[i]
            if e.delay > 0:
                edges[i] = replace(e, src=taps[e.delay], src_port="out", delay=0)
    return replace(dag, nodes=tuple(nodes), edges=tuple(edges))


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    lp = cfg.delay_matching == "lp"
    stage1 = lp_schedule(dag, cfg.time_limit_s, cfg.solver, broadcast_max=True)[0] if lp else greedy_schedule(dag)
    rewired = rewire(dag.with_delays(stage1))
    stage3 = lp_schedule(rewired, cfg.time_limit_s, cfg.solver)[0] if lp else greedy_schedule(rewired)
    return replace(rewired.with_delays(stage3), passes=dag.passes + ("broadcast_rewiring",))


PASS = Pass("broadcast_rewiring", requires=("widths", "schedule"), provides=("schedule",), run=run)
