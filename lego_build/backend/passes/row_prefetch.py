"""The DMA's output rows read ahead into a two-row queue, for FPGA targets (issue 45).

The write engine reads the finished output half in place (:func:`lego_build.emit.soc.storer`):
the banks' read address holds the head row while its beats are taken and moves to the next row
in the cycle its last beat is taken, so the address multiplexer's select is that cycle's take,
and the take (AXI W's skid register, the burst-length queue, the row's beat counter) runs
through it into the read address of every output bank. On an FPGA the banks are LUT RAM and
block RAM spread over the part: on the default ``lego_soc`` on an LFE5U-85F that path was the
critical one (13.0 ns, 10.4 of them routing; 76.8 MHz). With this pass the banks' read address
is the row walker's register itself, a row is read ahead whenever the queue has room for it (the
take frees room in the same cycle, a gate in front of the walker's own registers), and the beats
are taken from the queue's head, a register: two rows of flip-flops per design (the in-place read
exists because lego_mnicoc's 16 x 16 would keep 16,384 of them, an ASIC's cost, not an FPGA's).
The first row reaches the queue a cycle later than it reached the head in place, the cycle its first
burst's address takes to be handshaken anyway (a beat is taken only once its burst's length is
queued, :data:`lego_build.mapping.latency.STORE_DATA`): the cycles are the in-place engine's, and
tests/test_emit_outbank.py holds the latency model to them. The array's row port carries both
halves' rows, so that each block RAM's output goes straight into the queue's flip-flops and the
half is chosen behind them (the multiplexer in front of them was the next worst path, issue 45);
the memory system reads that this pass ran (``HostMap.row_prefetch``).
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    return replace(dag, passes=dag.passes + ("row_prefetch",))


PASS = Pass("row_prefetch", requires=("codegen",), provides=("row_prefetch",), run=run)
