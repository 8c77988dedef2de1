"""Post-processing cost: the PPUs' cycles and energy for a network's non-array layers.

Seed 004 §6.2 counts PPU time in end-to-end latency (0.5-7.2 % of it). Our reading of the
hardware lego_build generates (``lego_soc``: one PPU lane per output word of an AXI beat,
``arch.memsys.axi_data_bits / arch.acc_bits`` lanes, each one element per cycle):

* an element-wise operator (ReLU, batch norm, a table activation) right after an array
  layer, or after another such operator, runs on the output path as the results stream to
  memory: no cycles of its own (the RTL's whole-layer runs measure that path), except that a
  residual add or a channel gate reads its second operand from DRAM (its bytes at the DRAM
  rate, not overlapped with the layer: an upper bound);
* any other operator is a pass of its own: it reads its operands from DRAM and writes its
  result back, ``max(elements x passes / lanes, bytes / arch.memsys.dram_bytes_per_cycle)`` cycles
  (:data:`~lego_build.ir.ppu_ops.PASSES`: softmax and the norms take two), with a second
  operand read for a residual add or a channel gate. ``elements`` is the layer's analysis
  figure (its output size; its input size for pooling and softmax, whose output is counted
  as large as its input: an upper bound);
* energy: per element and pass an L1 read and write and one MAC-sized operation, plus
  DRAM traffic at ``arch.energy.dram_pj`` per 16 bits.

Layout operators (reshape, concat) move no data here; an embedding lookup reads its rows.
"""
from __future__ import annotations

from math import ceil

from lego_build.ir.ppu_ops import BINARY, PASSES, on_output_path


def lanes(arch) -> int:
    """PPU lanes of the generated memory system: one per output word (whole bytes of
    ``arch.acc_bits``) of an AXI beat, as ``lego_build.emit.soc`` instantiates them."""
    return max(1, arch.memsys.axi_data_bits // (8 * -(-arch.acc_bits // 8)))


def ppu_layer(op: str, elements: int, fused: bool, arch) -> dict:
    """Cycles, DRAM bytes and energy of one post-processing layer."""
    e, word = arch.energy, arch.operand_bits / 8
    if fused:
        second = ceil(elements * word) if op in BINARY else 0
        return {"op": op, "fused": True, "cycles": ceil(second / arch.memsys.dram_bytes_per_cycle),
                "dram_bytes": second, "energy_pj": round(second * 8 / 16 * e.dram_pj, 6)}
    passes = PASSES.get(op, 1)
    operands = 2 if op in BINARY else 1
    dram_bytes = ceil(elements * word * (operands + 1))
    if op == "embedding":  # rows gathered from the table; the result stays on chip for the next layer
        dram_bytes = ceil(elements * word)
    cycles = max(ceil(elements * passes / lanes(arch)), ceil(dram_bytes / arch.memsys.dram_bytes_per_cycle))
    energy = (elements * passes * (2 * e.l1_pj * arch.operand_bits / 16 + e.mac_pj)
              + dram_bytes * 8 / 16 * e.dram_pj)
    return {"op": op, "fused": False, "cycles": cycles, "dram_bytes": dram_bytes, "energy_pj": round(energy, 6)}


def ppu_costs(layers, arch) -> list[dict]:
    """Per non-array layer of ``layers`` (``(entry, kernel)`` in network order, as
    :func:`lego_build.analysis.stage.layers_of` gives them): its cost row, weighted by ``count``."""
    rows, fuse = [], False
    for entry, kernel in layers:
        if kernel is not None:
            fuse = True
            continue
        if entry.get("unit") != "ppu":
            continue  # layout: no compute
        fused = fuse and (on_output_path(entry["op"]))
        fuse = fused
        rows.append({"name": entry["name"], "count": entry["count"], "elements": entry["elements"],
                     **ppu_layer(entry["op"], entry["elements"], fused, arch)})
    return rows


def ppu_totals(rows: list[dict]) -> dict:
    """Network totals of :func:`ppu_costs`, by operator too."""
    by_op: dict[str, int] = {}
    for r in rows:
        by_op[r["op"]] = by_op.get(r["op"], 0) + r["cycles"] * r["count"]
    return {
        "layers": sum(r["count"] for r in rows),
        "fused": sum(r["count"] for r in rows if r["fused"]),
        "cycles": sum(r["cycles"] * r["count"] for r in rows),
        "dram_bytes": sum(r["dram_bytes"] * r["count"] for r in rows),
        "energy_pj": round(sum(r["energy_pj"] * r["count"] for r in rows), 6),
        "cycles_by_op": dict(sorted(by_op.items())),
    }
