"""Running tiles on one Verilator build of the array (``lego_top`` through its host port):
:func:`run_tiles` writes each run's script (configuration, operands, start, read-back), runs
them back to back in one process and compares every output with the exact golden model and
the simulated cycles with the predicted ones; :func:`mismatch_message` says what failed.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from pathlib import Path

import numpy as np

from lego_build.errors import StageError
from lego_build.fulang.kinds import FUS
from lego_build.ir.adg import ADG
from lego_build.ir.host import HostMap
from lego_build.ir.testdata import EXTREMES
from lego_build.ir.workload import Kernel
from lego_build.mapping.sim_tile import reduction_tile, window
from lego_build.sim import verilator
from lego_build.sim.golden import golden, outputs_computed, wrap_signed
from lego_build.sim.layout import bank_reads, config_words, delay_cycles, fifo_steps, input_banks, output_reads
from lego_build.sim.ppu import PPUConfig, apply, epilogue_config
from lego_build.sim.tiles import DataSource, Tile, with_bits


def script_for(hm: HostMap, words, banks) -> str:
    lines = [f"C {a} {d}" for a, d in words]
    index = {t: i for i, t in enumerate(hm.input_tensors)}
    mask = (1 << hm.operand_bits) - 1
    for bank in banks:
        lines += [f"W {index[bank.tensor]} {bank.lane} {a} {int(v) & mask}" for a, v in enumerate(bank.words)]
    lines.append("S")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Plan:
    """The data-independent part of a tile's runs: its window, configuration and read-back."""

    kernel: Kernel
    origin: dict
    reads: list  # (lane, addr, output element index)
    outputs: int  # output elements the tile computes
    config: list  # configuration writes (the PPU's come per run: calibrated on the outputs)
    info: dict


def _held(hm: HostMap, tile: Tile) -> int:
    """The cycles of a tile's steps: a short accumulation's held first step included
    (:meth:`lego_build.ir.host.HostMap.held`)."""
    temporal = tile.mapping.temporal
    accumulation = prod(lp.bound for lp in temporal[len(temporal) - hm.reduction_levels:])
    return hm.held(tile.mapping.steps, accumulation, tile.dataflow)


def _plan(hm: HostMap, adg: ADG, tile: Tile) -> _Plan:
    kernel, origin = window(with_bits(tile.kernel, adg, hm.out_bits))
    dataflow = adg.dataflow(tile.dataflow)
    info: dict = {"layer": tile.layer, "kind": tile.kind, "dataflow": tile.dataflow, "steps": tile.mapping.steps,
                  "tile": {d.name: d.bound for d in kernel.dims}, "offset": dict(tile.offset),
                  "ppu": {"ops": list(tile.epilogue)}}
    if hm.shifts:  # which FIFO groups this tile uses, and at what depth
        bounds = [lp.bound for lp in tile.mapping.temporal]
        steps = [fifo_steps(kernel, tile.mapping, adg, dataflow, sh, cap)
                 for sh, cap in zip(hm.shifts, hm.fifo_capacities)]
        info["fifo_groups"] = [
            {"shift": {d: v for d, v in zip(adg.dims, sh) if v}, "depth": delay_cycles(bounds, t) if t else None}
            for sh, t in zip(hm.shifts, steps)]
    return _Plan(kernel, origin, bank_reads(adg, dataflow, output_reads(kernel, tile.mapping, adg, dataflow)),
                 outputs_computed(kernel),
                 config_words(hm, kernel, tile.mapping, tile.dataflow, adg), info)


def _tile_script(hm: HostMap, adg: ADG, tile: Tile, plan: _Plan, data: DataSource):
    """Configuration, operands, start and read-back of one tile run, with its expected outputs.

    The expectation is the exact golden result (wrapped to the accumulator only when the
    design accepts wrap-around, ``arch.overflow=wrap``), through the PPU's model."""
    operands = data.operands(tile, plan.kernel, plan.origin)
    banks = input_banks(plan.kernel, tile.mapping, adg, adg.dataflow(tile.dataflow), operands,
                         adg.capacities(tile.dataflow))
    expect = golden(plan.kernel, operands, FUS.get(adg.fu))
    if adg.acc_wraps:
        expect = wrap_signed(expect, hm.out_bits)
    ppu = epilogue_config(tile.epilogue, expect) if hm.ppu else PPUConfig()
    words = plan.config + (ppu.words(hm) if hm.ppu else [])
    script = f"L {hm.read_latency}\n" + script_for(hm, words, banks)
    script += "".join(f"R {lane} {addr}\n" for lane, addr, _ in plan.reads)
    want = apply(ppu, np.array([expect[idx] for _, _, idx in plan.reads], dtype=object).astype(np.int64))
    return script, want, {"mode": ppu.mode, "table": ppu.table}


def run_tiles(binary: Path, hm: HostMap, adg: ADG, tiles: list[Tile], seed: int, max_cycles: int,
              wave: Path | None = None, data: list[DataSource] | None = None, progress=None,
              coverage: Path | None = None) -> list[dict]:
    """Run every tile with every test-data set back to back in one process of ``binary``;
    per tile, its outputs (``outputs`` elements of the tile), the mismatches over all runs
    and, per run (``runs``), the outputs compared, the cycles simulated and predicted. The
    extreme patterns run on the tile's reduction tile (every FU, the whole reduction, one
    step of the output dims: :func:`.tiles.reduction_tile`).

    ``data`` defaults to random operands (tile ``i`` seeded ``seed + i``); ``progress``
    is called with a label as each run finishes. Each run's script is made while the
    simulator works on the previous one."""
    runs = [(tile, d if d.pattern != "random" else replace(d, seed=d.seed + i))
            for i, tile in enumerate(tiles) for d in (data or [DataSource("random", seed)])]
    variants = {(id(tile), d.pattern in EXTREMES): _run_tile(tile, d.pattern in EXTREMES) for tile, d in runs}
    plans = {key: _plan(hm, adg, variant) for key, variant in variants.items()}
    made: list[tuple] = []

    def scripts():
        for tile, d in runs:
            key = (id(tile), d.pattern in EXTREMES)
            script, want, ppu = _tile_script(hm, adg, variants[key], plans[key], d)
            made.append((key, want, ppu))
            yield script

    labels = [f"{tile.kind} tile of {tile.layer}, {d.pattern} data" for tile, d in runs]
    out = verilator.execute(binary, scripts(), max_cycles, wave, on_line=_cycle_progress(progress, labels),
                            coverage=coverage)
    cycles = [int(ln.split()[1]) for ln in out if ln.startswith("CYCLES")]
    if len(cycles) != len(runs):
        raise StageError(f"simulation printed {len(cycles)} cycle counts for {len(runs)} tile runs")
    values = wrap_signed(np.array([int(ln.split()[1]) for ln in out if ln.startswith("D ")], dtype=np.uint64)
                         .astype(np.int64), hm.out_bits)
    results: dict[int, dict] = {}
    at = 0
    for (tile, d), (key, want, ppu), simulated in zip(runs, made, cycles):
        plan = plans[key]
        got, at = values[at:at + len(want)], at + len(want)
        wrong = np.flatnonzero(got != want) if len(got) == len(want) else np.arange(len(want))
        run = {"data": d.pattern, "outputs": len(want), "complete": len(want) == plan.outputs,
               "mismatches": int(len(wrong)), "steps": plan.info["steps"], "cycles": simulated,
               "cycles_predicted": hm.cycles(_held(hm, variants[key]))}
        if key[1]:
            run["tile"] = plan.info["tile"]  # the reduction tile of the extremes
        if len(wrong):
            i = int(wrong[0])
            run["first_mismatch"] = {"index": [int(v) for v in plan.reads[i][2]],
                                     "got": int(got[i]) if i < len(got) else None, "want": int(want[i])}
        base = plans.get((id(tile), False), plan)  # the tile's own figures, unless only extremes ran
        res = results.setdefault(id(tile), {**base.info, "ppu": {**base.info["ppu"], **ppu}, "runs": []})
        res["runs"].append(run)
    out_rows = []
    for tile in tiles:
        res = results[id(tile)]
        full = [r for r in res["runs"] if "tile" not in r] or res["runs"]
        out_rows.append({**res, "outputs": max(r["outputs"] for r in full),
                         "mismatches": sum(r["mismatches"] for r in res["runs"]),
                         "match": all(r["mismatches"] == 0 and r["complete"] for r in res["runs"]),
                         "cycles_simulated": full[0]["cycles"], "cycles_predicted": full[0]["cycles_predicted"],
                         "cycles_match": all(r["cycles"] == r["cycles_predicted"] for r in res["runs"])})
    return out_rows


def _run_tile(tile: Tile, extreme: bool) -> Tile:
    """The tile itself, or for the extreme patterns its reduction tile (:func:`.tiles.reduction_tile`)."""
    if not extreme:
        return tile
    kernel, mapping = reduction_tile(tile.kernel, tile.mapping)
    return replace(tile, kernel=kernel, mapping=mapping)


def _cycle_progress(progress, labels: list[str]):
    """A callback for the simulator's output lines: one progress step per finished run."""
    if progress is None:
        return None
    done = iter(labels)

    def on_line(line: str) -> None:
        if line.startswith("CYCLES"):
            progress(next(done, ""))
    return on_line


def tile_runs(tiles: list[dict]) -> list[dict]:
    """The simulated tiles' runs as the energy figures take them: per run its layer, tile
    kind, data, MACs (the loop bounds' product of the tile it ran: the extremes may run a
    reduction tile) and measured cycles."""
    return [{"layer": t["layer"], "kind": t["kind"], "data": run["data"],
             "macs": prod(run.get("tile", t["tile"]).values()), "cycles": run["cycles"], "full": "tile" not in run}
            for t in tiles for run in t["runs"]]


def mismatch_message(result: dict) -> str:
    """One line on the first failing tile run: which data, which output, what came back."""
    bad = next(t for t in result["tiles"] if not (t["match"] and t["cycles_match"]))
    run = next((r for r in bad["runs"] if r["mismatches"]), None)
    if run is not None:
        first = run.get("first_mismatch") or {}
        where = (f"; first at output index {first.get('index')}: got {first.get('got')}, want {first.get('want')}"
                 if first else "")
        return (f"simulation does not match on the {bad['kind']} tile of {bad['layer']} with {run['data']} data: "
                f"{run['mismatches']} wrong outputs of {run['outputs']}{where}; the RTL disagrees with exact "
                "arithmetic (check arch.acc_bits and the generator)")
    return (f"simulation does not match on the {bad['kind']} tile of {bad['layer']}: "
            f"{bad['cycles_simulated']} cycles simulated vs {bad['cycles_predicted']} predicted; fix the "
            "controller or the cycle model")
