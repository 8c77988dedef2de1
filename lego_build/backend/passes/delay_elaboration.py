"""Delay-block elaboration: seed 004 §5.5 (fig. 5-2's delay block).

After timing is settled, every edge that still carries ``E`` registers becomes an
explicit ``delay`` primitive (a shift register of ``E`` stages, keeping the edge's
clock enable) between two plain wires, so the DAG holds every register as a
node, as LEGO's elaborated DAG does. The schedule is extended accordingly.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG, DelaySpec, Node


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    nodes = list(dag.nodes)
    edges = []
    schedule = dict(dag.schedule)
    for e in dag.edges:
        if e.delay <= 0:
            edges.append(e)
            continue
        name = f"dly_{e.src}_{e.src_port}__{e.dst}_{e.dst_port}"
        nodes.append(Node(name, "delay", e.delay, e.width, DelaySpec(e.enable)))
        schedule[name] = schedule[e.src] + e.delay
        edges += [replace(e, dst=name, dst_port="in", delay=0, enable=()),
                  replace(e, src=name, src_port="out", delay=0, enable=())]
    return replace(dag, nodes=tuple(nodes), edges=tuple(edges), schedule=tuple(sorted(schedule.items())),
                   passes=dag.passes + ("delay_elaboration",))


PASS = Pass("delay_elaboration", requires=("schedule",), provides=("delay_blocks",), run=run)
