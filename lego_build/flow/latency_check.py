"""The latency model against the RTL off the benchmarks' path: randomised combinations of a
preset, a layer, a mapper objective and a DRAM setting, each run whole through the generated
memory system (issue 42).

The whole-layer latency model (:mod:`lego_build.mapping.latency`) is what the map stage ranks
mappings with and what the report gives for layers that did not run in RTL, so it has to
hold for every mapping the mapper may pick, not only the benchmarks' ones. A
:class:`Combo` is one such case: a small variant of a shipped preset (:data:`PRESETS`: the
same dataflows, banks small enough that a small layer takes many tiles, some of them
partial), a layer (drawn from a few real small layers and random shapes of the preset's
kernel family), an objective (energy, latency or EDP: each picks other tiles) and a DRAM
model (bandwidth and latency; the testbench's, so one compiled design serves every
setting). :func:`run` builds each one through the real stages (analyze, graph, optimize,
map, emit, simulate at ``target.scope=layers``), emitting a preset's RTL once (a design's
RTL does not depend on the layer: a later combination whose ``dag.json`` is byte-identical
reuses it, one that differs is emitted), and returns per combination the measured cycles,
the model's prediction and the error, with every output element compared.
"""
from __future__ import annotations

import hashlib
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

#: small variants of the shipped presets, by name: each keeps its preset's dataflows, FU and
#: tiling rule; banks of a few dozen words make small layers take many tiles
PRESETS: dict[str, tuple[str, ...]] = {
    # output-stationary GEMM (the default design)
    "systolic": ("arch=systolic", "arch.buffer_depth=32"),
    # weight-stationary GEMM with a 32-bit bus: narrow rows share no beats, every row a burst
    "tpu": ("arch=tpu", "arch.rows=4", "arch.cols=4", "arch.buffer_depth=64", "arch.memsys.axi_data_bits=32"),
    # Gemmini's tiling rule on its weight-stationary conv array (input channels x output channels)
    "gemmini_like": ("arch=gemmini_like", "arch.rows=4", "arch.cols=4", "arch.onchip_kb=2",
                     "arch.onchip_split={input: 0.75, weight: 0.75, output: 0.5}"),
    # IC-OC, no control flow (NVDLA)
    "nvdla": ("arch=nvdla", "arch.rows=4", "arch.cols=4", "arch.onchip_kb=0", "arch.buffer_depth=64"),
    # OH-OW with FIFO links, run with the FIFOs off (ShiDianNao)
    "shidiannao": ("arch=shidiannao", "arch.rows=4", "arch.cols=4", "arch.onchip_kb=0", "arch.buffer_depth=64"),
    # three switchable dataflows with folded banks (LEGO-MNICOC)
    "lego_mnicoc": ("arch=lego_mnicoc", "arch.rows=4", "arch.cols=4", "arch.onchip_kb=0", "arch.buffer_depth=32"),
}

#: the kernel family of each preset's array (what its random layers are drawn in)
FAMILY = {"systolic": "gemm", "tpu": "gemm", "gemmini_like": "conv2d", "nvdla": "conv2d", "shidiannao": "conv2d",
          "lego_mnicoc": "conv2d"}

#: real small layers: LeNet-5's (LeCun et al. 1998) convolutions and its first fully connected
#: layer, and a ResNet basic block's 3x3 conv and MobileNetV2's depthwise 3x3 at CIFAR sizes
REAL = {
    "conv2d": (
        ("workload=conv2d", "workload.in_ch=1", "workload.out_ch=6", "workload.in_h=32", "workload.in_w=32",
         "workload.kh=5", "workload.kw=5", "workload.pad=0"),
        ("workload=conv2d", "workload.in_ch=6", "workload.out_ch=16", "workload.in_h=14", "workload.in_w=14",
         "workload.kh=5", "workload.kw=5", "workload.pad=0"),
        ("workload=conv2d", "workload.in_ch=16", "workload.out_ch=16", "workload.in_h=8", "workload.in_w=8"),
        ("workload=conv2d", "workload.in_ch=16", "workload.out_ch=16", "workload.groups=16", "workload.in_h=16",
         "workload.in_w=16"),
    ),
    "gemm": (
        ("workload=gemm", "workload.M=1", "workload.N=120", "workload.K=400"),  # LeNet-5's fc1, one image
        ("workload=gemm", "workload.M=16", "workload.N=84", "workload.K=120"),  # its fc2, 16 images
    ),
}

OBJECTIVES = ("energy", "latency", "edp")
#: DRAM bytes per cycle and latency (cycles) drawn from
BANDWIDTHS = (1, 2, 4, 8, 16, 32)
LATENCIES = (1, 10, 32, 64, 128, 200)
#: the most MACs a drawn layer has (each runs whole in RTL on a 16-FU array)
MAX_MACS = 300_000


@dataclass(frozen=True)
class Combo:
    """One case: a preset of :data:`PRESETS`, a layer (workload overrides), an objective, a DRAM."""

    preset: str
    layer: tuple[str, ...]
    objective: str
    bandwidth: float
    latency: int

    def overrides(self) -> list[str]:
        return [*PRESETS[self.preset], *self.layer, f"mapper.objective={self.objective}",
                f"arch.memsys.dram_bytes_per_cycle={self.bandwidth:g}",
                f"arch.memsys.dram_latency_cycles={self.latency}",
                "target.scope=layers", "target.max_cycles=20000000"]

    @property
    def label(self) -> str:
        layer = " ".join(o.split(".", 1)[-1] for o in self.layer if not o.startswith("workload="))
        kind = next((o.split("=", 1)[1] for o in self.layer if o.startswith("workload=")), "")
        return f"{self.preset} {kind}({layer}) {self.objective} {self.bandwidth:g} B/cycle lat {self.latency}"


def _random_layer(rng: random.Random, family: str) -> tuple[str, ...]:
    """A random layer of ``family`` with at most :data:`MAX_MACS` MACs."""
    while True:
        if family == "gemm":
            m, n, k = rng.randint(1, 80), rng.randint(1, 48), rng.randint(1, 96)
            if m * n * k <= MAX_MACS:
                return ("workload=gemm", f"workload.M={m}", f"workload.N={n}", f"workload.K={k}")
            continue
        k = rng.choice((1, 1, 3, 3, 3, 5))
        stride = rng.choice((1, 1, 1, 2))
        pad = rng.choice((0, k // 2))
        h, w = rng.randint(max(k, 3), 18), rng.randint(max(k, 3), 18)
        if rng.random() < 0.2:  # depthwise: one input channel per group
            ic = oc = groups = rng.randint(1, 24)
        else:
            ic, oc, groups = rng.randint(1, 24), rng.randint(1, 24), 1
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        if oh < 1 or ow < 1 or oh * ow * oc * (ic // groups) * k * k > MAX_MACS:
            continue
        return ("workload=conv2d", f"workload.in_ch={ic}", f"workload.out_ch={oc}", f"workload.groups={groups}",
                f"workload.in_h={h}", f"workload.in_w={w}", f"workload.kh={k}", f"workload.kw={k}",
                f"workload.stride={stride}", f"workload.pad={pad}")


def combinations(n: int, seed: int = 0, presets: tuple[str, ...] = tuple(PRESETS)) -> list[Combo]:
    """``n`` combinations drawn with ``seed`` (the same ``n`` and seed: the same list), the presets
    in turn; one layer in four a real one (:data:`REAL`), the rest random shapes."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        preset = presets[i % len(presets)]
        family = FAMILY[preset]
        layer = rng.choice(REAL[family]) if rng.random() < 0.25 else _random_layer(rng, family)
        out.append(Combo(preset, layer, rng.choice(OBJECTIVES), rng.choice(BANDWIDTHS), rng.choice(LATENCIES)))
    return out


#: the stages a combination runs, in order (report: nothing it checks)
HARDWARE = ("analyze", "graph", "optimize")
AFTER = ("map",)


def run(combos: list[Combo], work: Path, progress=None) -> list[dict]:
    """Each combination built and simulated in ``work/<k>/`` (removed after it is read); per
    combination its label, the layer's measured and predicted cycles, the error, the tiles and
    the mismatches (:func:`lego_build.sim.layers.simulate_layers`, without the target's lint).
    ``progress`` is called with
    each row as it is done."""
    from lego_build.config.compose import compose
    from lego_build.flow.stages import STAGE_BY_NAME, run_stage
    from lego_build.runtime.artifacts import Inputs
    from lego_build.sim.layers import simulate_layers

    rtl: dict[str, Path] = {}  # sha256 of dag.json -> a directory holding its emitted rtl/
    rows = []
    for k, combo in enumerate(combos):
        cfg = compose(combo.overrides())
        design = work / f"{k:03d}"
        for stage in HARDWARE:
            run_stage(stage, cfg, design)
        key = hashlib.sha256((design / "dag.json").read_bytes()).hexdigest()
        if key in rtl:  # the same hardware: its Verilog is the same too
            shutil.copytree(rtl[key] / "rtl", design / "rtl")
        else:
            run_stage("emit", cfg, design)
            rtl[key] = work / f"rtl-{key[:12]}"
            shutil.copytree(design / "rtl", rtl[key] / "rtl")
        for stage in AFTER:
            run_stage(stage, cfg, design)
        result = simulate_layers(cfg, design, Inputs(design, STAGE_BY_NAME["simulate"].inputs, "simulate"))
        (layer, *_) = result["layers"]
        row = {"combo": combo.label, "preset": combo.preset, "objective": combo.objective,
               "bandwidth": combo.bandwidth, "latency": combo.latency, "layer": layer["layer"],
               "kind": layer["kind"], "dataflow": layer["dataflow"], "tiles": layer["tiles"],
               "outputs": layer["outputs"], "mismatches": layer["mismatches"], "cycles": layer["cycles"],
               "cycles_predicted": layer["cycles_predicted"], "error": layer["error"],
               "load_wait": layer["load_wait"], "store_wait": layer["store_wait"]}
        rows.append(row)
        shutil.rmtree(design)
        if progress is not None:
            progress(row)
    return rows
