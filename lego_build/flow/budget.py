"""Resource sanity before work: each stage's peak memory and time, estimated from the config.

A type-valid config can still ask for more than the machine has (a huge tile of a huge
layer, a tile of 10^8 steps on a 16x16 array). The estimates below are upper bounds
computed from the validated config and the workload IR alone, before any stage runs, so
such a build stops in a second with one line (exit 2, nothing written) instead of dying
half-way with an allocation failure. ``run.confirm=true`` runs it anyway.

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
* ``simulate`` with ``target.scope=layers`` or ``network`` (whole layers through the memory
  system): per layer a lower bound on its cycles, the larger of its MACs over the FUs and its
  compulsory DRAM bytes (every element of each tensor indexed by plain loop dims moved once,
  at ``arch.operand_bits``, less two bus beats) over ``arch.memsys.dram_bytes_per_cycle``, plus one
  ``arch.memsys.dram_latency_cycles``. A layer whose bound exceeds ``target.max_cycles`` would stop
  there, so the build stops now, naming the bandwidth when the DRAM term decides. ``layers``
  runs one layer per kind: each kind's smallest bound counts; ``network`` runs every array
  layer, ``run.jobs`` at a time. Time: the compile, then the bounds' FU-cycles.

Only a target that simulates (:attr:`lego_build.targets.base.Target.simulates`) has a simulate
estimate. The array has the FUs of the ADG the graph stage will build (:func:`array_fus`).

Limits: ``run.max_memory_gb`` (0: the memory available now, from ``/proc/meminfo``),
``run.max_minutes`` (0: none) and, for whole layers, ``target.max_cycles``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from math import ceil

from lego_build.errors import BudgetError
from lego_build.flow.validate import simulates
from lego_build.ir.testdata import GOLDEN_CHUNK
from lego_build.ir.workload import LAYER_KINDS, layer_kind

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
    advice: str = "lower target.tile_steps or the layer sizes"  # what to change, for the message


@dataclass(frozen=True)
class LayerBound:
    """A lower bound on the cycles of one whole layer through the memory system."""

    name: str
    kind: str
    macs: int
    elements: int  # of the tensors it must move
    dram_bytes: int
    compute_cycles: int
    dram_cycles: int
    cycles: int  # max(compute, DRAM) + the DRAM latency

    @property
    def dram_bound(self) -> bool:
        return self.dram_cycles > self.compute_cycles


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


def array_fus(cfg) -> int:
    """The FUs of the array: the product of the ADG's shape, which the graph stage builds as
    ``(arch.rows, arch.cols)`` (:func:`lego_build.frontend.adg_build.build_adg`); the budget is
    checked before any stage runs, so it takes the shape from the config."""
    return cfg.arch.rows * cfg.arch.cols


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
    if simulates(cfg) and cfg.target.scope != "tiles":
        out.append(_whole_layers(cfg, layer_bounds(cfg, workload)))
    elif simulates(cfg):
        fus = array_fus(cfg)
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


def compulsory_elements(kernel) -> int:
    """Tensor elements a whole layer must move through DRAM at least: every element of each
    tensor that the loops cover exactly (:func:`_covered`: every element read or written); a
    sliding window may skip elements, so it counts nothing."""
    return sum(t.size for t in kernel.tensors if _covered(t, kernel.dims))


def _covered(tensor, dims) -> bool:
    """Whether the loops index every element of ``tensor``: no offset, each loop dim (of bound
    above 1) in one data dim at most, and each data dim a mixed-radix number of its loop dims
    (coefficients 1, b1, b1*b2, ...: ``64 g + k`` over ``k < 64``) spanning its extent."""
    if any(tensor.bias):
        return False
    seen: set[int] = set()
    for row, extent in zip(tensor.matrix, tensor.shape):
        terms = sorted((c, dims[j].bound, j) for j, c in enumerate(row) if c and dims[j].bound > 1)
        span = 1
        for c, bound, j in terms:
            if c != span or j in seen:
                return False
            seen.add(j)
            span *= bound
        if span != extent:
            return False
    return True


def layer_bounds(cfg, workload) -> list[LayerBound]:
    """Per layer ``target.scope`` may run whole (every array layer that lowers to ``arch.family``),
    in network order, a lower bound on its cycles through the memory system."""
    from lego_build.analysis.lowering import lower

    arch, fus = cfg.arch, array_fus(cfg)
    out = []
    for layer in workload.array_layers:
        kernel = lower(layer.kernel, arch.family)
        if kernel is None:
            continue
        elements = compulsory_elements(kernel)
        dram = -(-elements * arch.operand_bits // 8)
        # the DRAM model's bucket may hold two beats before the first request
        moving = ceil(max(0, dram - 2 * arch.memsys.axi_data_bits // 8) / arch.memsys.dram_bytes_per_cycle)
        compute = -(-kernel.macs // fus)
        out.append(LayerBound(layer.name, layer_kind(layer.kernel), kernel.macs, elements, dram, compute, moving,
                              max(compute, moving) + arch.memsys.dram_latency_cycles))
    return out


def scope_bounds(cfg, bounds: list[LayerBound]) -> list[LayerBound]:
    """The bounds of what ``target.scope`` runs: every layer (``network``), or per kind the
    smallest (``layers`` runs the first mapped layer of each kind, which the map stage picks)."""
    if cfg.target.scope == "network":
        return bounds
    kinds: dict[str, LayerBound] = {}
    for b in bounds:
        if b.kind not in kinds or b.cycles < kinds[b.kind].cycles:
            kinds[b.kind] = b
    return list(kinds.values())


def _whole_layers(cfg, bounds: list[LayerBound]) -> Estimate:
    """The simulate stage's estimate for whole layers: ``run.jobs`` processes (one per core for
    0, one per layer on Ray), each holding a layer's tensors and a block of golden-model points."""
    fus, run = array_fus(cfg), scope_bounds(cfg, bounds)
    parallel = len(run) if cfg.run.ray_address else cfg.run.jobs or os.cpu_count() or 1
    parallel = max(1, min(parallel, len(run)))
    cycles = sum(b.cycles for b in run)
    wall = max(cycles / parallel, max((b.cycles for b in run), default=0))
    seconds = (COMPILE_S_PER_FU * fus + wall * fus / SIM_FU_CYCLES_PER_S
               + sum(b.macs for b in run) * GOLDEN_S_PER_POINT / parallel)
    memory = parallel * max((b.elements * TENSOR_BYTES_PER_ELEMENT + min(b.macs, GOLDEN_CHUNK) * GOLDEN_BYTES_PER_POINT
                             for b in run), default=0)
    dram = sum(b.dram_cycles for b in run) > sum(b.compute_cycles for b in run)
    return Estimate("simulate", memory, seconds,
                    f"{len(run)} whole layers of at least {cycles:,} cycles ({_why(cfg, run, dram)})",
                    "raise arch.memsys.dram_bytes_per_cycle, lower the layer sizes" if dram
                    else "lower the layer sizes, use target.scope=tiles")


def _why(cfg, run: list[LayerBound], dram: bool) -> str:
    if dram:
        return (f"{sum(b.dram_bytes for b in run):,} bytes at arch.memsys.dram_bytes_per_cycle="
                f"{cfg.arch.memsys.dram_bytes_per_cycle:g}")
    return f"{sum(b.macs for b in run):,} MACs on {array_fus(cfg)} FUs"


def check_cycles(cfg, bounds: list[LayerBound]) -> None:
    """A whole layer whose lower bound exceeds ``target.max_cycles`` would stop there: refuse it now."""
    over = [b for b in scope_bounds(cfg, bounds) if b.cycles > cfg.target.max_cycles]
    if not over:
        return
    b = max(over, key=lambda b: b.cycles)
    if b.dram_bound:
        why = f"{b.dram_bytes:,} bytes at arch.memsys.dram_bytes_per_cycle={cfg.arch.memsys.dram_bytes_per_cycle:g}"
        fix = "raise arch.memsys.dram_bytes_per_cycle or target.max_cycles"
    else:
        why = f"{b.macs:,} MACs on {array_fus(cfg)} FUs"
        fix = "raise target.max_cycles, or use a larger array or smaller layers"
    raise BudgetError(f"target.scope={cfg.target.scope}: layer {b.name} needs at least {b.cycles:,} cycles ({why}) "
                      f"but target.max_cycles={cfg.target.max_cycles:,} stops a layer's simulation before that; "
                      f"{fix}, or use target.scope=tiles")


def check(cfg, workload) -> list[Estimate]:
    """Raise :class:`BudgetError` if a stage's estimate exceeds the limits (unless ``run.confirm``)."""
    found = estimates(cfg, workload)
    if cfg.run.confirm:
        return found
    if simulates(cfg) and cfg.target.scope != "tiles":
        check_cycles(cfg, layer_bounds(cfg, workload))
    limit_bytes = int(cfg.run.max_memory_gb * 2**30) if cfg.run.max_memory_gb else available_memory()
    for e in found:
        if limit_bytes and e.memory_bytes > limit_bytes:
            raise BudgetError(
                f"the {e.stage} stage would need about {e.memory_bytes / 2**30:,.1f} GiB ({e.what}) but "
                f"{'run.max_memory_gb allows' if cfg.run.max_memory_gb else 'this machine has'} "
                f"{limit_bytes / 2**30:,.1f} GiB; {e.advice}, or set run.confirm=true to run it anyway")
        if cfg.run.max_minutes and e.seconds > 60 * cfg.run.max_minutes:
            raise BudgetError(
                f"the {e.stage} stage would take about {e.seconds / 60:,.0f} minutes ({e.what}), over "
                f"run.max_minutes={cfg.run.max_minutes:g}; {e.advice}, raise run.max_minutes, "
                "or set run.confirm=true to run it anyway")
    return found
