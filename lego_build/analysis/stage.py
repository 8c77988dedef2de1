"""``analyze`` stage: workload IR -> ``analysis.json`` (seed 004 §3.1, seed 000 Table 1).

Every layer is described by its affine IR (dims, tensors, ``d = M i + b``) and
classified by the unit that runs it: the FU ``array`` (a MAC loop nest), a ``ppu``
(element-wise, normalisation, pooling, residual add: with its element count) or
``layout`` (reshape, concat, transpose: data movement folded into addressing).
Later stages rebuild the kernels from this file; the model is parsed once.
The file's format is ``analysis.schema.json`` (shipped with the package).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from lego_build.analysis.from_config import workload_from_config
from lego_build.analysis.reuse import reuse_table
from lego_build.config.schema import LegoConfig
from lego_build.ir.artifacts import Analysis
from lego_build.ir.serialize import from_jsonable, to_jsonable
from lego_build.ir.workload import Kernel, Layer, Workload
from lego_build.runtime.artifacts import read_artifact

SCHEMA = Path(__file__).with_name("analysis.schema.json")


def unit_of(layer: Layer) -> str:
    if layer.kernel is not None:
        return "array"
    return "ppu" if layer.elements > 0 else "layout"


def kernel_summary(kernel: Kernel) -> dict:
    return {
        "family": kernel.name,
        "dims": {d.name: d.bound for d in kernel.dims},
        "macs": kernel.macs,
        "reduction_dims": [kernel.dims[d].name for d in kernel.reduction_dims],
        "tensors": {
            t.name: {"role": t.role, "shape": list(t.shape), "bits": t.bits, "bytes": t.size * ((t.bits + 7) // 8)}
            for t in kernel.tensors
        },
        "reuse": reuse_table(kernel),
        "ir": to_jsonable(kernel),
    }


def layer_entry(layer: Layer) -> dict:
    entry = {"name": layer.name, "op": layer.op, "unit": unit_of(layer), "count": layer.count}
    if layer.kernel is not None:
        entry.update(kernel_summary(layer.kernel))
    else:
        entry["elements"] = layer.elements
    return entry


def analysis_document(workload: Workload) -> dict:
    ppu = Counter()
    for layer in workload.layers:
        if unit_of(layer) == "ppu":
            ppu[layer.op] += layer.elements * layer.count
    return {
        "workload": workload.name,
        "source": workload.source,
        "layers": [layer_entry(layer) for layer in workload.layers],
        "unmapped": [{"name": u.name, "op": u.op, "reason": u.reason} for u in workload.unmapped],
        "totals": {
            "macs": workload.macs,
            "array_layers": sum(layer.count for layer in workload.array_layers),
            "ppu_elements": dict(sorted(ppu.items())),
        },
    }


def layers_of(doc: Analysis) -> list[tuple[dict, Kernel | None]]:
    """``(entry, kernel)`` per layer of an ``analysis.json``; the kernel is rebuilt from its IR."""
    return [(e, from_jsonable(Kernel, e["ir"]) if e["unit"] == "array" else None) for e in doc.layers]


def load_layers(design_dir: Path) -> list[tuple[dict, Kernel | None]]:
    """:func:`layers_of` the ``analysis.json`` of ``design_dir``."""
    return layers_of(read_artifact(design_dir, "analysis.json"))


def run(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    workload = workload_from_config(cfg.workload)
    doc = analysis_document(workload)
    totals = doc["totals"]
    unmapped = f", {len(doc['unmapped'])} unmapped ops" if doc["unmapped"] else ""
    print(f"analyze: {workload.name}: {len(workload.layers)} layers, {totals['array_layers']} on the array, "
          f"{totals['macs']:,} MACs{unmapped}")
    for note in workload.notes:
        print(f"analyze: note: {note}")
    return {"analysis.json": Analysis(**doc)}
