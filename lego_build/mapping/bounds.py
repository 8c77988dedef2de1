"""A lower bound of every mapping of a layer, and the optimality gap of the one found (issue 22).

For one kernel on one hierarchy (the cost model of :mod:`.model`, seed 001 ch. 5), every
mapping the model can evaluate costs at least:

* **MACs:** ``MACs x e_MAC`` (every mapping does every MAC).
* **Data movement, per level that holds a tensor** (its chain of holders, as the model
  walks it: the MAC, the levels whose roles include the tensor, DRAM): each element the
  layer touches (:func:`lego_build.mapping.rtml.tensor_footprint` of the whole iteration
  domain: halos once, a stride's holes not at all) enters and leaves each level at least
  once: the parent is read (an input) or written (an output) once per element, the child
  written or read once. Where the MAC reads a per-PE level directly (no spatial fanout
  between them) the count is exact, not a bound: an operand without ``operand_reuse`` is
  read once per MAC, and an output accumulator is written once per MAC and read back for
  every product but the first of each element. DRAM writes each output once at the
  operand width (``final_bits``). Accesses are priced as the model prices them (a per-PE
  register file word by word, a shared memory by its port width). Hops in the array
  network are left at zero.
* **Cycles:** the compute steps ``ceil(MACs / PEs)`` (every PE busy every step) plus one
  controller run's overhead (a generated array's start cycle and pipeline latency), overlapped
  with each double-buffered level's compulsory traffic over its bandwidth, plus that of the
  levels which are not double-buffered (the model's roofline, §5.2).

The bound is valid for the model, so it never exceeds what any search finds on it (tests
check this over presets, layers and searches), and it is what an exhaustive search on an
unconstrained mapspace could at best approach. The *gap* of a mapping is ``1 - bound /
found`` for the mapper's objective (EDP: the product of the two bounds): 0 means provably
optimal for the model; a large gap says the layer's shape wastes the array (utilization) or
its data cannot stay on chip, or that the search stopped early.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from lego_build.ir.mapping import score
from lego_build.mapping.grid import MAC
from lego_build.mapping.model import Model
from lego_build.mapping.rtml import tensor_footprint


@dataclass(frozen=True)
class Bound:
    energy_pj: float
    cycles: int
    breakdown: tuple[tuple[str, str, float], ...]  # (level, role, pJ) as the model's breakdown

    def gap(self, objective: str, energy_pj: float, cycles: float) -> float:
        """``1 - bound / found`` for ``objective`` (0: provably optimal for the model)."""
        found = score(objective, energy_pj, cycles)
        return max(0.0, 1.0 - score(objective, self.energy_pj, self.cycles) / found) if found > 0 else 0.0


def lower_bound(m: Model) -> Bound:
    """The lower bound of the module docstring for ``m``'s kernel and hierarchy."""
    k, h = m.kernel, m.h
    bounds = [d.bound for d in k.dims]
    acc: dict[tuple[int, str], list[float]] = {}

    def add(level: int, tname: str, reads: float, writes: float) -> None:
        cur = acc.setdefault((level, tname), [0.0, 0.0])
        cur[0] += reads
        cur[1] += writes

    macs = k.macs
    for t in k.tensors:
        touched = tensor_footprint(t, bounds)
        chain = (MAC,) + m.holders[t.name]
        out = t.role == "out"
        for child, parent in zip(chain, chain[1:]):
            direct = child == MAC and not (child < h.fanout <= parent)  # the MAC reads a per-PE level
            if out:
                writes = macs if direct else touched
                add(parent, t.name, max(0.0, writes - t.size) if direct else 0.0, writes)
                if child != MAC:
                    add(child, t.name, touched, 0.0)
            else:
                reads = macs if direct and not h.operand_reuse else touched
                add(parent, t.name, reads, 0.0)
                if child != MAC:
                    add(child, t.name, 0.0, touched)
    breakdown = [("mac", "mac", macs * h.mac_pj)]
    traffic = [0.0] * len(h.levels)
    for (lvl, tname), (reads, writes) in sorted(acc.items()):
        pj, bits = m.price(lvl, tname, reads, writes)  # priced as the model prices them
        breakdown.append((h.levels[lvl].name, m.roles[tname], pj))
        traffic[lvl] += bits
    cycles, _ = m.roofline(ceil(macs / h.pes) + m.tile_overhead, traffic)  # at least one controller run
    return Bound(sum(pj for *_, pj in breakdown), cycles, tuple(breakdown))
