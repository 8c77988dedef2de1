"""``map`` stage: map every array layer onto the generated array -> ``mapping.json``.

Each layer is lowered to the arch's kernel family, checked against the array's
interconnections (its reuse must allow every link the array has), then searched;
identical lowered layers are mapped once. Layers that cannot run are listed with
the reason.
"""
from __future__ import annotations

from pathlib import Path

from lego_build.analysis.lowering import lower, reference_kernel
from lego_build.analysis.stage import load_layers
from lego_build.flow.atomic import write_json
from lego_build.flow.schema import LegoConfig
from lego_build.flow.stages import StageError
from lego_build.frontend.adg_build import build_adg
from lego_build.frontend.links import candidate_links
from lego_build.ir.adg import ADG
from lego_build.ir.dataflow import Dataflow
from lego_build.ir.workload import Kernel

from .cost import NetShape, evaluate
from .search import OrderSearch, pre_check


def link_conflict(kernel: Kernel, adg: ADG, dataflow: Dataflow, arch) -> str:
    """Why ``kernel`` cannot use the array's links under ``dataflow`` ('' if it can).

    Every direct link the dataflow uses must be a candidate of eq. 4.1 for this
    layer too; e.g. a stride-2 conv breaks the diagonal input reuse of a KH-OH array.
    Delay links never conflict: their destinations read a fallback bank whenever the
    FIFO's word is not the one the layer needs (:func:`lego_build.sim.layout.fifo_steps`).
    """
    for net in adg.nets:
        used = [lk for lk in net.links if dataflow.name in lk.dataflows and lk.kind == "direct"]
        if not used:
            continue
        own = {(lk.src, lk.dst, lk.kind) for lk in
               candidate_links(kernel, dataflow, net.tensor, arch.d_s, arch.d_t, with_delay=False)[0]}
        for lk in used:
            if (lk.src, lk.dst, lk.kind) not in own:
                ds = tuple(b - a for a, b in zip(lk.src, lk.dst))
                return f"tensor {net.tensor} cannot use the array's {lk.kind} link Δs={ds} under dataflow {dataflow.name}"
    return ""


def pipeline_latency(adg: ADG) -> int:
    """Cycles from a time step to its last write in the generated array.

    The array's DAG goes through the structural passes of the back end (those
    before delay matching) and is scheduled ASAP; the simulate stage
    reports the exact figure of the optimizer actually used. For arrays the back end
    cannot generate the estimate is the control skew plus the read, multiply and
    accumulate stages.
    """
    from lego_build.backend.codegen import LAT_ACC, LAT_MUL, LAT_READ, build_dag
    from lego_build.backend.passes import ORDER, pipeline
    from lego_build.backend.passes.delay_matching import greedy_schedule

    try:
        dag = build_dag(adg)
    except StageError:
        skew = sum(abs(c) * (n - 1) for c, n in zip(adg.control_flow, adg.shape))
        return skew + LAT_READ + LAT_MUL + LAT_ACC
    for p in pipeline(ORDER[:ORDER.index("delay_matching")]):  # the structural passes
        dag = p.run(dag, None)
    return dag.with_delays(greedy_schedule(dag)).latency


def map_layer(kernel: Kernel, adg: ADG, dataflow: Dataflow, arch, mapper, latency: int | None = None) -> dict:
    """Best loop order of ``kernel`` under ``dataflow`` (respecting a fixed temporal order)."""
    def uses(items, dfs):
        return sum(1 for _, d in zip(items, dfs) if dataflow.name in d)

    nets = tuple(NetShape(n.tensor, uses(n.ports, n.port_dataflows),
                          sum(1 for lk in n.links if dataflow.name in lk.dataflows)) for n in adg.nets)
    latency = pipeline_latency(adg) if latency is None else latency
    search = OrderSearch(kernel, dataflow.virtual, mapper.objective, dataflow.loop_order)
    while (mapping := search.next()) is not None:
        status = pre_check(kernel, mapping)
        search.report(status, evaluate(kernel, mapping, nets, arch, latency) if status.ok else None)
    if search.best is None:
        reasons = sorted({entry["reason"] for entry in search.log})
        return {"status": "unmappable", "reason": reasons[-1] if reasons else "empty mapspace"}
    mapping, cost = search.best
    return {
        "status": "mapped",
        "dataflow": dataflow.name,
        "dims": {d.name: d.bound for d in kernel.dims},
        "macs": kernel.macs,
        "mapping": mapping.to_json(),
        "steps": mapping.steps,
        "energy_pj": round(cost.energy_pj, 6),
        "energy_breakdown_pj": {k: round(v, 6) for k, v in cost.breakdown_pj},
        "compute_cycles": cost.compute_cycles,
        "dram_cycles": cost.dram_cycles,
        "cycles": cost.cycles,
        "utilization": round(cost.utilization, 6),
        "candidates": {"valid": sum(e["status"] == "valid" for e in search.log),
                       "rejected": sum(e["status"] == "rejected" for e in search.log)},
        "rejections": sorted({e["reason"] for e in search.log if e["status"] == "rejected"}),
    }


def best_dataflow(kernel: Kernel, adg: ADG, arch, mapper, latency: int) -> dict:
    """Map under every dataflow the layer can use; keep the best by the objective (issue: per-layer choice)."""
    results, reasons = [], []
    for df in adg.dataflows:
        conflict = link_conflict(kernel, adg, df, arch)
        if conflict:
            reasons.append(conflict)
            continue
        result = map_layer(kernel, adg, df, arch, mapper, latency)
        (results if result["status"] == "mapped" else reasons).append(
            result if result["status"] == "mapped" else result["reason"])
    if not results:
        return {"status": "unmappable", "reason": "; ".join(reasons)}
    key = {"energy": "energy_pj", "latency": "cycles", "edp": None}[mapper.objective]
    return min(results, key=lambda r: r["energy_pj"] * r["cycles"] if key is None else r[key])


def map_workload(layers, arch, mapper) -> dict:
    ref = reference_kernel([k for _, k in layers], arch.family)
    if ref is None:
        raise StageError(f"no layer of this workload runs on arch.family={arch.family}")
    adg = build_adg(ref, arch)
    latency = pipeline_latency(adg)
    cache: dict[Kernel, dict] = {}
    entries = []
    for entry, kernel in layers:
        if kernel is None:
            continue
        row = {"name": entry["name"], "op": entry["op"], "count": entry["count"]}
        lowered = lower(kernel, arch.family)
        if lowered is None:
            row.update(status="unmappable", reason=f"no lowering of {kernel.name} to arch.family={arch.family}")
        else:
            if lowered not in cache:
                cache[lowered] = best_dataflow(lowered, adg, arch, mapper, latency)
            row.update(cache[lowered])
        entries.append(row)
    mapped = [e for e in entries if e["status"] == "mapped"]
    totals = {
        "layers_mapped": sum(e["count"] for e in mapped),
        "layers_unmappable": sum(e["count"] for e in entries if e["status"] != "mapped"),
        "distinct_mapped": len(cache),
        "macs": sum(e["macs"] * e["count"] for e in mapped),
        "energy_pj": round(sum(e["energy_pj"] * e["count"] for e in mapped), 6),
        "cycles": sum(e["cycles"] * e["count"] for e in mapped),
    }
    return {"layers": entries, "totals": totals}


def run(cfg: LegoConfig, design_dir: Path) -> None:
    result = map_workload(load_layers(design_dir), cfg.arch, cfg.mapper)
    write_json(design_dir / "mapping.json", {
        "mapper": cfg.mapper.name, "objective": cfg.mapper.objective, "family": cfg.arch.family, **result,
    })
    t = result["totals"]
    print(f"map: {t['layers_mapped']} layers mapped ({t['distinct_mapped']} distinct), "
          f"{t['layers_unmappable']} unmappable; {t['cycles']:,} cycles, {t['energy_pj'] / 1e6:.3f} uJ")
