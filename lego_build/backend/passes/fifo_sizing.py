"""FIFO sizing: a delay link whose depth cannot change gets exactly that many registers.

Codegen gives every FIFO ``arch.d_t`` words, the run-time depth range of seed 004
§2's programmable delay interconnections. When the temporal order is fixed and
the shifted dim is its innermost loop, ``w = t`` for every layer (eq. 3.5 with
radix 1; :func:`lego_build.backend.codegen.static_depth`), so the FIFO shrinks to
``t`` words and loses its tap multiplexer. Layers then run such a FIFO only at that
depth; the host falls back to bank reads otherwise, so results never depend on it.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG, FifoSpec


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    nodes = []
    for n in dag.nodes:
        if n.kind == "fifo" and (fifo := n.spec(FifoSpec)).static_depth:
            n = replace(n, attrs=replace(fifo, capacity=fifo.static_depth))
        nodes.append(n)
    return replace(dag, nodes=tuple(nodes), passes=dag.passes + ("fifo_sizing",))


PASS = Pass("fifo_sizing", requires=("codegen",), provides=("fifo_sizes",), run=run)
