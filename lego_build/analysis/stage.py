"""``analyze`` stage: workload IR -> ``analysis.json`` (seed 004 §3.1)."""
from __future__ import annotations

from pathlib import Path

from lego_build.flow.atomic import write_json
from lego_build.flow.schema import LegoConfig
from lego_build.ir.workload import Kernel

from .kernels import kernel_from_config
from .reuse import reuse_table


def kernel_summary(kernel: Kernel) -> dict:
    return {
        "kernel": kernel.name,
        "dims": {d.name: d.bound for d in kernel.dims},
        "macs": kernel.macs,
        "reduction_dims": [kernel.dims[d].name for d in kernel.reduction_dims],
        "tensors": {
            t.name: {
                "role": t.role,
                "shape": list(t.shape),
                "bits": t.bits,
                "bytes": t.size * ((t.bits + 7) // 8),
                "map": {"M": [list(r) for r in t.matrix], "b": list(t.bias)},
            }
            for t in kernel.tensors
        },
        "reuse": reuse_table(kernel),
        "ppu_ops": {},
    }


def run(cfg: LegoConfig, design_dir: Path) -> None:
    kernel = kernel_from_config(cfg.workload)
    layer = {"name": cfg.workload.name, **kernel_summary(kernel)}
    write_json(design_dir / "analysis.json", {"workload": cfg.workload.name, "layers": [layer]})
    print(f"analyze: {cfg.workload.name}: 1 layer, {kernel.macs} MACs")
