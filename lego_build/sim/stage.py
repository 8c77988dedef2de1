"""``simulate`` stage: check the emitted RTL as the target asks.

Simulates one tile of each kind of layer the workload has (:func:`representatives`)
back to back on one Verilator build, each with every test-data set of ``target.data``
(seeded random operands and the extreme patterns by default, :mod:`.golden`), and
writes ``sim/result.json``: per tile and data set, whether every output equals the
exact golden model (the first wrong output if not), the simulated cycle count and
the predicted count (``1 + steps + drain``, :meth:`lego_build.backend.interface.HostMap.cycles`),
which must be equal, and the depth each FIFO group ran at (``None``: unusable for
that layer, fallback reads only); totals over the tiles; with ``target.synth``
also the Yosys cell and flip-flop counts. Progress (the Verilator compile, each tile
run) is printed as it happens.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from math import prod
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from lego_build.analysis.lowering import lower
from lego_build.analysis.stage import layers_of, load_layers
from lego_build.config.schema import ASIC_TOPS, LegoConfig
from lego_build.errors import InputError, StageError
from lego_build.fulang.kinds import FUS
from lego_build.ir.adg import ADG
from lego_build.ir.artifacts import MappingDoc, SimResult
from lego_build.ir.dag import DelaySpec
from lego_build.ir.host import HostMap
from lego_build.ir.mapping import Mapping
from lego_build.ir.testdata import EXTREMES
from lego_build.ir.workload import Kernel, layer_kind
from lego_build.mapping.tiles import edge_tile, fit_tile, reduction_tile, window
from lego_build.runtime.artifacts import read_artifact, write_artifact
from lego_build.runtime.atomic import install_file, replace_dir, temp_for
from lego_build.runtime.progress import Progress
from lego_build.runtime.userdirs import scratch
from lego_build.sim import asic, energy_check, memsys, soc_tb, verilator, yosys
from lego_build.sim.golden import file_operands, golden, load_data_file, outputs_computed, pattern_operands, wrap_signed
from lego_build.sim.layout import config_words, delay_cycles, fifo_steps, input_banks, output_reads
from lego_build.sim.ppu import PPUConfig, apply, epilogue_config, on_chip


def with_bits(kernel: Kernel, adg: ADG, out_bits: int) -> Kernel:
    """The hardware's widths: random operands span each input buffer's range (the FU's operand)."""
    return replace(kernel, tensors=tuple(
        replace(t, bits=out_bits if t.role == "out" else adg.net(t.name).bits) for t in kernel.tensors))


def script_for(hm: HostMap, words, banks) -> str:
    lines = [f"C {a} {d}" for a, d in words]
    index = {t: i for i, t in enumerate(hm.input_tensors)}
    mask = (1 << hm.operand_bits) - 1
    for bank in banks:
        lines += [f"W {index[bank.tensor]} {bank.lane} {a} {int(v) & mask}" for a, v in enumerate(bank.words)]
    lines.append("S")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Tile:
    layer: str
    kind: str
    kernel: Kernel
    mapping: Mapping
    dataflow: str
    epilogue: tuple[str, ...] = ()  # element-wise ops after the layer (sim.ppu)
    offset: tuple[tuple[str, int], ...] = ()  # iteration offset of the tile in its layer, per dim


def representatives(design_dir: Path, adg: ADG, target) -> list[Tile]:
    """:func:`representative_tiles` of the ``mapping.json`` and ``analysis.json`` in ``design_dir``."""
    return representative_tiles(read_artifact(design_dir, "mapping.json"), load_layers(design_dir), adg, target)


def epilogues(layers) -> dict[str, tuple[str, ...]]:
    """Per array layer, the element-wise operators between it and the next array layer that
    the PPU applies (``analysis.json`` entries with ``unit: ppu``)."""
    out: dict[str, tuple[str, ...]] = {}
    last = None
    for entry, kernel in layers:
        if kernel is not None:
            last = entry["name"]
            out[last] = ()
        elif last is not None and entry.get("unit") == "ppu":
            out[last] += (entry["op"],)
    return out


def runnable(mapping: MappingDoc, adg: ADG) -> dict[str, dict]:
    """The mapped layers (by name) the array runs: those mapped to one of its dataflows
    (``mapper.unroll=search`` may map a layer for the model only: dataflow '')."""
    names = {df.name for df in adg.dataflows}
    return {e["name"]: e for e in mapping.layers if e["status"] == "mapped" and e["dataflow"] in names}


def nothing_to_simulate(mapping: MappingDoc) -> StageError:
    """Why no layer can be simulated: none mapped, or each only for the model (``mapper.unroll=search``:
    an unusable setting for a simulated build, exit 2)."""
    if any(e["status"] == "mapped" for e in mapping.layers):
        return InputError("mapper.unroll=search: no layer's unrolling is one of the array's dataflows, so the array "
                          "runs none of them; use mapper.unroll=dataflows, or doit map / target=rtl")
    return StageError("no mapped layer to simulate; use target=rtl, or a workload with a layer the mapper places")


def representative_tiles(mapping: MappingDoc, layers, adg: ADG, target) -> list[Tile]:
    """The first mapped layer of each kind present (:func:`layer_kind`: conv, grouped, depthwise,
    1x1, fc/matmul, ...), in network order, each lowered to the array's family, as the mapper's
    controller-level tile (clipped further if it exceeds ``target.tile_steps``), and run with
    the dataflow the mapper chose for its layer; plus the last (``edge``) tile of the first
    layer whose last tile has remainder bounds (Ruby's partial last tile: a layer that divides
    evenly into tiles has none, :func:`.tiles.edge_tile`)."""
    mapped = runnable(mapping, adg)
    epilogue = epilogues(layers)
    tiles: dict[str, Tile] = {}
    for entry, kernel in layers:
        if entry["name"] not in mapped or kernel is None:
            continue
        kind = layer_kind(kernel)
        if kind in tiles and "edge" in tiles:
            continue
        row = mapped[entry["name"]]
        lowered = lower(kernel, adg.kernel)
        tile, tile_mapping = fit_tile(lowered, Mapping.from_json(row["mapping"]), adg.capacities(row["dataflow"]),
                                      target.tile_steps, row.get("tile"))
        if kind not in tiles:
            tiles[kind] = Tile(entry["name"], kind, tile, tile_mapping, row["dataflow"], epilogue[entry["name"]])
        edge = edge_tile(lowered, tile, tile_mapping) if "edge" not in tiles else None
        if edge is not None:  # the layer's last tile: remainder bounds where a dim does not divide evenly
            tiles["edge"] = Tile(entry["name"], "edge", edge[0], edge[1], row["dataflow"], epilogue[entry["name"]],
                                 tuple(edge[2].items()))
    if not tiles:
        raise nothing_to_simulate(mapping)
    return list(tiles.values())


@dataclass(frozen=True)
class DataSource:
    """Where a run's operands come from: a generated pattern (:data:`golden.GENERATED`) or a file."""

    pattern: str
    seed: int = 0
    arrays: dict | None = None  # the file's arrays (pattern "file")
    path: str = ""

    def operands(self, tile: Tile, kernel: Kernel, origin: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
        if self.pattern != "file":
            return pattern_operands(kernel, self.pattern, self.seed)
        try:
            return file_operands(kernel, self.arrays or {}, tile.layer, origin, self.path)
        except ValueError as exc:
            raise InputError(str(exc)) from None


@dataclass(frozen=True)
class _Plan:
    """The data-independent part of a tile's runs: its window, configuration and read-back."""

    kernel: Kernel
    origin: dict
    reads: list  # (lane, addr, output element index)
    outputs: int  # output elements the tile computes
    config: list  # configuration writes (the PPU's come per run: calibrated on the outputs)
    info: dict


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
    return _Plan(kernel, origin, output_reads(kernel, tile.mapping, adg, dataflow), outputs_computed(kernel),
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


def data_sources(target, seed: int | None = None) -> list[DataSource]:
    """The runs ``target.data`` asks for, in order; ``file`` loads ``target.data_file``."""
    runs = []
    for pattern in target.data:
        if pattern == "file":
            try:
                arrays = load_data_file(Path(target.data_file))
            except ValueError as exc:
                raise InputError(str(exc)) from None
            runs.append(DataSource("file", arrays=arrays, path=target.data_file))
        else:
            runs.append(DataSource(pattern, target.seed if seed is None else seed))
    return runs


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
               "cycles_predicted": hm.cycles(plan.info["steps"])}
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


#: the prefix of a simulation's scratch directory in the system's temp directory (Verilator's
#: C++ and objects, coverage files): :func:`lego_build.runtime.userdirs.scratch`
SCRATCH = "lego_build-sim-"


def drop_build_tree(design_dir: Path) -> None:
    """Remove the Verilator tree (``sim/build``) that versions before issue 42 kept in the design
    directory; journaled, so a failed build puts it back."""
    if (design_dir / "sim" / "build").is_dir():
        replace_dir(design_dir / "sim" / "build")


def simulate(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    """All representative tiles back to back on one Verilator build (one process: the
    dataflow, loop bounds and FIFO depths change by configuration writes only), each with
    every test-data set of ``target.data``."""
    rtl = design_dir / "rtl"
    hm = inputs["rtl/host_interface.json"]
    adg = inputs["adg.json"]
    tiles = representative_tiles(inputs["mapping.json"], layers_of(inputs["analysis.json"]), adg, cfg.target)
    data = data_sources(cfg.target)
    drop_build_tree(design_dir)
    fmt = verilator.wave_format() if cfg.target.waveform else ""
    if fmt == "vcd":
        print("simulate: Verilator's FST writer needs lz4.h (e.g. apt install liblz4-dev); writing VCD")
    print("simulate: compiling the RTL with Verilator" + (" (toggle coverage for power)" if cfg.target.asic else "")
          + " ...", flush=True)
    wave = design_dir / "sim" / f"wave.{fmt}" if cfg.target.waveform else None
    with scratch(SCRATCH) as work:  # the C++, objects and coverage files: outside out/, removed at the end
        binary = verilator.build(rtl, work, cfg.target.waveform, fmt, coverage=cfg.target.asic)
        written = temp_for(wave) if wave is not None else None  # the simulator writes it, then it is installed
        bar = Progress("simulate", len(tiles) * len(data), lines=True)
        coverage = work / "toggles" if cfg.target.asic else None
        try:
            results = run_tiles(binary, hm, adg, tiles, cfg.target.seed, cfg.target.max_cycles, written, data,
                                bar.step, coverage)
            if written is not None:
                install_file(written, wave)
        finally:
            bar.close()
            if written is not None:
                written.unlink(missing_ok=True)  # a failed run's partial waveform
        activity = {}
        if coverage is not None:  # the toggles of the runs (each counted from its start to its done)
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


def scope_layers(cfg: LegoConfig, mapping: MappingDoc, layers, adg: ADG) -> list[tuple[dict, Kernel, tuple, str]]:
    """The layers ``target.scope`` runs whole: the first of each kind (``layers``) or every
    array layer (``network``, which needs every one mapped), each lowered to the array, with
    its epilogue (:func:`epilogues`) and its kind (:func:`layer_kind` of the layer as written:
    a conv lowered to a GEMM stays a conv)."""
    mapped = {e["name"]: e for e in mapping.layers if e["status"] == "mapped"}
    array = [(entry, kernel) for entry, kernel in layers if kernel is not None]
    if cfg.target.scope == "network":
        missing = [entry["name"] for entry, _ in array if entry["name"] not in mapped]
        if missing:
            raise InputError(f"target.scope=network: layer {missing[0]} ({len(missing)} in all) is unmappable on "
                             f"arch={cfg.arch.name}; use target.scope=layers, or an arch that maps every layer")
        run = runnable(mapping, adg)
        model = [name for name in mapped if name not in run]
        if model:
            raise InputError(f"target.scope=network: layer {model[0]} ({len(model)} in all) takes an unrolling none "
                             f"of the array's dataflows runs (mapper.unroll=search); use mapper.unroll=dataflows")
        chosen = array
    else:
        kinds: dict[str, tuple] = {}
        run = runnable(mapping, adg)
        for entry, kernel in array:
            if entry["name"] in run:
                kinds.setdefault(layer_kind(kernel), (entry, kernel))
        chosen = list(kinds.values())
    if not chosen:
        raise nothing_to_simulate(mapping)
    after = epilogues(layers)
    return [(mapped[entry["name"]], lower(kernel, adg.kernel), after[entry["name"]], layer_kind(kernel))
            for entry, kernel in chosen]


#: predicted cycles above which the simulator is compiled with optimization (a whole network)
LONG_RUN = 2_000_000


def _layer_job(job) -> dict:
    """One whole layer: its program, its run on its own process of the simulator, its figures."""
    hm, sm, adg, entry, kernel, epilogue, kind, data, binary, bw, lat, max_cycles, fus, coverage = job
    kernel = with_bits(kernel, adg, hm.out_bits)
    tile = Tile(entry["name"], kind, kernel, Mapping.from_json(entry["mapping"]), entry["dataflow"])
    operands = data.operands(tile, kernel, {t.name: (0,) * len(t.shape) for t in kernel.tensors})
    run = memsys.program(hm, sm, adg, entry["name"], kernel, tile.mapping, entry["dataflow"], operands,
                         entry.get("tile"), adg.acc_wraps, epilogue)
    (res,) = memsys.run_layers(binary, hm, sm, [run], bw, lat, max_cycles, coverage)
    return {**res, "kind": tile.kind, "ppu": {"ops": list(epilogue), "applied": on_chip(epilogue) if hm.ppu else [],
                                               "mode": run.ppu_mode},
            "dataflow": entry["dataflow"], "macs": entry["macs"],
            "cycles_mapper": entry["cycles"], "utilization": round(entry["macs"] / (res["cycles"] * fus), 4)}


def _on_ray(jobs: list, address: str):
    """The layers as Ray tasks (``target.ray_address``), results in layer order."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(address=None if address == "local" else address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    try:
        task = ray.remote(_layer_job)
        for ref in [task.remote(j) for j in jobs]:
            yield ray.get(ref)
    finally:
        if started:
            ray.shutdown()


def simulate_layers(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    """Whole layers through the memory system (``lego_soc``) on one Verilator build: every
    output element against the exact golden model, measured cycles against the latency model
    (:mod:`lego_build.mapping.latency`) and the mapper's own figure."""
    hm, sm, adg = inputs["rtl/host_interface.json"], inputs["rtl/soc_interface.json"], inputs["adg.json"]
    chosen = scope_layers(cfg, inputs["mapping.json"], layers_of(inputs["analysis.json"]), adg)
    data = data_sources(cfg.target)[0]
    drop_build_tree(design_dir)
    print("simulate: compiling the memory system and array with Verilator ...", flush=True)
    long_run = sum(entry["cycles"] for entry, *_ in chosen) > LONG_RUN
    bw, lat = cfg.arch.dram_bytes_per_cycle, cfg.arch.dram_latency_cycles
    with scratch(SCRATCH) as work:  # the C++, objects and coverage files: outside out/, removed at the end
        binary = verilator.build(design_dir / "rtl", work, False, top="lego_soc", testbench=soc_tb.testbench(sm),
                                 optimize=long_run, coverage=cfg.target.asic)
        bar = Progress("simulate", len(chosen), lines=True)
        jobs = [(hm, sm, adg, entry, kernel, epilogue, kind, replace(data, seed=data.seed + i), binary, bw, lat,
                 cfg.target.max_cycles, cfg.arch.rows * cfg.arch.cols,
                 work / f"toggles_{i}" if cfg.target.asic else None)  # each layer's toggles (one process each)
                for i, (entry, kernel, epilogue, kind) in enumerate(chosen)]
        rows = []
        try:
            if cfg.target.ray_address:
                results = _on_ray(jobs, cfg.target.ray_address)
            elif cfg.target.jobs == 1 or len(jobs) == 1:
                results = map(_layer_job, jobs)
            else:  # each layer's simulation depends only on its inputs: one process of the binary each
                results = Parallel(n_jobs=cfg.target.jobs or -1, return_as="generator")(
                    delayed(_layer_job)(j) for j in jobs)
            for row in results:
                rows.append(row)
                bar.step(f"{row['kind']} layer {row['layer']}: {row['tiles']} tiles, {row['cycles']} cycles "
                         f"(predicted {row['cycles_predicted']}), {row['mismatches']} mismatches")
        finally:
            bar.close()
        activity = {}
        if cfg.target.asic:  # the toggles of the whole layers (each from its start to its interrupt)
            activity = measured_activity([(r["dataflow"], r["cycles"]) for r in rows],
                                         sorted(work.glob("toggles_*.dat")), design_dir / "rtl")
    measured = sum(r["cycles"] for r in rows)
    predicted = sum(r["cycles_predicted"] for r in rows)
    network = {"layers": len(rows), "cycles": measured, "cycles_predicted": predicted,
               "error": round((predicted - measured) / measured, 4) if measured else None,
               "max_layer_error": max((abs(r["error"]) for r in rows if r["error"] is not None), default=None),
               "macs": sum(r["macs"] for r in rows),
               "load_wait": sum(r["load_wait"] for r in rows), "store_wait": sum(r["store_wait"] for r in rows),
               "runner": "ray" if cfg.target.ray_address else "serial" if cfg.target.jobs == 1 else "joblib"}
    return {
        **({"activity": activity} if activity else {}),
        "seed": cfg.target.seed, "data": [data.pattern], "overflow": "wrap" if adg.acc_wraps else "error",
        "scope": cfg.target.scope,
        "memory": {"bus_bits": sm.bus_bits, "dram_bytes_per_cycle": bw, "dram_latency_cycles": lat,
                   "max_outstanding": sm.max_outstanding},
        "layers": rows, "network": network,
        "outputs": sum(r["outputs"] for r in rows), "comparisons": sum(r["outputs"] for r in rows),
        "mismatches": sum(r["mismatches"] for r in rows), "match": all(r["mismatches"] == 0 for r in rows),
    }


def measured_activity(runs: list[tuple[str, int]], files: list[Path], rtl: Path) -> dict:
    """What the asic flow takes from simulated ``runs`` (``(dataflow, cycles)`` each): their
    cycles in all and per dataflow, and the toggle counts in their coverage ``files``."""
    per_df: dict = {}
    for df, cycles in runs:
        per_df[df] = per_df.get(df, 0) + cycles
    return {"cycles": sum(per_df.values()), "dataflow_cycles": per_df,
            "modules": verilator.toggle_rates(files, rtl)}


def gated_blocks(dag, runs: dict[str, int]) -> dict:
    """The power-gated delay blocks (seed 004 §5.5) and how long they were off in the runs:
    ``runs`` maps a dataflow to the cycles simulated in it; a block clocked only in the
    dataflows of its enable is off in the others. ``bit_cycles``: register bits x cycles off."""
    blocks = [(e.width * e.delay, e.enable) for e in dag.edges if e.delay and e.enable]
    blocks += [(n.width * n.latency, n.spec(DelaySpec).enable) for n in dag.nodes
               if n.kind == "delay" and n.spec(DelaySpec).enable]
    return {"blocks": len(blocks), "bits": sum(b for b, _ in blocks),
            "bit_cycles": sum(b * c for b, on in blocks for df, c in runs.items() if df not in on)}


def _asic(cfg: LegoConfig, design_dir: Path, activity: dict | None = None, runs: list[dict] = (),
          layers: list[dict] = ()) -> dict:
    """Area, Fmax and power of the design's RTL (:mod:`lego_build.sim.asic`); the SRAM macros
    are its banks: per tensor, lanes x two halves x sub-banks; ``activity`` the toggles the
    simulated ``runs`` made (modules it does not cover toggle at ``target.activity``); with
    runs, each one's energy and the cost model's check against them (``layers``: the mapping)."""
    dag, hm = read_artifact(design_dir, "dag.json"), read_artifact(design_dir, "rtl/host_interface.json")
    ways = {t: hm.rows_of(i) for i, t in enumerate(hm.input_tensors)}
    buffers = [(b.bits, b.depth // ways.get(b.tensor, 1), 2 * b.lanes * ways.get(b.tensor, 1), ways.get(b.tensor, 1))
               for b in dag.buffers]
    if activity:
        activity = {**activity, "gated": gated_blocks(dag, activity.pop("dataflow_cycles", {}))}
    with tempfile.TemporaryDirectory(prefix="lego_build-asic-") as tmp:
        out = asic.implement(design_dir / "rtl", buffers, cfg.target.library, cfg.target.asic_mhz,
                             cfg.target.activity, Path(tmp), activity, cfg.target.node_nm,
                             ASIC_TOPS[cfg.target.asic_top])
    print(f"simulate: asic ({out['library']}, {out['node_nm']:g} nm): {out['area_mm2']} mm2 with SRAM, "
          f"Fmax {out['fmax_mhz']} MHz, {out['power_total_mw']} mW at {out['power_mhz']:g} MHz "
          f"(toggle rates: {out['activity_source']})")
    if runs:
        out["runs"] = run_energy(out, runs)
        out["model_check"] = energy_check.check(out, runs, layers)
    return out


def run(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    checks: dict = {}
    if cfg.target.lint:
        # lego_soc instantiates the array, so one lint of it covers every module
        warnings = verilator.lint(design_dir / "rtl", "lego_soc")
        if warnings:
            raise StageError(f"verilator -Wall lint: {len(warnings)} warnings, first: {warnings[0]}; "
                             "fix the generator, or set target.lint=false to go on")
        checks["lint"] = "clean"
    if cfg.target.synth:
        checks["synth"] = yosys.synthesize(design_dir / "rtl")
        print(f"simulate: yosys: {checks['synth']['cells']} cells, {checks['synth']['flip_flops']} flip-flops "
              "(banks black-boxed)")
    if cfg.target.asic and not cfg.target.simulate:
        checks["asic"] = _asic(cfg, design_dir)  # nothing simulated: every net at the default rate
    if not cfg.target.simulate:
        print("simulate: no simulation for this target")
        return {"sim/result.json": SimResult(status="skipped", reason=f"target={cfg.target.name}", **checks)}
    if cfg.target.scope != "tiles":
        result = {**simulate_layers(cfg, design_dir, inputs), **checks}
        activity = result.pop("activity", None)
        if cfg.target.asic:
            runs = [{"layer": r["layer"], "macs": r["macs"], "cycles": r["cycles"]} for r in result["layers"]]
            result["asic"] = _asic(cfg, design_dir, activity, runs, inputs["mapping.json"].layers)
        result["status"] = "pass" if result["match"] else "fail"
        if result["status"] != "pass":
            write_artifact(design_dir, "sim/result.json", SimResult(**result))
            bad = next(r for r in result["layers"] if r["mismatches"])
            first = bad.get("first_mismatch", {})
            raise StageError(f"simulation does not match on layer {bad['layer']} (whole layer, {bad['tiles']} tiles): "
                             f"{bad['mismatches']} wrong outputs of {bad['outputs']}; first at image row "
                             f"{first.get('row')}, lane {first.get('lane')}: got {first.get('got')}, want "
                             f"{first.get('want')}; the RTL disagrees with exact arithmetic")
        net = result["network"]
        print(f"simulate: {net['layers']} whole layers, {result['outputs']} outputs compared, 0 mismatches; "
              f"{net['cycles']} cycles measured, {net['cycles_predicted']} predicted (error {net['error']:+.1%})")
        return {"sim/result.json": SimResult(**result)}
    result = {**simulate(cfg, design_dir, inputs), **checks}
    activity = result.pop("activity", None)
    if cfg.target.asic:
        result["asic"] = _asic(cfg, design_dir, activity, tile_runs(result["tiles"]), inputs["mapping.json"].layers)
    result["status"] = "pass" if result["match"] and result["cycles_match"] else "fail"
    for t in result["tiles"]:
        print(f"simulate: {t['kind']} tile of {t['layer']} ({t['dataflow']}): {t['outputs']} outputs x "
              f"{len(t['runs'])} data sets ({'/'.join(r['data'] for r in t['runs'])}), {t['mismatches']} mismatches; "
              f"cycles simulated {t['cycles_simulated']}, predicted {t['cycles_predicted']}")
    if result["status"] != "pass":  # kept for a look until the build rolls back (journal)
        write_artifact(design_dir, "sim/result.json", SimResult(**result))
        raise StageError(mismatch_message(result))
    return {"sim/result.json": SimResult(**result)}


def tile_runs(tiles: list[dict]) -> list[dict]:
    """The simulated tiles' runs as the energy figures take them: per run its layer, tile
    kind, data, MACs (the loop bounds' product of the tile it ran: the extremes may run a
    reduction tile) and measured cycles."""
    return [{"layer": t["layer"], "kind": t["kind"], "data": run["data"],
             "macs": prod(run.get("tile", t["tile"]).values()), "cycles": run["cycles"], "full": "tile" not in run}
            for t in tiles for run in t["runs"]]


def run_energy(asic_figures: dict, runs: list[dict]) -> list[dict]:
    """Per simulated run (a tile's, or a whole layer's), its energy (nJ) at the asic clock:
    the design's power (with the toggle rates of all the runs) times the run's measured
    cycles over the clock (issue 19)."""
    mw, mhz = asic_figures["power_total_mw"], asic_figures["power_mhz"]
    return [{**{k: v for k, v in r.items() if k != "full"}, "energy_nj": round(mw * r["cycles"] / mhz, 3)}
            for r in runs]


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
