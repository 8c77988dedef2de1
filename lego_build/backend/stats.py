"""Resource counts of a DAG, as recorded per pass in ``passes.json``."""
from __future__ import annotations

from lego_build.ir.dag import DAG, DelaySpec, FifoSpec


def dag_stats(dag: DAG) -> dict[str, int]:
    kinds = [n.kind for n in dag.nodes]
    adds = {n.name for n in dag.nodes if n.kind == "add"}
    return {
        "adder_inputs": sum(1 for e in dag.edges if e.dst in adds),
        "register_bits": dag.register_bits(),
        "gated_register_bits": sum(e.width * e.delay for e in dag.edges if e.enable) + sum(
            n.width * n.latency for n in dag.nodes if n.kind == "delay" and n.spec(DelaySpec).enable),
        "multipliers": kinds.count("mul") + kinds.count("mac"),
        "adders": kinds.count("acc") + kinds.count("add") + kinds.count("mac"),
        "muxes": kinds.count("mux") + kinds.count("pick"),
        "fifos": kinds.count("fifo"),
        "fifo_bits": sum(n.width * n.spec(FifoSpec).capacity for n in dag.nodes if n.kind == "fifo"),
        "buffer_ports": kinds.count("read") + kinds.count("write"),
        "nodes": len(dag.nodes),
        "edges": len(dag.edges),
    }
