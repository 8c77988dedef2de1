"""Resource sanity before work: each stage's peak memory and time, estimated from the config.

A type-valid config can still ask for more than the machine has (a huge tile of a huge
layer, a tile of 10^8 steps on a 16x16 array). The estimates below are upper bounds
computed from the validated config and the workload IR alone, before any stage runs, so
such a build stops in a second with one line (exit 2, nothing written) instead of dying
half-way with an allocation failure. ``target.confirm=true`` runs it anyway.

* ``map``: per distinct layer and dataflow a fixed cost (``MAP_S_PER_LAYER``: link checks,
  the model's set-up), plus the searches' enumeration of the tile extents of
  :func:`lego_build.mapping.factors.useful` per dim and memory level (``MAP_S_PER_OPTION``);
  measured on ResNet-50 (eyeriss 4.2 s, nvdla 6.8 s, eyeriss_ruby with Ruby-S 2.7 s).
* ``simulate``: a tile runs at most ``target.tile_steps`` time steps on every FU, so the
  golden model sees at most ``tile_steps x FUs`` iteration points per run, in blocks
  (:data:`lego_build.ir.testdata.GOLDEN_CHUNK` points, ``GOLDEN_BYTES_PER_POINT`` each),
  and each tensor's window holds at most one element per point (int64, plus the
  expected outputs and the simulator's script). Time: the Verilator compile
  (``COMPILE_S_PER_FU``), then per run (at most ``TILE_KINDS`` tiles times
  ``len(target.data)``) the golden model (``GOLDEN_S_PER_POINT``) and the simulated
  cycles (``SIM_FU_CYCLES_PER_S`` FU-cycles per second).

Limits: ``target.max_memory_gb`` (0: the memory available now, from ``/proc/meminfo``)
and ``target.max_minutes`` (0: none).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from lego_build.errors import BudgetError
from lego_build.ir.testdata import GOLDEN_CHUNK
from lego_build.ir.workload import LAYER_KINDS

#: map-stage seconds per distinct layer and dataflow, and per offered tile extent (dim x level)
MAP_S_PER_LAYER = 0.3
MAP_S_PER_OPTION = 2e-4
#: golden-model seconds per iteration point (measured: 7 ns on a GEMM, 17 ns on a 3x3 conv)
GOLDEN_S_PER_POINT = 2e-8
#: golden-model bytes per iteration point of a block (measured: 26 MB for a block of 2**20 points)
GOLDEN_BYTES_PER_POINT = 32
#: bytes per tensor element a tile run holds (int64 window, script text, expected outputs)
TENSOR_BYTES_PER_ELEMENT = 8 * 4
#: Verilator compile seconds per FU (measured: 4x4 about 3 s, 16x16 about 25 s)
COMPILE_S_PER_FU = 0.1
#: simulated FU-cycles per second (Verilator, one thread; measured about 3e7 on a 4x4 and an 8x8)
SIM_FU_CYCLES_PER_S = 3e7
#: tile kinds a simulation runs at most (one per layer kind, and the edge tile)
TILE_KINDS = len(LAYER_KINDS) + 1


@dataclass(frozen=True)
class Estimate:
    stage: str
    memory_bytes: int
    seconds: float
    what: str  # what dominates, for the message


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable``), or 0 when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def estimates(cfg, workload) -> list[Estimate]:
    """Per stage, the estimated peak memory and time of building ``cfg`` on ``workload``."""
    from lego_build.analysis.lowering import lower
    from lego_build.mapping.factors import useful

    kernels = {}
    for layer in workload.array_layers:
        lowered = lower(layer.kernel, cfg.arch.family)
        if lowered is not None:
            kernels[tuple((d.name, d.bound) for d in lowered.dims)] = (layer.name, lowered)
    levels = max(3, len(cfg.arch.memory))
    options = {name: sum(len(useful(d.bound, cfg.mapper.mapspace != "pfm")) for d in k.dims) * levels
               for name, k in kernels.values()}
    worst = max(options, key=options.get, default="-")
    seconds = (MAP_S_PER_LAYER * len(kernels) * max(1, len(cfg.arch.dataflows))
               + MAP_S_PER_OPTION * sum(options.values()))
    out = [Estimate("map", 0, seconds,
                    f"{sum(options.values()):,} tile extents to search (most: layer {worst})")]
    if cfg.target.simulate:
        fus = cfg.arch.rows * cfg.arch.cols
        tensors = max((len(k.tensors) for _, k in kernels.values()), default=3)
        points = min(cfg.target.tile_steps * fus, max((k.macs for _, k in kernels.values()), default=0))
        runs = TILE_KINDS * len(cfg.target.data)
        memory = min(points, GOLDEN_CHUNK) * GOLDEN_BYTES_PER_POINT + points * tensors * TENSOR_BYTES_PER_ELEMENT
        seconds = COMPILE_S_PER_FU * fus + runs * (points * GOLDEN_S_PER_POINT
                                                   + min(cfg.target.tile_steps, cfg.target.max_cycles) * fus
                                                   / SIM_FU_CYCLES_PER_S)
        out.append(Estimate("simulate", memory, seconds,
                            f"tiles of up to {points:,} iteration points (target.tile_steps={cfg.target.tile_steps} "
                            f"x {fus} FUs), {runs} tile runs"))
    return out


def check(cfg, workload) -> list[Estimate]:
    """Raise :class:`BudgetError` if a stage's estimate exceeds the limits (unless ``target.confirm``)."""
    found = estimates(cfg, workload)
    if cfg.target.confirm:
        return found
    limit_bytes = int(cfg.target.max_memory_gb * 2**30) if cfg.target.max_memory_gb else available_memory()
    for e in found:
        if limit_bytes and e.memory_bytes > limit_bytes:
            raise BudgetError(
                f"the {e.stage} stage would need about {e.memory_bytes / 2**30:,.1f} GiB ({e.what}) but "
                f"{'target.max_memory_gb allows' if cfg.target.max_memory_gb else 'this machine has'} "
                f"{limit_bytes / 2**30:,.1f} GiB; lower target.tile_steps or the layer sizes, "
                "or set target.confirm=true to run it anyway")
        if cfg.target.max_minutes and e.seconds > 60 * cfg.target.max_minutes:
            raise BudgetError(
                f"the {e.stage} stage would take about {e.seconds / 60:,.0f} minutes ({e.what}), over "
                f"target.max_minutes={cfg.target.max_minutes:g}; lower target.tile_steps or the layer sizes, "
                "raise target.max_minutes, or set target.confirm=true to run it anyway")
    return found
