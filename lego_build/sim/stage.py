"""``simulate`` stage: check the emitted RTL as the target asks.

Writes ``sim/result.json``: whether every output equals the NumPy golden model,
the simulated cycle count, and the predicted count (``1 + steps + drain``,
:meth:`lego_build.emit.host.HostMap.cycles`) which must be equal; the depth each
FIFO group runs at (``None``: unusable for this layer, fallback reads only); with
``target.synth`` also the Yosys cell and flip-flop counts.
"""
from __future__ import annotations

import shutil
from dataclasses import replace
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
from .golden import golden, random_operands, wrap_signed
from .layout import config_words, delay_cycles, fifo_steps, input_banks, output_reads
from .tiles import fit_tile


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


def representative(design_dir: Path, adg: ADG, target) -> tuple[str, Kernel, Mapping, str]:
    """The first mapped layer, lowered to the array's family and clipped to a tile that fits,
    with the dataflow the mapper chose for it."""
    mapped = {e["name"]: e for e in read_json(design_dir / "mapping.json")["layers"] if e["status"] == "mapped"}
    for entry, kernel in load_layers(design_dir):
        if entry["name"] in mapped and kernel is not None:
            lowered = lower(kernel, adg.kernel)
            mapping = Mapping.from_json(mapped[entry["name"]]["mapping"])
            tile, tile_mapping = fit_tile(lowered, mapping, adg.buffer_depth, target.tile_steps)
            return entry["name"], tile, tile_mapping, mapped[entry["name"]]["dataflow"]
    raise StageError("no mapped layer to simulate")


def simulate(cfg: LegoConfig, design_dir: Path) -> dict:
    rtl = design_dir / "rtl"
    hm = from_jsonable(HostMap, read_json(rtl / "host_interface.json"))
    adg = from_jsonable(ADG, read_json(design_dir / "adg.json"))
    name, kernel, mapping, df_name = representative(design_dir, adg, cfg.target)
    kernel = with_bits(kernel, hm.operand_bits, hm.out_bits)
    result: dict = {"seed": cfg.target.seed, "layer": name, "dataflow": df_name, "steps": mapping.steps,
                    "tile": {d.name: d.bound for d in kernel.dims}}
    data = random_operands(kernel, cfg.target.seed)
    dataflow = adg.dataflow(df_name)
    banks = input_banks(kernel, mapping, adg, dataflow, data, adg.buffer_depth)
    reads = output_reads(kernel, mapping, adg, dataflow)
    if hm.shifts:  # which FIFO groups this tile uses, and at what depth
        bounds = [lp.bound for lp in mapping.temporal]
        steps = [fifo_steps(kernel, mapping, adg, dataflow, sh, cap) for sh, cap in zip(hm.shifts, hm.fifo_capacities)]
        result["fifo_groups"] = [
            {"shift": {d: v for d, v in zip(adg.dims, sh) if v}, "depth": delay_cycles(bounds, t) if t else None}
            for sh, t in zip(hm.shifts, steps)]
    script = script_for(hm, config_words(hm, kernel, mapping, df_name, adg), banks)
    script += "".join(f"R {lane} {addr}\n" for lane, addr, _ in reads)
    work = design_dir / "sim" / "build"
    if work.exists():
        shutil.rmtree(work)
    binary = verilator.build(rtl, work, cfg.target.waveform)
    wave = (design_dir / "sim" / "wave.fst") if cfg.target.waveform else None
    out = verilator.execute(binary, script, cfg.target.max_cycles, wave)
    cycles = int(next(ln.split()[1] for ln in out if ln.startswith("CYCLES")))
    values = wrap_signed(np.array([int(ln.split()[1]) for ln in out if ln.startswith("D ")], dtype=np.uint64)
                         .astype(np.int64), hm.out_bits)
    expect = golden(kernel, data, hm.out_bits)
    want = np.array([expect[idx] for _, _, idx in reads], dtype=np.int64)
    mismatches = int(np.count_nonzero(values != want))
    predicted = hm.cycles(mapping.steps)
    result.update({
        "outputs": len(reads),
        "mismatches": mismatches,
        "match": mismatches == 0 and len(reads) == expect.size,
        "cycles_simulated": cycles,
        "cycles_predicted": predicted,
        "cycles_match": cycles == predicted,
    })
    return result


def run(cfg: LegoConfig, design_dir: Path) -> None:
    checks: dict = {}
    if cfg.target.lint:
        warnings = verilator.lint(design_dir / "rtl")
        if warnings:
            raise StageError(f"verilator -Wall lint: {len(warnings)} warnings, first: {warnings[0]}")
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
    print(f"simulate: {result['outputs']} outputs, {result['mismatches']} mismatches; "
          f"cycles simulated {result['cycles_simulated']}, predicted {result['cycles_predicted']}")
    if result["status"] != "pass":
        raise StageError(f"simulation does not match: {result['mismatches']} wrong outputs, "
                         f"{result['cycles_simulated']} cycles simulated vs {result['cycles_predicted']} predicted")
