"""Energy and cycle estimate of a mapping on the generated array.

A thin form of the Interstellar model (seed 001 ch. 5): energy = MACs x e_MAC +
L1 accesses x e_L1 + inter-FU hops x e_hop + DRAM words x e_DRAM, each access
scaled to the 16-bit words of Table 5.2. L1 reads: every data-node port of an
input tensor reads one word per temporal step; outputs are written once per
element and tile. Hops: every link moves one word per step. DRAM: each tensor
crosses once (L1-capacity tiling and refetches are not modelled yet). Latency is a roofline of compute steps plus array fill against DRAM
transfer cycles (double buffering assumed). Compute cycles follow the generated
controller exactly: one cycle to accept ``start``, one per time step, then the
array's pipeline latency (buffer read to last write, skew included), which the
mapper takes from the array's own primitive graph scheduled ASAP.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil, prod

from lego_build.ir.mapping import Mapping
from lego_build.ir.workload import Kernel


@dataclass(frozen=True, slots=True)
class NetShape:
    """What the cost model needs of a tensor's interconnection: ports and links."""

    tensor: str
    ports: int
    links: int


@dataclass(frozen=True, slots=True)
class Cost:
    energy_pj: float
    breakdown_pj: tuple[tuple[str, float], ...]
    compute_cycles: int
    dram_cycles: int
    cycles: int
    utilization: float

    def objective(self, name: str) -> float:
        return {"energy": self.energy_pj, "latency": float(self.cycles), "edp": self.energy_pj * self.cycles}[name]


def evaluate(kernel: Kernel, mapping: Mapping, nets: tuple[NetShape, ...], arch, latency: int) -> Cost:
    e = arch.energy
    steps = mapping.steps
    fus = prod(extent for _, extent in mapping.spatial)
    words = {t.name: t.bits / 16 for t in kernel.tensors}
    by_name = {n.tensor: n for n in nets}
    out = kernel.output
    l1_reads = sum(steps * by_name[t.name].ports * words[t.name] for t in kernel.inputs)
    l1_writes = mapping.footprint(kernel, out.name) * by_name[out.name].ports * words[out.name]
    hops = sum(steps * by_name[t.name].links for t in kernel.tensors)
    dram_words = sum(t.size * words[t.name] for t in kernel.tensors)
    breakdown = (
        ("mac", steps * fus * e.mac_pj),
        ("l1", (l1_reads + l1_writes) * e.l1_pj),
        ("hop", hops * e.hop_pj),
        ("dram", dram_words * e.dram_pj),
    )
    compute = 1 + steps + max(1, latency)
    dram_bytes = sum(t.size * ceil(t.bits / 8) for t in kernel.tensors)
    dram = ceil(dram_bytes / arch.dram_bytes_per_cycle)
    return Cost(
        energy_pj=sum(v for _, v in breakdown),
        breakdown_pj=breakdown,
        compute_cycles=compute,
        dram_cycles=dram,
        cycles=max(compute, dram),
        utilization=kernel.macs / (steps * fus),
    )
