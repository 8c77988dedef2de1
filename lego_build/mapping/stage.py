"""``map`` stage: pick the loop order per layer under the cost model -> ``mapping.json``."""
from __future__ import annotations

from pathlib import Path

from lego_build.analysis.kernels import kernel_from_config
from lego_build.flow.atomic import write_json
from lego_build.flow.schema import LegoConfig
from lego_build.flow.stages import StageError
from lego_build.frontend.adg_build import build_adg

from .cost import NetShape, evaluate
from .search import OrderSearch, pre_check


def map_layer(kernel, arch, mapper) -> dict:
    adg = build_adg(kernel, arch)
    nets = tuple(NetShape(n.tensor, len(n.ports), len(n.links)) for n in adg.nets)
    spatial = tuple(zip(arch.spatial, (arch.rows, arch.cols)))
    search = OrderSearch(kernel, spatial, mapper.objective)
    while (mapping := search.next()) is not None:
        status = pre_check(kernel, mapping, arch.buffer_depth)
        search.report(status, evaluate(kernel, mapping, nets, arch) if status.ok else None)
    if search.best is None:
        reasons = sorted({entry["reason"] for entry in search.log})
        raise StageError(f"no valid mapping for {kernel.name}: {reasons[-1]}")
    mapping, cost = search.best
    return {
        "mapping": mapping.to_json(),
        "steps": mapping.steps,
        "energy_pj": cost.energy_pj,
        "energy_breakdown_pj": dict(cost.breakdown_pj),
        "compute_cycles": cost.compute_cycles,
        "dram_cycles": cost.dram_cycles,
        "cycles": cost.cycles,
        "utilization": cost.utilization,
        "candidates": {"valid": sum(e["status"] == "valid" for e in search.log),
                       "rejected": sum(e["status"] == "rejected" for e in search.log)},
        "rejections": sorted({e["reason"] for e in search.log if e["status"] == "rejected"}),
    }


def run(cfg: LegoConfig, design_dir: Path) -> None:
    kernel = kernel_from_config(cfg.workload, cfg.arch.acc_bits)
    layer = {"name": cfg.workload.name, **map_layer(kernel, cfg.arch, cfg.mapper)}
    totals = {k: layer[k] for k in ("energy_pj", "cycles")}
    write_json(design_dir / "mapping.json", {
        "mapper": cfg.mapper.name, "objective": cfg.mapper.objective, "layers": [layer], "totals": totals,
    })
    order = " > ".join(f"{lp['dim']}:{lp['bound']}" for lp in layer["mapping"]["temporal"])
    print(f"map: {cfg.workload.name}: loops {order}; {layer['cycles']} cycles, "
          f"{layer['energy_pj'] / 1e3:.1f} nJ, utilization {layer['utilization']:.0%}")
