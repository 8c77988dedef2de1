"""Registered bank reads for FPGA targets (issue 45; seed 004 §5.5's FPGA-specific passes).

An FPGA block RAM's read word leaves it late: nextpnr's ECP5 model gives a DP16KD without its
output register 5.8 ns from clock to data, more than half a 100 MHz cycle before any routing,
and on the default array the path from there through the two halves' and the sub-banks'
multiplexers to the operand registers was the critical one (96 MHz on an LFE5U-85F). Every
bank read port here takes two cycles instead of one (``L_v`` 2): the bank registers the word it
read (:func:`rtl_templates_free.mk_bank` with ``outreg``), so that path ends at a flip-flop and
the multiplexers start the next cycle. Delay matching (which must come after, ``before``: the
schedule is built from these latencies) balances the rest of the array around the extra
register, taking it out of a read's delay chain where one follows, else the pipeline grows a
cycle, which the latency model reads from the schedule. The output banks' read-modify-write cycle is not changed.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG

#: a bank read port's latency with its word registered
REGISTERED_READ = 2


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    nodes = tuple(replace(n, latency=REGISTERED_READ) if n.kind == "read" else n for n in dag.nodes)
    return replace(dag, nodes=nodes, passes=dag.passes + ("registered_reads",))


PASS = Pass("registered_reads", requires=("codegen",), provides=("registered_reads",), run=run, before=("schedule",))
