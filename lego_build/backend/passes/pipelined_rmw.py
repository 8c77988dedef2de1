"""Pipelined read-modify-write into the output banks for FPGA targets (issue 45).

An output bank adds each word the array writes to what it holds (a reduction split over tiles
accumulates in place): read in the write's cycle, written back with the sum in the next. On an
FPGA that loop runs from a block RAM's slow clock-to-output (5.8 ns for an ECP5 DP16KD without
its output register) through a 32-bit adder into the block RAM's write port, the worst path of
the designs whose output banks are block RAM. Here the word read is registered first, the old
word (read or forwarded) chosen and registered, the sum registered after the adder, and written
a cycle later (``L_v`` 3 on every write node: the pipeline drains three cycles later, which the
latency model reads from :attr:`lego_build.ir.dag.DAG.latency`), so a block RAM's write port
sees flip-flops alone and the adder a 2:1 choice; a write then reads before the four writes
ahead of it have landed, so the port forwards their sums where they wrote the same address
(:func:`rtl_templates_free.mk_rmw_pipe`).

The folded output banks of multi-dataflow arrays (:mod:`lego_build.emit.fold`), whose adder is
shared by banks and dataflows, keep the one-cycle form: this pass leaves a DAG with a folded
output tensor as it is.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG, Node, PortSpec

#: the write node's latency: the registers behind the bank's read word, behind the choice of the
#: old word, and between the adder and the bank's write port
PIPELINED_WRITE = 3


def write_latency(dag: DAG, n: Node) -> int:
    """``L_v`` of write node ``n`` in this pass's form: :data:`PIPELINED_WRITE`, one more where the
    output's lanes are shared (:mod:`lego_build.ir.outshare`), whose members' requests are merged
    and registered before the read-modify-write (:func:`lego_build.emit.outbank.shared_port`)."""
    return PIPELINED_WRITE + bool(dag.buffer(n.spec(PortSpec).tensor).share)


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    folded = any(b.role == "out" and b.logical_bits > b.addr_bits for b in dag.buffers)
    nodes = dag.nodes if folded else tuple(
        replace(n, latency=write_latency(dag, n)) if n.kind == "write" else n for n in dag.nodes)
    return replace(dag, nodes=nodes, passes=dag.passes + ("pipelined_rmw",))


def forwards(dag: DAG) -> bool:
    """Whether every output bank's read-modify-write is this pass's, which forwards the sums of
    the writes its read meets instead of relying on the bank to return the old word when a read
    and a write of one address share a cycle (the one-cycle form of folded banks does rely on it)."""
    return "pipelined_rmw" in dag.passes and all(
        n.latency == write_latency(dag, n) for n in dag.nodes if n.kind == "write")


PASS = Pass("pipelined_rmw", requires=("codegen",), provides=("pipelined_rmw",), run=run, before=("schedule",))
