"""Which banks of a tensor hold the same words under a dataflow: the DMA moves each once.

A tensor's banks (its data-node ports, one per lane) are filled from DRAM rows, one word per
lane. Under a dataflow, two ports whose FUs differ only along array axes that unroll dims the
tensor does not depend on (its access matrix has zero columns for them) read the same tensor
element at every bank address: a broadcast the interconnect did not take over, e.g. the weights
of an MN array (seed 004 §6.1) whose IC-OC dataflow gave every FU a weight bank. Such lanes
share one word of the *packed* row, which the memory system's DMA fans out to all of them, so
DRAM traffic is one word per distinct element rather than one per bank. Lanes the dataflow does
not use get none. Coarse on purpose: an axis that unrolls two dims counts as dependent when the
tensor depends on either (fewer shared words, never a wrong one).
"""
from __future__ import annotations

from lego_build.ir.dataflow import Dataflow
from lego_build.ir.workload import Kernel


def lane_packs(kernel: Kernel, tensor: str, dataflows: tuple[Dataflow, ...], ports, port_dataflows) \
        -> tuple[tuple[int, ...], ...]:
    """Per dataflow, each lane's word index in the packed row (first use first; -1 unused)."""
    access = kernel.tensor(tensor)
    depends = {kernel.dims[j].name for j in range(len(kernel.dims)) if any(row[j] for row in access.matrix)}
    users = port_dataflows or [()] * len(ports)
    out = []
    for df in dataflows:
        on_axis = [any(d in depends and e > 1 for d, e in axis) for axis in df.axes]
        keys: dict[tuple[int, ...], int] = {}
        pack = []
        for fu, dfs in zip(ports, users):
            if dfs and df.name not in dfs:
                pack.append(-1)
                continue
            key = tuple(c if dep else 0 for c, dep in zip(fu, on_axis))
            pack.append(keys.setdefault(key, len(keys)))
        out.append(tuple(pack))
    return tuple(out)
