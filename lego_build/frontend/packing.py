"""Which banks of a tensor hold the same words under a dataflow: the DMA moves each once.

A tensor's banks (its data-node ports, one per lane) are filled from DRAM rows, one word per
lane. Under a dataflow, two ports read the same tensor element at every bank address when
their FUs' iteration offsets differ by a vector the tensor's access matrix maps to zero: seed
004 eq. 4.1's reuse condition ``M_{I->D} M_{S->I} (s_2 - s_1) = 0``, with no temporal part.
Examples: the weights of an MN array (seed 004 §6.1) whose IC-OC dataflow gave every FU a
weight bank (the rows do not index them), and a replicated row-stationary array's input rows
``ih = oh + kh`` (FU ``(kh + 1, oh - 1)`` reads FU ``(kh, oh)``'s row; the window is planned at
the dataflow's own stride, :func:`lego_build.analysis.lowering.strided`). Such lanes share one
word of the *packed* row, which the memory system's DMA fans out to all of them, so DRAM
traffic is one word per distinct element rather than one per bank. Lanes the dataflow does
not use get none.

Inputs share exactly; an output's lanes share only along axes that unroll no dim it depends
on (each lane's partial sum is its own word otherwise). A layer may share only where the
hardware does: :func:`shares_conflict` says when it does not (a stride-2 layer on a dataflow
planned for stride 1).
"""
from __future__ import annotations

import numpy as np

from lego_build.analysis.lowering import strided
from lego_build.frontend.links import virtual_coords
from lego_build.ir.dataflow import Dataflow
from lego_build.ir.workload import Kernel


def _lane_keys(kernel: Kernel, tensor: str, df: Dataflow, ports) -> list[tuple[int, ...]]:
    """Per port, the element offset its FU adds to the tensor's index (equal keys: equal words)."""
    access = kernel.tensor(tensor)
    if access.role == "out":
        depends = {kernel.dims[j].name for j in range(len(kernel.dims)) if any(row[j] for row in access.matrix)}
        on_axis = [any(d in depends and e > 1 for d, e in axis) for axis in df.axes]
        return [tuple(c if dep else 0 for c, dep in zip(fu, on_axis)) for fu in ports]
    m = np.array(access.matrix, dtype=np.int64) @ np.array(df.m_s(), dtype=np.int64)
    if not len(ports):
        return []
    fus = np.array(ports, dtype=np.int64).reshape(len(ports), -1)
    return [tuple(row) for row in (virtual_coords(df)[tuple(fus.T)] @ m.T).tolist()]


def lane_packs(kernel: Kernel, tensor: str, dataflows: tuple[Dataflow, ...], ports, port_dataflows) \
        -> tuple[tuple[int, ...], ...]:
    """Per dataflow, each lane's word index in the packed row (first use first; -1 unused)."""
    users = port_dataflows or [()] * len(ports)
    out = []
    for df in dataflows:
        keys: dict[tuple[int, ...], int] = {}
        pack = []
        for key, dfs in zip(_lane_keys(strided(kernel, df.stride), tensor, df, ports), users):
            if dfs and df.name not in dfs:
                pack.append(-1)
                continue
            pack.append(keys.setdefault(key, len(keys)))
        out.append(tuple(pack))
    return tuple(out)


def shares_conflict(kernel: Kernel, tensor: str, df: Dataflow, ports, pack: tuple[int, ...]) -> str:
    """Why ``kernel`` (a layer) cannot read ``tensor``'s packed rows under ``df`` ('' if it can):
    two lanes share a word in hardware that this layer's index maps read apart."""
    word: dict[int, tuple[int, ...]] = {}
    for fu, key, p in zip(ports, _lane_keys(kernel, tensor, df, ports), pack):
        if p < 0:
            continue
        if word.setdefault(p, key) != key:
            return (f"tensor {tensor}'s banks share DRAM words under dataflow {df.name} "
                    f"(stride {df.stride}) that this layer reads apart (FU {fu})")
    return ""
