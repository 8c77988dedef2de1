"""An input bank's two halves in one memory, for FPGA targets (issue 45).

An input bank is two halves (ping-pong: the array reads one while the DMA fills the other), each
a memory with one write and one read port, and the word the array reads is chosen between them
by the run's half tag. Each half is a block RAM of its own however shallow it is: ``gemmini_like``
at 8x8 took 180 of an LFE5U-85F's 208 DP16KDs for 64 KB (each of its 128 weight halves one block
RAM holding 192 bytes), and routing around the full block RAM columns took most of its 50-minute
build. The halves never need two reads or two writes in one cycle (the array reads one half, the
DMA or the host writes one), so here they are one memory of twice the depth behind the same two
ports, the half its address's top bit: the read's half is the run's tag at the address's cycle,
the write's the DMA's (or the host's) half. Half the block RAMs where a half fits one, and no
multiplexer behind the read word. Banks that fold (:mod:`lego_build.ir.fold`) keep their halves;
the output banks too (the read-modify-write reads one half while the DMA reads the other). The
schedule is unchanged; the emitter reads that this pass ran (``DAG.passes``).
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.config.schema import OptimizerConf
from lego_build.ir.dag import DAG


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    return replace(dag, passes=dag.passes + ("merged_halves",))


PASS = Pass("merged_halves", requires=("codegen",), provides=("merged_halves",), run=run)
