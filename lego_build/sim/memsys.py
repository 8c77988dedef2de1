"""Whole layers through the memory system: the driver's side of ``lego_soc``.

For a layer (lowered to the array's family, with the mapper's loop nest and controller
tile) :func:`program` makes what a device driver would: the DRAM images of the inputs
(the layer's bank image, :mod:`lego_build.ir.soc`), the register writes (tile grid, full
and remainder trips, per-tensor bases and strides, the array's strides and dataflow) and
where each output element comes back. :func:`run_layers` runs layers back to back on one
Verilator build of ``lego_soc`` (host and DRAM model: :mod:`lego_build.sim.soc_tb`) and
compares every output element with the exact golden model.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lego_build.errors import StageError
from lego_build.fulang.kinds import FUS
from lego_build.ir.adg import ADG
from lego_build.ir.host import HostMap
from lego_build.ir.mapping import Mapping
from lego_build.ir.soc import COUNTERS, CYCLES, MemSys, SocMap
from lego_build.ir.workload import Kernel
from lego_build.mapping.latency import Grid, Traffic, grid, layer_cycles, layer_traffic, mem_system, moving
from lego_build.mapping.sim_tile import strides
from lego_build.sim import verilator
from lego_build.sim.golden import golden, wrap_signed
from lego_build.sim.layout import fifo_registers, image_lanes, image_reads
from lego_build.sim.ppu import PPUConfig, apply, epilogue_config

ALIGN = 4096


def _pack(rows: int, slot: int, word: int, lanes: list[np.ndarray]) -> bytes:
    """Rows of ``slot`` bytes: lane ``i``'s words, little-endian, ``word`` bytes each."""
    out = np.zeros((rows, slot), dtype=np.uint8)
    for i, words in enumerate(lanes):
        v = np.asarray(words, dtype=np.int64) & ((1 << (8 * word)) - 1 if word < 8 else -1)
        for b in range(word):
            out[:len(v), i * word + b] = (v >> (8 * b)) & 0xFF
    return out.tobytes()


@dataclass(frozen=True)
class LayerRun:
    """What the host writes and expects for one layer."""

    name: str
    grid: Grid
    images: tuple[tuple[int, bytes], ...]  # (DRAM address, bytes) of each input
    out_addr: int
    out_bytes: int
    dram_bytes: int
    regs: tuple[tuple[int, int], ...]
    reads: np.ndarray  # (outputs, 2): row and lane of each output element in the output image
    want: np.ndarray  # the exact outputs, in ``reads`` order
    traffic: tuple[Traffic, ...]  # how each tensor moves (the latency model's view)
    ppu_mode: int = 0  # the output path's PPU mode (requantise, ReLU, table bits)
    out_slot: int = 0  # bytes of an output row in DRAM under the layer's dataflow (SocMap.slot)
    period: int = 1  # the array's shortest accumulation under the layer's dataflow (HostMap.out_period)


def program(hm: HostMap, sm: SocMap, adg: ADG, name: str, kernel: Kernel, mapping: Mapping, dataflow: str,
            operands: dict[str, np.ndarray], tile: dict | None = None, wraps: bool = False,
            epilogue: tuple[str, ...] = ()) -> LayerRun:
    """The layer's DRAM images, register writes and expected outputs; ``kernel`` at the
    hardware's widths, ``mapping`` the layer's loop nest, ``tile`` the mapper's controller tile,
    ``epilogue`` the element-wise operators after the layer, which the PPU on the output path
    applies (:mod:`lego_build.sim.ppu`, calibrated on the layer's outputs)."""
    df = adg.dataflow(dataflow)
    di = hm.dataflows.index(dataflow) if hm.dataflows else 0
    g, tk, tm = grid(kernel, mapping, adg.capacities(dataflow), tile, hm.out_period(dataflow))
    regs: list[tuple[int, int]] = []
    for l, (n, f, r) in enumerate(zip(g.tiles, g.full, g.rem)):
        regs += [(sm.tiles_reg(l), n - 1), (sm.full_reg(l), f - 1), (sm.rem_reg(l), r - 1)]
    images, addr = [], 0
    for ti, t in enumerate(hm.input_tensors):
        lanes = image_lanes(kernel, mapping, adg, df, t, operands[t], sm.lanes[ti])
        data = _pack(len(lanes[0]), sm.slot(ti, di), sm.word_bytes[ti], [lanes[i] for i in sm.lane_of(ti, di)])
        images.append((addr, data))
        addr += -(-len(data) // ALIGN) * ALIGN
    out_addr = addr
    reads = image_reads(kernel, mapping, adg, df)
    out_rows = mapping.footprint(kernel, hm.output_tensor)
    out_slot = sm.slot(len(hm.tensors) - 1, di)
    out_bytes = out_rows * out_slot
    bases = [a for a, _ in images] + [out_addr]
    for ti, t in enumerate(hm.tensors):
        image = moving(strides(kernel, mapping, t), g.trips)
        bank = moving(strides(tk, tm, t), g.trips)
        slot = sm.slot(ti, di)
        regs.append((sm.base_reg(ti), bases[ti]))
        for l in range(hm.levels):
            regs += [(sm.row_stride_reg(ti, l), image[l] * slot),
                     (sm.tile_stride_reg(ti, l), image[l] * slot * g.full[l]), (sm.bank_stride_reg(ti, l), bank[l])]
    traffic = layer_traffic(hm, sm, kernel, mapping, tk, tm, g, di)
    amask = (1 << hm.addr_bits) - 1
    for ti, t in enumerate(hm.tensors):  # the array's own address generators: the same bank strides
        for l, st in enumerate(moving(strides(tk, tm, t), g.trips)):
            regs.append((sm.core_base + hm.stride_reg(ti, l), st & amask))
    if hm.dataflows:
        regs.append((sm.core_base + hm.df_reg, hm.dataflows.index(dataflow)))
    for k in range(len(hm.shifts)):  # delay FIFOs off: every destination reads its fallback bank
        regs += [(sm.core_base + r, v) for r, v in fifo_registers(hm, k, list(g.full), None)]
    expect = golden(kernel, operands, FUS.get(adg.fu))
    if wraps:
        expect = wrap_signed(expect, hm.out_bits)
    ppu = epilogue_config(epilogue, np.asarray(expect).reshape(-1)) if hm.ppu else PPUConfig()
    if hm.ppu:
        regs += [(sm.core_base + r, v) for r, v in ppu.words(hm)]
    rows_lanes = np.stack([reads[:, 0], np.asarray(sm.word_of(len(hm.tensors) - 1, di))[reads[:, 1]]], axis=1)
    want = apply(ppu, np.asarray(expect).reshape(-1)[reads[:, 2]].astype(np.int64))
    dram = out_addr + -(-out_bytes // ALIGN) * ALIGN
    return LayerRun(name, g, tuple(images), out_addr, out_bytes, dram, tuple(regs), rows_lanes, want, tuple(traffic),
                    ppu.mode, out_slot, hm.out_period(dataflow))


def predict(hm: HostMap, sm: SocMap, run: LayerRun, memsys: MemSys) -> dict:
    """The latency model's cycles for the layer (:func:`lego_build.mapping.latency.layer_cycles`)."""
    return layer_cycles(run.grid, list(run.traffic), mem_system(hm, sm, memsys, run.period))


def script(sm: SocMap, run: LayerRun, work: Path, memsys: MemSys) -> str:
    """The testbench's commands for one layer (:mod:`lego_build.sim.soc_tb`): the DRAM sized and
    timed by ``memsys``, the input images, the register writes, the start and the read-backs."""
    lines = [f"M {run.dram_bytes}", f"T {memsys.dram_bytes_per_cycle} {memsys.dram_latency_cycles}"]
    for k, (addr, data) in enumerate(run.images):
        path = work / f"{run.name}.in{k}.bin"
        path.write_bytes(data)
        lines.append(f"F {addr} {path}")
    lines += [f"W {r} {v & 0xFFFFFFFF}" for r, v in run.regs]
    lines.append("S")
    lines += [f"R {CYCLES + k}" for k in range(len(COUNTERS))]
    lines.append(f"O {run.out_addr} {run.out_bytes} {work / (run.name + '.out.bin')}")
    return "\n".join(lines) + "\n"


def check(sm: SocMap, hm: HostMap, run: LayerRun, work: Path) -> dict:
    """Every output element of the layer against the golden model."""
    data = np.frombuffer((work / f"{run.name}.out.bin").read_bytes(), dtype=np.uint8)
    slot, word = run.out_slot or sm.slot_bytes[-1], sm.word_bytes[-1]
    rows = data.reshape(-1, slot)
    got = np.zeros(len(run.reads), dtype=np.int64)
    for b in range(word):
        got |= rows[run.reads[:, 0], run.reads[:, 1] * word + b].astype(np.int64) << (8 * b)
    got = wrap_signed(got, 8 * word)
    wrong = np.flatnonzero(got != run.want)
    out = {"outputs": int(len(got)), "mismatches": int(len(wrong))}
    if len(wrong):
        i = int(wrong[0])
        out["first_mismatch"] = {"row": int(run.reads[i, 0]), "lane": int(run.reads[i, 1]), "got": int(got[i]),
                                 "want": int(run.want[i])}
    return out


def run_layers(binary: Path, hm: HostMap, sm: SocMap, runs: list[LayerRun], memsys: MemSys, max_cycles: int,
               coverage: Path | None = None) -> list[dict]:
    """All ``runs`` in one process of the ``lego_soc`` simulator, its DRAM model timed by ``memsys``
    (the bus width is the binary's, ``sm.bus_bits``); per layer the comparison and
    the hardware's counters (:data:`lego_build.ir.soc.COUNTERS`); a binary built with
    coverage writes each layer's toggle counts to ``<coverage>.<k>.dat``."""
    with tempfile.TemporaryDirectory(prefix="lego_build-soc-") as tmp:
        work = Path(tmp)
        text = "".join(script(sm, r, work, memsys) for r in runs)
        out = verilator.execute(binary, text, max_cycles * len(runs), coverage=coverage,
                                what=f"layer {runs[0].name}" if len(runs) == 1 else f"the {len(runs)} layers")
        bad = [ln for ln in out if ln.split()[0] in ("AXIL_ERR", "DRAM_RANGE", "WLAST_MISMATCH", "FILE_ERR")]
        if bad:
            raise StageError(f"memory-system simulation: {bad[0]}")
        values = [int(ln.split()[1]) for ln in out if ln.startswith("V ")]
        if len(values) != len(COUNTERS) * len(runs):
            raise StageError(f"memory-system simulation printed {len(values)} counters for {len(runs)} layers")
        results = []
        for k, r in enumerate(runs):
            counters = dict(zip(COUNTERS, values[k * len(COUNTERS):(k + 1) * len(COUNTERS)]))
            model = predict(hm, sm, r, memsys)
            measured = counters["cycles"]
            results.append({"layer": r.name, "tiles": r.grid.count, "tile_trips": list(r.grid.full),
                            "last_tile_trips": list(r.grid.rem), **check(sm, hm, r, work), **counters,
                            "bytes_read": counters["rd_beats"] * sm.bus_bytes,
                            "bytes_written": counters["wr_beats"] * sm.bus_bytes,
                            "cycles_predicted": model["cycles"], "beats_predicted": model["beats"],
                            "error": round((model["cycles"] - measured) / measured, 4) if measured else None})
        return results
