"""Whole layers through the memory system (``target.scope=layers`` or ``network``): each
layer's program (:mod:`.memsys`) run on its own process of one Verilator build of
``lego_soc``, in turn, ``run.jobs`` at a time (joblib) or as Ray tasks (``run.ray_address``);
every output element against the exact golden model, the measured cycles against the
latency model (:mod:`lego_build.mapping.latency`) and the mapper's own figure.
"""
from __future__ import annotations

from dataclasses import replace
from math import prod
from pathlib import Path

from joblib import Parallel, delayed

from lego_build.analysis.lowering import lower
from lego_build.analysis.stage import layers_of
from lego_build.config.schema import LegoConfig
from lego_build.errors import InputError
from lego_build.ir.adg import ADG
from lego_build.ir.artifacts import MappingDoc
from lego_build.ir.mapping import Mapping
from lego_build.ir.workload import Kernel, layer_kind
from lego_build.runtime.progress import Progress
from lego_build.runtime.userdirs import scratch
from lego_build.sim import memsys, soc_tb, verilator
from lego_build.sim.ppu import on_chip
from lego_build.sim.tiles import Tile, data_sources, epilogues, nothing_to_simulate, runnable, with_bits
from lego_build.sim.verilator import SCRATCH, drop_build_tree, measured_activity


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
    hm, sm, adg, entry, kernel, epilogue, kind, data, binary, dram, max_cycles, fus, coverage = job
    kernel = with_bits(kernel, adg, hm.out_bits)
    tile = Tile(entry["name"], kind, kernel, Mapping.from_json(entry["mapping"]), entry["dataflow"])
    operands = data.operands(tile, kernel, {t.name: (0,) * len(t.shape) for t in kernel.tensors})
    run = memsys.program(hm, sm, adg, entry["name"], kernel, tile.mapping, entry["dataflow"], operands,
                         entry.get("tile"), adg.acc_wraps, epilogue)
    (res,) = memsys.run_layers(binary, hm, sm, [run], dram, max_cycles, coverage)
    return {**res, "kind": tile.kind, "ppu": {"ops": list(epilogue), "applied": on_chip(epilogue) if hm.ppu else [],
                                               "mode": run.ppu_mode},
            "dataflow": entry["dataflow"], "macs": entry["macs"],
            "cycles_mapper": entry["cycles"], "utilization": round(entry["macs"] / (res["cycles"] * fus), 4)}


def _on_ray(jobs: list, address: str):
    """The layers as Ray tasks (``run.ray_address``), results in layer order."""
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


def run_jobs(jobs: list, run) -> tuple[str, object]:
    """The runner ``run`` (:class:`~lego_build.config.schema.RunConf`) asks for and the layers'
    results from it, in layer order: Ray tasks (``run.ray_address``), in turn (``run.jobs=1``
    or a single layer) or ``run.jobs`` processes (joblib; 0: one per core)."""
    if run.ray_address:
        return "ray", _on_ray(jobs, run.ray_address)
    if run.jobs == 1 or len(jobs) == 1:
        return "serial" if run.jobs == 1 else "joblib", map(_layer_job, jobs)
    # each layer's simulation depends only on its inputs: one process of the binary each
    return "joblib", Parallel(n_jobs=run.jobs or -1, return_as="generator")(delayed(_layer_job)(j) for j in jobs)


def simulate_layers(cfg: LegoConfig, design_dir: Path, inputs, coverage: bool = False) -> dict:
    """Whole layers through the memory system (``lego_soc``) on one Verilator build: every
    output element against the exact golden model, measured cycles against the latency model
    (:mod:`lego_build.mapping.latency`) and the mapper's own figure; with ``coverage``, the
    toggles of the runs (``activity``, for the ``asic`` target)."""
    hm, sm, adg = inputs["rtl/host_interface.json"], inputs["rtl/soc_interface.json"], inputs["adg.json"]
    chosen = scope_layers(cfg, inputs["mapping.json"], layers_of(inputs["analysis.json"]), adg)
    data = data_sources(cfg.target)[0]
    drop_build_tree(design_dir)
    print("simulate: compiling the memory system and array with Verilator ...", flush=True)
    long_run = sum(entry["cycles"] for entry, *_ in chosen) > LONG_RUN
    dram = cfg.arch.memsys.ir()  # the DRAM model's timing (the bus width is the binary's)
    with scratch(SCRATCH) as work:  # the C++, objects and coverage files: outside out/, removed at the end
        binary = verilator.build(design_dir / "rtl", work, False, top="lego_soc", testbench=soc_tb.testbench(sm),
                                 optimize=long_run, coverage=coverage)
        bar = Progress("simulate", len(chosen), lines=True)
        jobs = [(hm, sm, adg, entry, kernel, epilogue, kind, replace(data, seed=data.seed + i), binary, dram,
                 cfg.target.max_cycles, prod(adg.shape),
                 work / f"toggles_{i}" if coverage else None)  # each layer's toggles (one process each)
                for i, (entry, kernel, epilogue, kind) in enumerate(chosen)]
        rows = []
        try:
            runner, results = run_jobs(jobs, cfg.run)
            for row in results:
                rows.append(row)
                bar.step(f"{row['kind']} layer {row['layer']}: {row['tiles']} tiles, {row['cycles']} cycles "
                         f"(predicted {row['cycles_predicted']}), {row['mismatches']} mismatches")
        finally:
            bar.close()
        activity = {}
        if coverage:  # the toggles of the whole layers (each from its start to its interrupt)
            activity = measured_activity([(r["dataflow"], r["cycles"]) for r in rows],
                                         sorted(work.glob("toggles_*.dat")), design_dir / "rtl")
    measured = sum(r["cycles"] for r in rows)
    predicted = sum(r["cycles_predicted"] for r in rows)
    network = {"layers": len(rows), "cycles": measured, "cycles_predicted": predicted,
               "error": round((predicted - measured) / measured, 4) if measured else None,
               "max_layer_error": max((abs(r["error"]) for r in rows if r["error"] is not None), default=None),
               "macs": sum(r["macs"] for r in rows),
               "load_wait": sum(r["load_wait"] for r in rows), "store_wait": sum(r["store_wait"] for r in rows),
               "runner": runner}
    return {
        **({"activity": activity} if activity else {}),
        "seed": cfg.target.seed, "data": [data.pattern], "overflow": "wrap" if adg.acc_wraps else "error",
        "scope": cfg.target.scope,
        "memory": {"bus_bits": sm.bus_bits, "dram_bytes_per_cycle": dram.dram_bytes_per_cycle,
                   "dram_latency_cycles": dram.dram_latency_cycles,
                   "max_outstanding": sm.max_outstanding},
        "layers": rows, "network": network,
        "outputs": sum(r["outputs"] for r in rows), "comparisons": sum(r["outputs"] for r in rows),
        "mismatches": sum(r["mismatches"] for r in rows), "match": all(r["mismatches"] == 0 for r in rows),
    }
