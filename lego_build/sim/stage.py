"""``simulate`` stage: check the emitted RTL as the target asks.

Simulates one tile of each kind of layer the workload has (:func:`representatives`)
back to back on one Verilator build and writes ``sim/result.json``: per tile,
whether every output equals the NumPy golden model, the simulated cycle count and
the predicted count (``1 + steps + drain``, :meth:`lego_build.emit.host.HostMap.cycles`),
which must be equal, and the depth each FIFO group ran at (``None``: unusable for
that layer, fallback reads only); totals over the tiles; with ``target.synth``
also the Yosys cell and flip-flop counts.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from lego_build.analysis.lowering import lower
from lego_build.analysis.stage import load_layers
from lego_build.emit.host import HostMap
from lego_build.flow.atomic import read_json, write_json
from lego_build.flow.schema import LegoConfig
from lego_build.flow.stages import StageError
from lego_build.ir.adg import ADG
from lego_build.ir.mapping import Mapping
from lego_build.ir.serialize import from_jsonable
from lego_build.ir.workload import Kernel

from . import verilator, yosys
from .golden import golden, outputs_computed, random_operands, wrap_signed
from .layout import config_words, delay_cycles, fifo_steps, input_banks, output_reads
from .ppu import PPUConfig, apply, epilogue_config
from .tiles import edge_tile, fit_tile


def with_bits(kernel: Kernel, operand_bits: int, out_bits: int) -> Kernel:
    """The hardware's widths: random operands span the array's operand range."""
    return replace(kernel, tensors=tuple(
        replace(t, bits=out_bits if t.role == "out" else operand_bits) for t in kernel.tensors))


def script_for(hm: HostMap, words, banks) -> str:
    lines = [f"C {a} {d}" for a, d in words]
    index = {t: i for i, t in enumerate(hm.input_tensors)}
    mask = (1 << hm.operand_bits) - 1
    for bank in banks:
        lines += [f"W {index[bank.tensor]} {bank.lane} {a} {int(v) & mask}" for a, v in enumerate(bank.words)]
    lines.append("S")
    return "\n".join(lines) + "\n"


def layer_kind(kernel: Kernel) -> str:
    """``conv`` (k x k, dense), ``depthwise`` (grouped), ``pointwise`` (1x1), ``matmul`` (fc, attention),
    ``tensor`` (MTTKRP, TTMc)."""
    bounds = {d.name: d.bound for d in kernel.dims}
    if kernel.name == "conv2d":
        if bounds["g"] > 1:
            return "depthwise"
        return "pointwise" if bounds["kh"] == bounds["kw"] == 1 else "conv"
    return "matmul" if kernel.name == "gemm" else "tensor"


@dataclass(frozen=True)
class Tile:
    layer: str
    kind: str
    kernel: Kernel
    mapping: Mapping
    dataflow: str
    epilogue: tuple[str, ...] = ()  # element-wise ops after the layer (sim.ppu)


def representatives(design_dir: Path, adg: ADG, target) -> list[Tile]:
    """The first mapped layer of each kind present (first conv, a depthwise conv, a 1x1 conv,
    an fc/matmul, ...), in network order, each lowered to the array's family, as the mapper's
    controller-level tile (clipped further if it exceeds ``target.tile_steps``), and run with
    the dataflow the mapper chose for its layer; plus the last (``edge``) tile of the first
    layer that needs several, with remainder bounds (Ruby's partial last tile)."""
    mapped = {e["name"]: e for e in read_json(design_dir / "mapping.json")["layers"] if e["status"] == "mapped"}
    layers = load_layers(design_dir)
    epilogue: dict[str, tuple[str, ...]] = {}
    last = None
    for entry, kernel in layers:  # the element-wise ops between an array layer and the next one
        if kernel is not None:
            last = entry["name"]
            epilogue[last] = ()
        elif last is not None and entry.get("unit") == "ppu":
            epilogue[last] += (entry["op"],)
    tiles: dict[str, Tile] = {}
    for entry, kernel in layers:
        if entry["name"] not in mapped or kernel is None or layer_kind(kernel) in tiles:
            continue
        lowered = lower(kernel, adg.kernel)
        mapping = Mapping.from_json(mapped[entry["name"]]["mapping"])
        tile, tile_mapping = fit_tile(lowered, mapping, adg.buffer_depth, target.tile_steps,
                                      mapped[entry["name"]].get("tile"))
        tiles[layer_kind(kernel)] = Tile(entry["name"], layer_kind(kernel), tile, tile_mapping,
                                         mapped[entry["name"]]["dataflow"], epilogue[entry["name"]])
        edge = edge_tile(lowered, tile, tile_mapping) if "edge" not in tiles else None
        if edge is not None:  # the same layer's last tile: remainder bounds in every dim
            tiles["edge"] = Tile(entry["name"], "edge", *edge, mapped[entry["name"]]["dataflow"],
                                 epilogue[entry["name"]])
    if not tiles:
        raise StageError("no mapped layer to simulate; use target=rtl, or a workload with a layer the mapper places")
    return list(tiles.values())


def _tile_script(hm: HostMap, adg: ADG, tile: Tile, seed: int):
    """Configuration, operands, start and read-back of one tile, with its golden outputs."""
    kernel = with_bits(tile.kernel, hm.operand_bits, hm.out_bits)
    data = random_operands(kernel, seed)
    dataflow = adg.dataflow(tile.dataflow)
    banks = input_banks(kernel, tile.mapping, adg, dataflow, data, adg.buffer_depth)
    reads = output_reads(kernel, tile.mapping, adg, dataflow)
    expect = golden(kernel, data, hm.out_bits)
    ppu = epilogue_config(tile.epilogue, expect) if hm.ppu else PPUConfig()
    words = config_words(hm, kernel, tile.mapping, tile.dataflow, adg) + (ppu.words(hm) if hm.ppu else [])
    script = f"L {hm.read_latency}\n" + script_for(hm, words, banks)
    script += "".join(f"R {lane} {addr}\n" for lane, addr, _ in reads)
    want = apply(ppu, np.array([expect[idx] for _, _, idx in reads], dtype=np.int64))
    info: dict = {"layer": tile.layer, "kind": tile.kind, "dataflow": tile.dataflow, "steps": tile.mapping.steps,
                  "tile": {d.name: d.bound for d in kernel.dims},
                  "ppu": {"ops": list(tile.epilogue), "mode": ppu.mode, "table": ppu.table}}
    if hm.shifts:  # which FIFO groups this tile uses, and at what depth
        bounds = [lp.bound for lp in tile.mapping.temporal]
        steps = [fifo_steps(kernel, tile.mapping, adg, dataflow, sh, cap)
                 for sh, cap in zip(hm.shifts, hm.fifo_capacities)]
        info["fifo_groups"] = [
            {"shift": {d: v for d, v in zip(adg.dims, sh) if v}, "depth": delay_cycles(bounds, t) if t else None}
            for sh, t in zip(hm.shifts, steps)]
    return script, want, outputs_computed(kernel), info


def run_tiles(binary: Path, hm: HostMap, adg: ADG, tiles: list[Tile], seed: int, max_cycles: int,
              wave: Path | None = None) -> list[dict]:
    """Run ``tiles`` back to back in one process of ``binary``; per tile, outputs vs golden and cycles."""
    parts = [_tile_script(hm, adg, tile, seed + i) for i, tile in enumerate(tiles)]
    out = verilator.execute(binary, "".join(p[0] for p in parts), max_cycles, wave)
    cycles = [int(ln.split()[1]) for ln in out if ln.startswith("CYCLES")]
    if len(cycles) != len(parts):
        raise StageError(f"simulation printed {len(cycles)} cycle counts for {len(parts)} tiles")
    values = wrap_signed(np.array([int(ln.split()[1]) for ln in out if ln.startswith("D ")], dtype=np.uint64)
                         .astype(np.int64), hm.out_bits)
    results, at = [], 0
    for (_, want, size, info), simulated in zip(parts, cycles):
        got, at = values[at:at + len(want)], at + len(want)
        mismatches = int(np.count_nonzero(got != want)) if len(got) == len(want) else len(want)
        predicted = hm.cycles(info["steps"])
        results.append({**info, "outputs": len(want), "mismatches": mismatches,
                        "match": mismatches == 0 and len(want) == size,
                        "cycles_simulated": simulated, "cycles_predicted": predicted,
                        "cycles_match": simulated == predicted})
    return results


def simulate(cfg: LegoConfig, design_dir: Path) -> dict:
    """All representative tiles back to back on one Verilator build (one process: the
    dataflow, loop bounds and FIFO depths change by configuration writes only)."""
    rtl = design_dir / "rtl"
    hm = from_jsonable(HostMap, read_json(rtl / "host_interface.json"))
    adg = from_jsonable(ADG, read_json(design_dir / "adg.json"))
    tiles = representatives(design_dir, adg, cfg.target)
    work = design_dir / "sim" / "build"
    if work.exists():
        shutil.rmtree(work)
    fmt = verilator.wave_format() if cfg.target.waveform else ""
    if fmt == "vcd":
        print("simulate: Verilator's FST writer needs lz4.h (e.g. apt install liblz4-dev); writing VCD")
    binary = verilator.build(rtl, work, cfg.target.waveform, fmt)
    wave = (design_dir / "sim" / f"wave.{fmt}") if cfg.target.waveform else None
    results = run_tiles(binary, hm, adg, tiles, cfg.target.seed, cfg.target.max_cycles, wave)
    return {
        "seed": cfg.target.seed,
        "tiles": results,
        "outputs": sum(r["outputs"] for r in results),
        "mismatches": sum(r["mismatches"] for r in results),
        "match": all(r["match"] for r in results),
        "cycles_match": all(r["cycles_match"] for r in results),
    }


def run(cfg: LegoConfig, design_dir: Path) -> None:
    checks: dict = {}
    if cfg.target.lint:
        warnings = verilator.lint(design_dir / "rtl")
        if warnings:
            raise StageError(f"verilator -Wall lint: {len(warnings)} warnings, first: {warnings[0]}; "
                             "fix the generator, or set target.lint=false to go on")
        checks["lint"] = "clean"
    if cfg.target.synth:
        checks["synth"] = yosys.synthesize(design_dir / "rtl")
        print(f"simulate: yosys: {checks['synth']['cells']} cells, {checks['synth']['flip_flops']} flip-flops "
              "(banks black-boxed)")
    if not cfg.target.simulate:
        write_json(design_dir / "sim" / "result.json",
                   {"status": "skipped", "reason": f"target={cfg.target.name}", **checks})
        print("simulate: no simulation for this target")
        return
    result = {**simulate(cfg, design_dir), **checks}
    result["status"] = "pass" if result["match"] and result["cycles_match"] else "fail"
    write_json(design_dir / "sim" / "result.json", result)
    for t in result["tiles"]:
        print(f"simulate: {t['kind']} tile of {t['layer']} ({t['dataflow']}): {t['outputs']} outputs, "
              f"{t['mismatches']} mismatches; cycles simulated {t['cycles_simulated']}, "
              f"predicted {t['cycles_predicted']}")
    if result["status"] != "pass":
        bad = next(t for t in result["tiles"] if not (t["match"] and t["cycles_match"]))
        raise StageError(f"simulation does not match on the {bad['kind']} tile of {bad['layer']}: "
                         f"{bad['mismatches']} wrong outputs, {bad['cycles_simulated']} cycles simulated vs "
                         f"{bad['cycles_predicted']} predicted")
