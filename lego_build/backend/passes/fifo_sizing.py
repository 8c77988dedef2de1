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

from lego_build.ir.dag import DAG

from . import Pass


def run(dag: DAG, cfg: object = None) -> DAG:
    nodes = []
    for n in dag.nodes:
        static = int(dict(n.attrs).get("static_depth", "0")) if n.kind == "fifo" else 0
        if static:
            attrs = tuple((k, str(static) if k == "capacity" else v) for k, v in n.attrs)
            n = replace(n, attrs=attrs)
        nodes.append(n)
    return replace(dag, nodes=tuple(nodes), passes=dag.passes + ("fifo_sizing",))


PASS = Pass("fifo_sizing", requires=("codegen",), provides=("fifo_sizes",), run=run)
