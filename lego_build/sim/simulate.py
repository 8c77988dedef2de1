"""The RTL simulation a target runs (``target.scope``): :func:`simulate` dispatches to the
representative tiles on the array (:func:`simulate_tiles`, :mod:`.tiles`, :mod:`.tile_runs`)
or to whole layers through the memory system (:func:`lego_build.sim.layers.simulate_layers`),
and :func:`finish` prints the verdict and refuses a failing run with one line.

The result (the fields of :class:`~lego_build.ir.artifacts.SimResult`): per tile and data set,
whether every output equals the exact golden model (the first wrong output if not), the
simulated cycle count and the predicted count (``1 + steps + drain``,
:meth:`lego_build.ir.host.HostMap.cycles`), which must be equal, and the depth each FIFO group
ran at (``None``: unusable for that layer, fallback reads only); or per whole layer its
measured and predicted cycles; totals over them. Progress is printed as it happens. These
are the simulation helpers every simulating target shares (:mod:`lego_build.targets`); what
a target adds to them (lint, synthesis, physical figures) is the target's.
"""
from __future__ import annotations

from pathlib import Path

from lego_build.analysis.stage import layers_of
from lego_build.config.schema import LegoConfig
from lego_build.errors import StageError
from lego_build.ir.artifacts import SimResult
from lego_build.runtime.artifacts import write_artifact
from lego_build.runtime.atomic import install_file, temp_for
from lego_build.runtime.progress import Progress
from lego_build.runtime.userdirs import scratch
from lego_build.sim import verilator
from lego_build.sim.layers import simulate_layers
from lego_build.sim.tile_runs import mismatch_message, run_tiles, tile_runs
from lego_build.sim.tiles import data_sources, representative_tiles
from lego_build.sim.verilator import SCRATCH, drop_build_tree, measured_activity


def simulate(cfg: LegoConfig, design_dir: Path, inputs, coverage: bool = False) -> dict:
    """What ``target.scope`` runs (tiles, or whole layers), as :class:`SimResult` fields with
    ``status`` pass or fail (``activity``: the runs' toggles, with ``coverage``); ``none``:
    nothing, status ``skipped``."""
    if cfg.target.scope == "none":
        return {"status": "skipped", "reason": "target.scope=none"}
    if cfg.target.scope != "tiles":
        result = simulate_layers(cfg, design_dir, inputs, coverage)
        return {**result, "status": "pass" if result["match"] else "fail"}
    result = simulate_tiles(cfg, design_dir, inputs, coverage)
    return {**result, "status": "pass" if result["match"] and result["cycles_match"] else "fail"}


def simulated_runs(result: dict) -> list[dict]:
    """Each run of a simulation as the energy figures take it: a tile's (:func:`.tile_runs.tile_runs`)
    or a whole layer's (its MACs and measured cycles)."""
    if result.get("layers"):
        return [{"layer": r["layer"], "macs": r["macs"], "cycles": r["cycles"]} for r in result["layers"]]
    return tile_runs(result.get("tiles") or [])


def finish(result: dict, design_dir: Path) -> SimResult:
    """The stage's :class:`SimResult` of ``result``, its verdict printed; a failing one is written
    (kept for a look until the build rolls back, :mod:`lego_build.runtime.journal`) and refused
    with one line naming the first wrong tile or layer."""
    sim = SimResult(**result)
    if result["status"] == "skipped":
        print(f"simulate: no simulation ({result.get('reason', '')})")
        return sim
    if result.get("layers") is not None:
        if result["status"] != "pass":
            write_artifact(design_dir, "sim/result.json", sim)
            raise StageError(layer_mismatch_message(result))
        net = result["network"]
        print(f"simulate: {net['layers']} whole layers, {result['outputs']} outputs compared, 0 mismatches; "
              f"{net['cycles']} cycles measured, {net['cycles_predicted']} predicted (error {net['error']:+.1%})")
        return sim
    for t in result["tiles"]:
        print(f"simulate: {t['kind']} tile of {t['layer']} ({t['dataflow']}): {t['outputs']} outputs x "
              f"{len(t['runs'])} data sets ({'/'.join(r['data'] for r in t['runs'])}), {t['mismatches']} mismatches; "
              f"cycles simulated {t['cycles_simulated']}, predicted {t['cycles_predicted']}")
    if result["status"] != "pass":
        write_artifact(design_dir, "sim/result.json", sim)
        raise StageError(mismatch_message(result))
    return sim


def layer_mismatch_message(result: dict) -> str:
    """One line on the first whole layer with wrong outputs."""
    bad = next(r for r in result["layers"] if r["mismatches"])
    first = bad.get("first_mismatch", {})
    return (f"simulation does not match on layer {bad['layer']} (whole layer, {bad['tiles']} tiles): "
            f"{bad['mismatches']} wrong outputs of {bad['outputs']}; first at image row "
            f"{first.get('row')}, lane {first.get('lane')}: got {first.get('got')}, want "
            f"{first.get('want')}; the RTL disagrees with exact arithmetic")


def simulate_tiles(cfg: LegoConfig, design_dir: Path, inputs, coverage: bool = False) -> dict:
    """All representative tiles back to back on one Verilator build (one process: the
    dataflow, loop bounds and FIFO depths change by configuration writes only), each with
    every test-data set of ``target.data``; with ``coverage``, the toggles of the runs
    (``activity``, for the ``asic`` target)."""
    rtl = design_dir / "rtl"
    hm = inputs["rtl/host_interface.json"]
    adg = inputs["adg.json"]
    tiles = representative_tiles(inputs["mapping.json"], layers_of(inputs["analysis.json"]), adg, cfg.target, hm)
    data = data_sources(cfg.target)
    drop_build_tree(design_dir)
    fmt = verilator.wave_format() if cfg.target.waveform else ""
    if fmt == "vcd":
        print("simulate: Verilator's FST writer needs lz4.h (e.g. apt install liblz4-dev); writing VCD")
    print("simulate: compiling the RTL with Verilator" + (" (toggle coverage for power)" if coverage else "")
          + " ...", flush=True)
    wave = design_dir / "sim" / f"wave.{fmt}" if cfg.target.waveform else None
    with scratch(SCRATCH) as work:  # the C++, objects and coverage files: outside out/, removed at the end
        binary = verilator.build(rtl, work, cfg.target.waveform, fmt, coverage=coverage)
        written = temp_for(wave) if wave is not None else None  # the simulator writes it, then it is installed
        bar = Progress("simulate", len(tiles) * len(data), lines=True)
        toggles = work / "toggles" if coverage else None
        try:
            results = run_tiles(binary, hm, adg, tiles, cfg.target.seed, cfg.target.max_cycles, written, data,
                                bar.step, toggles)
            if written is not None:
                install_file(written, wave)
        finally:
            bar.close()
            if written is not None:
                written.unlink(missing_ok=True)  # a failed run's partial waveform
        activity = {}
        if toggles is not None:  # the toggles of the runs (each counted from its start to its done)
            activity = measured_activity([(r["dataflow"], run["cycles"]) for r in results for run in r["runs"]],
                                         sorted(work.glob("toggles.*.dat")), rtl)
    return {
        **({"activity": activity} if activity else {}),
        "seed": cfg.target.seed,
        "data": list(cfg.target.data),
        "overflow": "wrap" if adg.acc_wraps else "error",
        "tiles": results,
        "outputs": sum(r["outputs"] for r in results),
        "comparisons": sum(run["outputs"] for r in results for run in r["runs"]),
        "mismatches": sum(r["mismatches"] for r in results),
        "match": all(r["match"] for r in results),
        "cycles_match": all(r["cycles_match"] for r in results),
    }
