"""``map`` stage: map every array layer onto the generated array -> ``mapping.json``.

Each layer is lowered to the arch's kernel family, checked against the array's
interconnections (its reuse must allow every link the array has), then searched;
identical lowered layers are mapped once. Layers that cannot run are listed with
the reason.
"""
from __future__ import annotations

from dataclasses import replace
from math import prod
from pathlib import Path

from lego_build.analysis.lowering import lower
from lego_build.analysis.stage import layers_of
from lego_build.backend.interface import host_map, out_periods, soc_map
from lego_build.config.schema import LegoConfig
from lego_build.errors import InputError
from lego_build.frontend.links import first_indirect
from lego_build.frontend.packing import shares_conflict
from lego_build.fulang.kinds import FUS
from lego_build.ir.adg import ADG
from lego_build.ir.artifacts import MappingDoc
from lego_build.ir.dataflow import Dataflow
from lego_build.ir.mapping import Mapping, score
from lego_build.ir.memory import Hierarchy
from lego_build.ir.workload import Kernel
from lego_build.mapping.bounds import lower_bound
from lego_build.mapping.controller import controller_mapping
from lego_build.mapping.gemmini import GemminiTiling
from lego_build.mapping.hierarchy import array_hierarchy, from_conf
from lego_build.mapping.latency import MemView
from lego_build.mapping.mapspace import Mapspace, Rules, per_dim_spatial
from lego_build.mapping.model import Model, role
from lego_build.mapping.ppu import ppu_costs, ppu_totals
from lego_build.mapping.searches import RTML, SEARCHES, SearchKind
from lego_build.runtime import gcpause, stop
from lego_build.runtime.progress import Progress


def link_conflict(kernel: Kernel, adg: ADG, dataflow: Dataflow, arch) -> str:
    """Why ``kernel`` cannot use the array's links under ``dataflow`` ('' if it can).

    Every direct link the dataflow uses must be a candidate of eq. 4.1 for this
    layer too; e.g. a stride-2 conv breaks the diagonal input reuse of a KH-OH array.
    Delay links never conflict: their destinations read a fallback bank whenever the
    FIFO's word is not the one the layer needs (:func:`lego_build.sim.layout.fifo_steps`).
    Nor may the layer read apart two lanes that share a packed DRAM word under the dataflow
    (:func:`lego_build.frontend.packing.shares_conflict`).
    """
    index = adg.dataflows.index(dataflow)
    for net in adg.nets:
        if net.packs and kernel.tensor(net.tensor).role == "in":
            reason = shares_conflict(kernel, net.tensor, dataflow, net.ports, net.packs[index])
            if reason:
                return reason
        used = [lk for lk in net.links if dataflow.name in lk.dataflows and lk.kind == "direct"]
        bad = first_indirect(kernel.tensor(net.tensor).matrix, dataflow, dataflow.reach(arch.d_s),
                             tuple((lk.src, lk.dst) for lk in used))
        if bad >= 0:
            ds = tuple(b - a for a, b in zip(used[bad].src, used[bad].dst))
            return f"tensor {net.tensor} cannot use the array's direct link Δs={ds} under dataflow {dataflow.name}"
    return ""


def _hierarchy(kernel: Kernel, adg: ADG, dataflow: Dataflow, arch) -> Hierarchy:
    """The arch's declared levels, or the generated array's (ports of each tensor under ``dataflow``)."""
    if arch.memory:
        return from_conf(arch)
    roles = {t.name: role(kernel, t) for t in kernel.tensors}
    ports: dict[str, int] = {}
    for net in adg.nets:
        if net.tensor in roles:
            used = (sum(1 for dfs in net.port_dataflows if dataflow.name in dfs) if net.port_dataflows
                    else len(net.ports))
            ports[roles[net.tensor]] = ports.get(roles[net.tensor], 0) + used
    bits = {roles[t.name]: t.bits for t in kernel.tensors}
    words = {roles[t.name]: adg.capacity(t.name, dataflow.name) for t in kernel.tensors}  # folded banks included
    return array_hierarchy(arch, ports, bits, words)


def _widths(kernel: Kernel, arch) -> tuple[Kernel, Kernel]:
    """``kernel`` with its inputs at the FU's operand widths (bank words), and as costed: operands
    at the FU's bits per element in memory, partial sums at ``arch.acc_bits``."""
    fu = FUS.get(arch.fu)
    operand = {t.name: i for i, t in enumerate(kernel.inputs)}
    banked = replace(kernel, tensors=tuple(
        replace(t, bits=fu.width(operand[t.name], t.bits)) if t.name in operand else t for t in kernel.tensors))
    costed = replace(kernel, tensors=tuple(
        replace(t, bits=fu.stored(operand[t.name], t.bits)) if t.name in operand else replace(t, bits=arch.acc_bits)
        for t in kernel.tensors))
    return banked, costed


def layer_space(kernel: Kernel, adg: ADG, dataflow: Dataflow, arch, mapper, latency: int,
                models: dict | None = None, period: int = 1) -> Mapspace:
    """The mapspace of ``kernel`` on the generated array under ``dataflow``.

    The array's spatial unrolling is the dataflow's; the controller level (the
    innermost shared memory) keeps reduction loops innermost and the dataflow's fixed
    loop order if it has one; the levels above it are tiles the sequencer steps through,
    each a controller run costing a start cycle and the pipeline ``latency``, with the
    reduction loops innermost there too: an output tile accumulates in its bank half
    until its last reduction tile (``lego_soc``), so partial sums never go to DRAM. An FU
    with operands of its own widths (``arch.fu``, :mod:`lego_build.fulang.kinds`) has its
    inputs held in banks of those widths and moved and costed at its bits per element in
    memory (seed 004 §6.3: a 4-bit weight moves half the bytes of an 8-bit one and a level
    sized in bytes holds twice as many; a group format's scales add their share).
    ``models``: the cost models of the layer's other dataflows, by what they cost; one on the same
    levels (``arch.memory``) is shared, with its memos of tilings, fits and footprints. ``period``:
    the array's shortest accumulation under ``dataflow`` (shared output lanes hold a shorter one,
    :meth:`lego_build.ir.host.HostMap.out_period`), which the model's steps count.
    """
    banked, costed = _widths(kernel, arch)
    h = _hierarchy(banked, adg, dataflow, arch)
    f = h.fanout
    reduction = frozenset(kernel.dims[d].name for d in kernel.reduction_dims)
    rules = Rules(
        spatial=tuple(tuple(axis) for axis in dataflow.axes) + ((),) * (2 - len(dataflow.axes)),
        order=((f, dataflow.loop_order),) if dataflow.loop_order else (),
        innermost=tuple((lv, reduction) for lv in range(f, len(h.levels))) if not arch.memory else (),
        unit=tuple(range(f)) if not arch.memory else (),
    )
    # per tile: the start cycle, the pipeline latency and the output banks' read-modify-write cycle
    models = {} if models is None else models
    key = (costed, h, arch.operand_bits, 2 + max(1, latency), period)
    if key not in models:
        models[key] = Model(*key)
    return Mapspace(models[key], mapper.mapspace, rules)


def unroll_space(kernel: Kernel, arch, mapper, latency: int) -> Mapspace:
    """``mapper.unroll=search`` (issue 22): the layer's unrolling is part of the search, over the
    dims ``arch.unroll.axes`` allows on each axis (those in ``arch.unroll.required`` always
    unrolled), costed on ``arch.memory``'s model-only levels in ``mapper.mapspace``: PFM's
    spatial factors divide the dims, Ruby-S's may leave a partial last tile (seed 002 §V's
    Eyeriss-like study: KH, IC on the rows, OH, OC on the columns). The twelve unrollings that
    fill the array best are searched (each space's perfect ones among them)."""
    _, costed = _widths(kernel, arch)
    axes = tuple(tuple(axis) for axis in arch.unroll.axes) + ((),) * (2 - len(arch.unroll.axes))
    rules = Rules(axes=axes, required=tuple(arch.unroll.required), max_spatial=12)
    return Mapspace(Model(costed, from_conf(arch), arch.operand_bits, tile_overhead=2 + max(1, latency)),
                    mapper.mapspace, rules)


def unrolled(spatial, kernel: Kernel, adg: ADG, arch) -> Dataflow:
    """The array's dataflow that runs the unrolling ``spatial``: on each axis it unrolls the same
    dims as far (a dim smaller than the dataflow's extent fills part of it: ``min(extent, D)``;
    the order within an axis changes the links, not the cost) and ``kernel`` can use its links;
    else a model-only dataflow, named ''."""
    bound = {d.name: d.bound for d in kernel.dims}
    used = {d: f for d, f in per_dim_spatial(spatial).items() if f != (1, 1)}
    for df in adg.dataflows:
        runs = {d: (min(r, bound[d]), min(c, bound[d])) for d, (r, c) in per_dim_spatial(df.axes).items()}
        if {d: f for d, f in runs.items() if f != (1, 1)} == used and not link_conflict(kernel, adg, df, arch):
            return df
    return Dataflow("", arch.family, tuple(d.name for d in kernel.dims),
                    tuple(tuple((d, f) for d, f in axis if f > 1) for axis in spatial))


#: candidates the memory system's latency model ranks per layer and dataflow: this many of the
#: lowest energy and this many of the fewest cycles by the mapper's own model, and its best
RANKED = 8


def _controller(space: Mapspace, kernel: Kernel, dataflow: Dataflow, schedule, ev):
    """The controller's loop nest (what the hardware runs) and its tile, for a schedule."""
    f = space.h.fanout
    above = tuple(d for level in reversed(schedule.orders[f + 1:]) for d in level)  # outermost level first
    mapping = controller_mapping(kernel, dataflow.virtual, schedule.orders[f], above)
    inside = range(space.m.t_pos[f], len(space.m.pos))  # the controller level's block: one tile
    tile = {d: min(space.bound[d], prod(t.factors[j][0] for j in inside)) for d, t in ev.tilings}
    return mapping, tile


def map_layer(kernel: Kernel, adg: ADG, dataflow: Dataflow | None, arch, mapper, latency: int,
              view: MemView | None = None, models: dict | None = None, periods: dict | None = None) -> dict:
    """Best schedule of ``kernel`` under ``dataflow`` by ``mapper.search`` (ask/tell, reasons kept);
    ``latency``: the generated array's pipeline latency (the optimized DAG's). ``dataflow=None``:
    the unrolling is searched too (:func:`unroll_space`); the result names the array's dataflow
    that runs it (:func:`unrolled`), or '' (model only), and its ``unrolling``.

    With ``view`` (the generated memory system), the search's best and kept candidates are
    timed by the whole-layer latency model the RTL runs check (tiles, DRAM bursts of the
    packed rows, double buffering: :mod:`lego_build.mapping.latency`), which the mapper's
    per-tile roofline does not see; for a latency or EDP objective that figure chooses among
    them (seed 004 §6.2: the scheduler guided by the performance simulator) and is reported as
    ``cycles_model`` (the energy objective times only the mapping :func:`best_dataflow` keeps).
    ``models``: shared by the layer's dataflows (:func:`layer_space`); ``periods``: per dataflow the
    array's shortest accumulation (shared output lanes, :mod:`lego_build.ir.outshare`: a shorter one
    holds its first step, which both models count)."""
    if dataflow is None:  # mapper.unroll=search
        space = unroll_space(kernel, arch, mapper, latency)
    else:
        period = (periods or {}).get(dataflow.name, 1)
        space = layer_space(kernel, adg, dataflow, arch, mapper, latency, models, period)
        if reason := space.remainder_reason(dataflow.name):
            return {"status": "unmappable", "reason": reason}
    bound = lower_bound(space.m)
    if arch.tiling == "gemmini":
        search = GemminiTiling(space, mapper.objective, dim=arch.rows)
    else:
        search = SEARCHES.get(mapper.search).make(space, mapper)
        if view is not None and mapper.objective != "energy":
            search.keep = RANKED  # the latency model decides among these
        search.evaluations = mapper.budget
        if mapper.gap is not None:
            search.target = score(mapper.objective, bound.energy_pj, bound.cycles) / (1 - mapper.gap)
    best = search.run()
    rejected = [e["reason"] for e in search.log if e["status"] == "rejected"]
    if best is None:
        return {"status": "unmappable", "reason": unmappable_reason(search)}
    schedule, ev = best
    searched = dataflow is None
    if searched:
        dataflow = unrolled(schedule.spatial, kernel, adg, arch)
    timed = {}
    if view is None or mapper.objective == "energy":
        mapping, tile = _controller(space, kernel, dataflow, schedule, ev)
    else:
        # a layer takes at least its compute steps: a candidate whose steps alone cannot beat the
        # best timed so far is not timed (the model walks every tile of the layer)
        cands = sorted(search.candidates() if search.keep else [best],
                       key=lambda c: (score(mapper.objective, c[1].energy_pj, c[1].compute_cycles), c[1].energy_pj))
        ranked = []
        for k, (s, e) in enumerate(cands):
            if ranked and score(mapper.objective, e.energy_pj, e.compute_cycles) >= ranked[0][0]:
                break
            m, t = _controller(space, kernel, dataflow, s, e)
            cycles = view.cycles(kernel, m, dataflow.name, t)
            ranked.append((score(mapper.objective, e.energy_pj, cycles), e.energy_pj, k, s, e, m, t, cycles))
            ranked.sort(key=lambda x: x[:3])
        _, _, _, schedule, ev, mapping, tile, cycles = ranked[0]
        timed = {"cycles_model": cycles, "timed_by_model": len(ranked)}
    return {
        "status": "mapped",
        "dataflow": dataflow.name,
        **({"unrolling": " | ".join(",".join(f"{d}:{f}" for d, f in axis if f > 1) for axis in schedule.spatial)}
           if searched else {}),
        "dims": {d.name: d.bound for d in kernel.dims},
        "macs": kernel.macs,
        "mapping": mapping.to_json(),
        "schedule": schedule.to_json(),
        "tile": tile,
        "tilings": {d: [list(pr) for pr in t.factors] for d, t in ev.tilings},
        "steps": mapping.steps,
        "energy_pj": round(ev.energy_pj, 6),
        "energy_breakdown_pj": {k: round(v, 6) for k, v in sorted(ev.by_level().items())},
        "energy_by_tensor_pj": {k: round(v, 6) for k, v in sorted(ev.by_role().items())},
        "energy_level_tensor_pj": {f"{lv}/{r}": round(pj, 6) for lv, r, pj in ev.breakdown},
        "accesses": {f"{lv}/{r}": {"reads": round(rd, 3), "writes": round(wr, 3)} for lv, r, rd, wr in ev.accesses},
        "compute_cycles": ev.compute_cycles,
        "level_cycles": {k: round(v, 3) for k, v in ev.level_cycles},
        "cycles": ev.cycles,
        "utilization": round(ev.utilization, 6),
        "candidates": {"valid": sum(e["status"] == "valid" for e in search.log), "rejected": len(rejected)},
        "rejections": sorted(set(rejected))[:20],
        **({"tiling": search.rule} if arch.tiling == "gemmini" else {}),
        **({"stopped": search.stopped} if search.stopped else {}),
        "bound": {"energy_pj": round(bound.energy_pj, 6), "cycles": bound.cycles},
        "gap": round(bound.gap(mapper.objective, ev.energy_pj, timed.get("cycles_model", ev.cycles)), 6),
        **timed,
    }


def unmappable_reason(search) -> str:
    """Why no candidate was valid, naming the level and the smallest size a tile needed."""
    if search.smallest:
        level, (need, have) = min(search.smallest.items(), key=lambda kv: kv[1])
        return (f"no tile fits memory level {level}: the smallest tile needs {need} B, the level has {have} B; "
                f"make it at least {need} B (arch.onchip_kb, arch.buffer_depth or arch.memory)")
    reasons = sorted({e["reason"] for e in search.log if e["status"] == "rejected"})
    return reasons[-1] if reasons else "empty mapspace"


def best_dataflow(kernel: Kernel, adg: ADG, arch, mapper, latency: int, view: MemView | None = None,
                  periods: dict | None = None) -> dict:
    """Map under every dataflow the layer can use; keep the best by the objective (issue: per-layer
    choice), timed by the memory system's latency model where there is one: every kept mapping
    has its ``cycles_model`` (what the reports give as the hardware's time where the layer did
    not run in RTL), whatever the objective."""
    results, reasons, models = [], [], {}
    for df in ([None] if mapper.unroll == "search" else adg.dataflows):  # None: the unrolling is searched
        conflict = link_conflict(kernel, adg, df, arch) if df is not None else ""
        if conflict:
            reasons.append(conflict)
            continue
        result = map_layer(kernel, adg, df, arch, mapper, latency, view, models, periods)
        (results if result["status"] == "mapped" else reasons).append(
            result if result["status"] == "mapped" else result["reason"])
    if not results:
        # the arch or the mapper settings cannot serve this layer at all: the build stops (exit 2)
        fatal = [r for r in reasons if r.startswith("no tile fits") or "use mapper.search=" in r]
        return {"status": "unmappable", "reason": "; ".join(reasons), **({"fatal": fatal[0]} if fatal else {})}
    best = min(results, key=lambda r: score(mapper.objective, r["energy_pj"], r.get("cycles_model", r["cycles"])))
    if view is not None and "cycles_model" not in best and best["dataflow"]:
        # what the hardware takes, for the reports (the energy objective did not rank by it)
        cycles = view.cycles(kernel, Mapping.from_json(best["mapping"]), best["dataflow"], best["tile"])
        best = {**best, "cycles_model": cycles, "timed_by_model": 1}
    return best


def _weighted(rows: list[dict], key: str) -> dict[str, float]:
    """A per-layer breakdown summed over the network (layers weighted by their count)."""
    out: dict[str, float] = {}
    for row in rows:
        for name, pj in row[key].items():
            out[name] = out.get(name, 0.0) + pj * row["count"]
    return {name: round(pj, 6) for name, pj in sorted(out.items())}


def map_workload(layers, adg: ADG, latency: int, arch, mapper, view: MemView | None = None, jobs: int = 1,
                 periods: dict | None = None) -> dict:
    """Every array layer on the generated array ``adg`` (from ``adg.json``) whose pipeline takes
    ``latency`` cycles (the optimized DAG of ``dag.json``), with its memory system ``view``;
    ``jobs``: the processes a search's network step may use (``run.map_jobs``); ``periods``: per
    dataflow, the array's shortest accumulation (:func:`map_layer`)."""
    cache: dict[Kernel, dict] = {}
    entries, lowered_of = [], {}
    todo = [(entry, kernel) for entry, kernel in layers if kernel is not None]
    bar = Progress("map", len(todo))
    with gcpause.paused():  # the searches make no reference cycles (lego_build.runtime.gcpause)
        for entry, kernel in todo:
            row = {"name": entry["name"], "op": entry["op"], "count": entry["count"]}
            lowered = lower(kernel, arch.family)
            if lowered is None:
                row.update(status="unmappable", reason=f"no lowering of {kernel.name} to arch.family={arch.family}")
            else:
                if lowered not in cache:
                    cache[lowered] = best_dataflow(lowered, adg, arch, mapper, latency, view, periods)
                row.update(cache[lowered])
                lowered_of[entry["name"]] = lowered
                if "fatal" in row:
                    bar.close()
                    raise InputError(f"layer {entry['name']}: {row['fatal']}")
            entries.append(row)
            bar.step(entry["name"])
    bar.close()
    mapped = [e for e in entries if e["status"] == "mapped"]
    totals = {
        "layers_mapped": sum(e["count"] for e in mapped),
        "layers_unmappable": sum(e["count"] for e in entries if e["status"] != "mapped"),
        "distinct_mapped": len(cache),
        "macs": sum(e["macs"] * e["count"] for e in mapped),
        "energy_pj": round(sum(e["energy_pj"] * e["count"] for e in mapped), 6),
        "cycles": sum(e["cycles"] * e["count"] for e in mapped),
        **({"cycles_model": sum(e["cycles_model"] * e["count"] for e in mapped)}
           if mapped and all("cycles_model" in e for e in mapped) else {}),
        "energy_by_level_pj": _weighted(mapped, "energy_breakdown_pj"),
        "energy_by_tensor_pj": _weighted(mapped, "energy_by_tensor_pj"),
    }
    if mapper.unroll == "search":  # layers whose searched unrolling no dataflow of the array runs
        totals["model_only"] = sum(e["count"] for e in mapped if not e["dataflow"])
    if mapped and all("bound" in e for e in mapped):  # the layers' lower bounds, and the network's gap
        bound = {k: sum(e["bound"][k] * e["count"] for e in mapped) for k in ("energy_pj", "cycles")}
        found = score(mapper.objective, totals["energy_pj"], totals.get("cycles_model", totals["cycles"]))
        totals["bound"] = {"energy_pj": round(bound["energy_pj"], 6), "cycles": bound["cycles"]}
        totals["gap"] = round(max(0.0, 1 - score(mapper.objective, bound["energy_pj"], bound["cycles"]) / found), 6)
    rows = ppu_costs(layers, arch)
    totals["ppu"] = {**ppu_totals(rows), "per_layer": rows}
    # end to end (seed 004 §6.2): the array layers (by the memory system's latency model where
    # there is one), then the PPU passes that do not overlap them
    totals["end_to_end_cycles"] = totals.get("cycles_model", totals["cycles"]) + totals["ppu"]["cycles"]
    totals["end_to_end_energy_pj"] = round(totals["energy_pj"] + totals["ppu"]["energy_pj"], 6)
    if (network := SEARCHES.get(mapper.search).network) is not None:
        totals[mapper.search] = network(entries, lowered_of, arch, mapper, jobs)
    return {"layers": entries, "totals": totals}


def slice_layers(entries: list[dict], lowered_of: dict[str, Kernel], arch, mapper, jobs: int = 1) -> dict:
    """``mapper.search=tso``: seed 003's slicing of every mapped layer over ``arch.multicore``.

    Each row gets the chosen partition, schedule, tiles, bursts and the time split into
    MAC and DRAM; the totals sum the layers (weighted by their count)."""
    from lego_build.mapping.tso import NPU, PARTITIONS, SCHEDULES, Conv, explore_all

    npu = NPU.from_conf(arch.multicore)
    rows = [e for e in entries if e["name"] in lowered_of]
    convs = [Conv.from_kernel(e["name"], lowered_of[e["name"]]) for e in rows]
    partitions = PARTITIONS if mapper.partition == "auto" else (mapper.partition,)
    schedules = SCHEDULES if mapper.schedule == "auto" else (mapper.schedule,)
    bar = Progress("tso", len({(c.N, c.M, c.H, c.L, c.KH, c.KW, c.S, c.R, c.C, c.groups) for c in convs}))
    results = explore_all(convs, npu, mapper.burst, partitions, schedules, jobs, progress=bar.step)
    bar.close()
    total = {"layers": 0, "time_us": 0.0, "mac_us": 0.0, "dram_us": 0.0, "bursts": 0}
    for row, res in zip(rows, results):
        if res.best is None:
            reason = max(res.rejected, key=res.rejected.get) if res.rejected else "no tile"
            raise InputError(f"layer {row['name']}: no slicing fits the scratchpads of arch.multicore "
                             f"({reason}); enlarge arch.multicore.spad_*_bytes")
        row["tso"] = {**res.best.to_json(npu.overlap), "candidates": {"valid": res.valid, "rejected": res.rejected}}
        total["layers"] += row["count"]
        for key in ("time_us", "mac_us", "dram_us", "bursts"):
            total[key] += row["tso"][key] * row["count"]
    for key in ("time_us", "mac_us", "dram_us"):
        total[key] = round(total[key], 6)
    total.update(burst=mapper.burst, partition=mapper.partition, schedule=mapper.schedule)
    return total


#: seed 003's multicore slicing: each core maps a layer slice by RTML, then :func:`slice_layers`
TSO = SearchKind("tso", RTML.make, slice_layers)


def preset_notes(mapper, arch) -> list[str]:
    """One line for each way the mapper settings cannot act on ``arch`` as their names suggest
    (the map stage prints them and ``mapping.json`` keeps them): the search then runs, but its
    result equals another preset's by construction, not by chance."""
    if arch.tiling == "gemmini":
        return [f"mapper={mapper.name}: arch.tiling=gemmini picks every tile by Gemmini's rule; mapper.mapspace and "
                "mapper.search are not used"]
    notes = []
    if mapper.unroll == "search":
        notes.append(f"mapper.unroll=search: each layer's unrolling is searched over arch.unroll.axes on "
                     f"arch={arch.name}'s model-only levels; a layer whose unrolling none of the array's dataflows "
                     "runs is mapped for the model only (dataflow '') and not simulated")
    if (mapper.mapspace, mapper.search) == ("pfm", "rtml") and mapper.name != "pfm":
        notes.append(f"mapper={mapper.name}: mapspace pfm with search rtml is what mapper=pfm runs")
    return notes


def run(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    """Reads the workload (``analysis.json``) and the hardware the earlier stages generated:
    the array (``adg.json``) and its optimized primitive graph (``dag.json``, for the
    pipeline latency each controller run pays)."""
    dag, adg = inputs["dag.json"], inputs["adg.json"]
    view = None
    if not cfg.arch.memory and cfg.arch.multicore is None:  # the generated memory system (lego_soc)
        memsys = cfg.arch.memsys.ir()
        hm = host_map(dag, memsys.axi_data_bits)
        view = MemView(hm, soc_map(hm, memsys.axi_data_bits), adg, memsys)
    for note in (notes := preset_notes(cfg.mapper, cfg.arch)):
        print(f"map: {note}")
    try:
        periods = dict(zip(dag.dataflows, out_periods(dag))) if any(b.share for b in dag.buffers) else None
        result = map_workload(layers_of(inputs["analysis.json"]), adg, dag.latency, cfg.arch, cfg.mapper, view,
                              cfg.run.map_jobs, periods)
    finally:
        interrupted = stop.requested()
        stop.clear()  # a later stage's Ctrl-C abandons the build again
    if interrupted:
        cut = sum(1 for e in result["layers"] if e.get("stopped", "").startswith("interrupted"))
        print(f"map: interrupted: {cut} layer searches ended early with their best mappings (mapping.json "
              "'stopped'); the build goes on with them")
    if notes:
        result["totals"]["notes"] = notes
    doc = MappingDoc(mapper=cfg.mapper.name, objective=cfg.mapper.objective, family=cfg.arch.family, **result)
    t = result["totals"]
    model = f" ({t['cycles_model']:,} by the memory system's latency model)" if "cycles_model" in t else ""
    gap = f"; optimality gap {t['gap']:.1%} ({cfg.mapper.objective}: 1 - lower bound / found)" if "gap" in t else ""
    print(f"map: {t['layers_mapped']} layers mapped ({t['distinct_mapped']} distinct), "
          f"{t['layers_unmappable']} unmappable; {t['cycles']:,} cycles{model}, {t['energy_pj'] / 1e6:.3f} uJ{gap}")
    if "model_only" in t:
        print(f"map: {t['model_only']} of {t['layers_mapped']} layers take an unrolling none of the array's "
              "dataflows runs (mapper.unroll=search): model only, not simulated")
    if t["ppu"]["layers"]:
        p = t["ppu"]
        print(f"map: PPU {p['layers'] - p['fused']} passes ({p['fused']} fused on the output path), "
              f"{p['cycles']:,} cycles ({p['cycles'] / max(1, t['end_to_end_cycles']):.1%} of "
              f"{t['end_to_end_cycles']:,} end to end)")
    if "tso" in t:
        s = t["tso"]
        print(f"map: tso ({'burst' if s['burst'] else 'no-burst'}) on {cfg.arch.multicore.clusters}x"
              f"{cfg.arch.multicore.cores} cores: {s['time_us']:,.1f} us ({s['mac_us']:,.1f} MAC, "
              f"{s['dram_us']:,.1f} DRAM), {s['bursts']:,} bursts")
    return {"mapping.json": doc}
