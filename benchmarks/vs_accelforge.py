"""lego_build's mapper against AccelForge 1.0.467's (FFM) on the same Eyeriss-like hardware, per layer.

    python benchmarks/vs_accelforge.py [--network resnet18[,resnet50]] [--layers NAME,...]
                                       [--accelforge-python PATH] [--cached] [--pe-order both]
                                       [--spec ours|array|issue22] [--ours flow|af-space|array-space]
                                       [--hardware accelforge|ours] [--search rtml|placed] [--beam N]
                                       [--repeat N]

Our side (always live): the product's own path, ``analyze``, ``graph``, ``optimize`` and ``map``
stages of ``arch=eyeriss_ruby workload=<network> workload.bits=16 mapper=ruby_s`` (the network at
the array's operand width; the preset's default is 8 bits) run in a temporary design
directory (``out/`` is not touched); the figures are ``mapping.json``'s per layer (energy,
cycles, utilization, the mapper's lower bound ``bound.energy_pj``). Our CPU time per layer is the
process time of ``mapping.stage.best_dataflow`` for that distinct layer (all its dataflows searched
and costed), measured by wrapping that function while the map stage runs; ``--repeat N`` runs our
side N times, each in a process of its own, and takes each layer's median (one run's figure moves
by 10-20 % on a shared machine). ``--search`` and ``--beam`` set ``mapper.search`` and
``mapper.beam``.

AccelForge (optional, benchmark only) runs in its own Python >= 3.12 venv
(``--accelforge-python``, default ``$ACCELFORGE_PYTHON``; ``pip install accelforge==1.0.467``)
through a driver embedded below, one process and one job (``af.set_n_parallel_jobs(1)``), JSON in
and out; its CPU time is the driver's process time for ``Spec.map_workload_to_arch`` (exhaustive
FFM search under the constraints below, energy objective). Every finished run is appended to
``benchmarks/results/vs_accelforge.json`` (date, version, CPU time, layer shape, spec hash);
``--cached`` prints the table from that record without running AccelForge.

The AccelForge spec is written from ``compose(["arch=eyeriss_ruby"]).arch`` through
``mapping.hierarchy.from_conf`` (no constant retyped). Conventions and conversions:

* energies: each action's ``energy`` is our ``read_pj``/``write_pj`` per access of ``width_bits``
  with ``bits_per_action = width_bits`` (AccelForge's default is per bit); leakage and area 0 and
  explicit throughputs, so no component model (CACTI) is ever called. Units: pJ and cycles.
* widths: inputs and weights ``arch.operand_bits``, outputs ``arch.acc_bits`` (we cost partial
  sums as 32-bit words; a 16-bit per-PE register file then takes two accesses per partial sum in
  both tools). The DRAM node holds outputs at ``operand_bits``: our model writes an output's final
  value to DRAM at operand width (only partial sums spilled to DRAM would differ: ours 32 bits).
* bandwidth: ``bandwidth_bits / width_bits`` actions per cycle for reads and writes; AccelForge sums
  ``n / throughput`` over actions, the same as our reads + writes over one port. Per-PE scratchpads
  unlimited in both. Latency = the slowest component in both (double buffering, no stalls);
  utilization = MACs / (PEs x compute cycles) in both.
* capacity: AccelForge sizes are bits and unbuffered (no landing zone); ours likewise fit a tile in
  the whole level. Bypass: weights skip the GLB (``tensors.keep``), as ``roles`` says.
* accesses: both count reads and writes separately, a partial-sum update as a read plus a write
  with the first read of each element skipped, a multicast as one write per receiving buffer and
  one read of the parent (``may_reuse: All``), and the input as the padded window
  (``H = (P-1)*stride + R``; a strided 1 x 1 layer's input subsampled, :func:`workload_yaml`).
* spatial constraints (AccelForge's own Eyeriss example): the 14-wide side unrolls only loops that
  reuse weights (p, q), the 12-wide side only loops that reuse outputs (c, r, s), ``min_usage: 1``
  (full use, else FFM falls back to the best usage found), perfect factors. Our ``eyeriss_ruby``
  mapspace unrolls kh and ic on the rows and oh (and 2 oc) on the columns, with Ruby-S partial
  tiles: neither space contains the other. ``--spec array`` gives AccelForge our array's unroll
  axes instead (``arch.unroll.axes``: r, c on the 12-wide side, p, k on the 14-wide side; every
  other rank variable's spatial loop bound 1), the space of the flow's dataflows; ``--ours
  array-space`` searches ours over the same axes (``mapper.unroll=search``, perfect factors).
* per-PE scratchpads: FFM keeps storage nodes in hierarchy order across tensors, so their nesting
  is part of its mapspace (ours is fixed: weight, psum, ifmap outer to inner); ``--pe-order both``
  (default) searches AccelForge's Eyeriss example's nesting (input, weight, output) and ours and
  keeps the better (its CPU time is the sum; freeing the order crashes 1.0.467's FFM).
* not in AccelForge's spec: our array network hops (``arch.energy.hop_pj``, the ``network``
  level, under 0.5 % of a layer), our MAC operand registers (an input or weight word is not
  re-read from its scratchpad while the loops below it do not change it; AccelForge reads every
  operand once per MAC), and the sliding-window sharing of inputs between PEs (filter rows and
  output rows both unrolled: Eyeriss's diagonal reuse; AccelForge charges the GLB one read per
  scratchpad fill, its GLB input reads equal the scratchpads' writes, ours the distinct words).
  ``--hardware accelforge`` (default) describes AccelForge's PE array in our config instead
  (:data:`AF_HARDWARE`), so both tools count the same accesses; ``--hardware ours`` keeps
  ``eyeriss_ruby``'s.
* the summary counts the distinct layers whose energy is within 5 % of AccelForge's either way
  (and those at most 5 % above it), those mapped with at least 1000x less CPU time, and the layers
  that are both. Given several networks (``--network resnet18,resnet50``), it also counts them
  together: a conv shape in both is one distinct layer, counted only if each network's
  measurement of it holds (:func:`summarize`).
* with ``--hardware accelforge``, AccelForge's own model also prices each of our mappings
  (:func:`af_mapping_yaml`, :func:`cross_check`): where the two models agree on the same mapping,
  an energy apart from AccelForge's best is the search's or the mapspace's.

Issue 22's AccelForge figures (311.2 uJ, 688,128 cycles; 701.2 uJ, 1,376,256 cycles) come from
another spec: ``--spec issue22 --pe-order example`` reproduces them (weights may stay in the GLB,
as the example's ``may_keep: All``; 16-bit partial sums; the weight scratchpad priced at the
example's 192 entries, Table 5.2: 0.72 pJ instead of our 448 B's 0.84 pJ).
"""
from __future__ import annotations

import argparse
import datetime
import fcntl
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from math import prod
from pathlib import Path

from lego_build import compose, run_stage
from lego_build.analysis.lowering import lower
from lego_build.analysis.networks import network
from lego_build.mapping import stage as map_stage
from lego_build.mapping.hierarchy import from_conf, table52_pj
from lego_build.mapping.model import positions
from lego_build.runtime.atomic import read_json

RECORD = Path(__file__).resolve().parent / "results" / "vs_accelforge.json"
ACCELFORGE_VERSION = "1.0.467"
# AccelForge on these layers as reported in issue 22 (energy uJ, cycles, CPU min), with --spec issue22
ISSUE = {"layer1.0.conv2": (311.2, 688_128, 41), "layer4.0.conv2": (701.2, 1_376_256, 23)}
ROLE_TENSOR = {"input": "Inputs", "weight": "Weights", "output": "Outputs"}
ROLE_TENSOR_INV = {t: r for r, t in ROLE_TENSOR.items()}

DRIVER = r'''
import json, resource, sys, time
import accelforge as af
af.set_n_parallel_jobs(1, print_message=False)
spec = af.Spec.from_yaml(sys.argv[1], sys.argv[2])
spec.mapper.metrics = af.mapper.Metrics.ENERGY
cpu0, wall0 = time.process_time(), time.perf_counter()
m = spec.map_workload_to_arch(print_progress=True)
def cpu():
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() - cpu0 + ch.ru_utime + ch.ru_stime
out = {"cpu_s": cpu(), "wall_s": time.perf_counter() - wall0, "version": getattr(af, "__version__", None),
       "energy_pj": float(m.energy()), "cycles": float(m.latency()),
       "energy_by_component_pj": {k: float(v) for k, v in m.energy(per_component=True).items()},
       "latency_by_component": {k: float(v) for k, v in m.latency(per_component=True).items()},
       "actions": {"/".join(k): float(v) for k, v in m.actions(per_component=True, per_tensor=True).items()}}
try:
    out["mapping"] = str(m.mapping())
except Exception as exc:  # the text form is informative only
    out["mapping"] = f"unavailable: {exc}"
json.dump(out, open(sys.argv[3], "w"), indent=1)
'''

#: AccelForge's own model on given mappings (``Spec.evaluate_mapping``, no search): a JSON list of
#: jobs (arch, workload and mapping YAML files, output file) in one process
EVAL_DRIVER = r'''
import json, sys, time
import accelforge as af
for job in json.load(open(sys.argv[1])):
    cpu0 = time.process_time()
    m = af.Spec.from_yaml(job["arch"], job["workload"], job["mapping"]).evaluate_mapping()
    json.dump({"cpu_s": time.process_time() - cpu0, "version": getattr(af, "__version__", None),
               "energy_pj": float(m.energy()), "cycles": float(m.latency()),
               "energy_by_component_pj": {k: float(v) for k, v in m.energy(per_component=True).items()}},
              open(job["out"], "w"), indent=1)
'''


# ----------------------------------------------------------------------------- our side
#: ``--ours af-space``: our mapper in AccelForge's Eyeriss example's space (the unrolling searched
#: with output rows and columns on the 14-wide side, input channels and the filter on the 12-wide
#: side, perfect factors)
AF_SPACE = ("mapper=pfm", "mapper.unroll=search", "arch.unroll.axes=[[ic,kh,kw],[oh,ow]]", "arch.unroll.required=[]")
#: ``--ours array-space``: our mapper in the space of ``--spec array`` (the unrolling searched over the
#: array's own unroll axes, ``arch.unroll.axes``, none required, perfect factors), not only the
#: generated array's dataflows
ARRAY_SPACE = ("mapper=pfm", "mapper.unroll=search", "arch.unroll.required=[]")
OUR_SPACES = {"flow": (), "af-space": AF_SPACE, "array-space": ARRAY_SPACE}


#: ``--hardware accelforge``: the PE array AccelForge's spec describes, in our arch config: a MAC reads
#: its operands every cycle (no operand registers), the GLB serves every scratchpad fill (an identical
#: one multicast; no forwarding of overlapping windows between PEs), no array network energy
AF_HARDWARE = ("arch.operand_registers=false", "arch.window_forwarding=false", "arch.energy.hop_pj=0")


def run_ours(net: str, extra: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """mapping.json's layers by name, and our CPU seconds per distinct lowered kernel; ``extra``:
    overrides after ours (e.g. :data:`AF_SPACE`)."""
    arch = compose(["arch=eyeriss_ruby"]).arch  # the network at the array's operand width (default: 8 bits)
    cfg = compose(["arch=eyeriss_ruby", f"workload={net}", f"workload.bits={arch.operand_bits}", "mapper=ruby_s",
                   *extra])
    cpu: dict = {}
    real = map_stage.best_dataflow

    def timed(kernel, *args, **kwargs):
        t = time.process_time()
        try:
            return real(kernel, *args, **kwargs)
        finally:
            cpu[shape_key(kernel)] = time.process_time() - t

    map_stage.best_dataflow = timed
    try:
        with tempfile.TemporaryDirectory(prefix="vs_accelforge_") as tmp:
            for name in ("analyze", "graph", "optimize", "map"):
                run_stage(name, cfg, Path(tmp))
            doc = read_json(Path(tmp) / "mapping.json")
    finally:
        map_stage.best_dataflow = real
    return {row["name"]: row for row in doc["layers"]}, cpu


def run_ours_repeated(net: str, extra: tuple[str, ...], n: int) -> tuple[dict, dict]:
    """:func:`run_ours` ``n`` times, each in a Python process of its own (as the first run: no cache
    of an earlier run), our CPU time per distinct layer their median; the mappings are the same every
    time (the flow is deterministic), the first run's kept."""
    if n <= 1:
        return run_ours(net, extra)
    runs = []
    for i in range(n):
        print(f"  our side, run {i + 1} of {n} ...", flush=True)
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), OUR_SIDE, net, *extra],
                              capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    cpu = {tuple(json.loads(k)): statistics.median(run["cpu"][k] for run in runs) for k in runs[0]["cpu"]}
    return runs[0]["rows"], cpu


#: the hidden first argument of a :func:`run_ours_repeated` child: it prints our side as JSON
OUR_SIDE = "--our-side-json"


def shape_key(kernel) -> tuple:
    """A conv layer's loop bounds and stride (a kernel read back from analysis.json and one built by
    ``network`` compare equal by this key)."""
    names = [d.name for d in kernel.dims]
    x = next(t for t in kernel.tensors if t.role == "in")
    return tuple(d.bound for d in kernel.dims) + (x.matrix[2][names.index("oh")],)  # the input's H row: oh's stride


def distinct_layers(net: str, arch) -> list[dict]:
    """The network's distinct array layers (named by the first, ``names`` all), with their conv shape."""
    seen, out = {}, []
    for layer in network(net, 1, arch.operand_bits):
        if layer.kernel is None or (k := lower(layer.kernel, arch.family)) is None:
            continue
        if k in seen:
            seen[k]["names"].append(layer.name)
            continue
        dims = {d.name: d.bound for d in k.dims}
        stride = shape_key(k)[-1]
        if dims["n"] != 1 or dims["g"] != 1:
            continue  # batch 1, no grouped layers in the ResNets
        seen[k] = {"name": layer.name, "names": [layer.name], "kernel": k, "shape": {
            "K": dims["oc"], "C": dims["ic"], "P": dims["oh"], "Q": dims["ow"], "R": dims["kh"], "S": dims["kw"],
            "stride": stride}}
        out.append(seen[k])
    return out


# ----------------------------------------------------------------------------- AccelForge spec
def _fmt(x: float) -> str:
    return "inf" if x == float("inf") else repr(float(x))


EXAMPLE_PE_ORDER = ("input", "weight", "output")  # AccelForge's Eyeriss example, outer -> inner
EXAMPLE_WEIGHT_WORDS = 192  # its WeightScratchpad: 192 16-bit entries (only --spec issue22 uses it)


def arch_yaml(arch, pe_order: str = "example", spec: str = "ours") -> str:
    """The AccelForge arch written from our cost model's hierarchy of ``arch``; ``pe_order``: how the
    per-PE scratchpads nest, as in AccelForge's Eyeriss example or as our levels are listed.
    ``spec="issue22"``: the spec behind issue 22's figures, as reconstructed (module docstring)."""
    h = from_conf(arch)
    if spec == "issue22":  # the weight scratchpad priced at the example's size (Table 5.2)
        e = table52_pj(EXAMPLE_WEIGHT_WORDS * arch.operand_bits / 8)
        h = replace(h, levels=tuple(replace(lv, read_pj=e, write_pj=e) if lv.per_pe and "weight" in lv.roles
                                    else lv for lv in h.levels))
    shared = [lv for lv in h.levels if not lv.per_pe]
    per_pe = [lv for lv in h.levels if lv.per_pe]
    outer = shared[::-1]  # DRAM first

    def memory(lv, extra: str = "") -> str:
        keep = " | ".join(ROLE_TENSOR[r] for r in lv.roles)
        if spec == "issue22" and lv is not outer[0] and not lv.per_pe:
            keep += ", may_keep: All"  # as the example's GlobalBuffer: weights may stay there
        size = "inf" if lv.size_bytes is None else f"{lv.size_bytes * 8}"
        thr = float("inf") if lv.bandwidth_bits is None else lv.bandwidth_bits / lv.width_bits
        acts = "".join(f"    - {{name: {a}, energy: {_fmt(pj)}, bits_per_action: {lv.width_bits}, "
                       f"throughput: {_fmt(thr)}}}\n" for a, pj in (("read", lv.read_pj), ("write", lv.write_pj)))
        return (f"  - !Memory\n    name: {lv.name}\n    size: {size}\n    leak_power: 0\n    area: 0\n"
                f"    tensors: {{keep: {keep}}}\n{extra}    actions:\n{acts}")

    parts = ["arch:\n  nodes:\n"]
    for i, lv in enumerate(outer):
        extra = f"    bits_per_value: {{Outputs: {arch.operand_bits}}}\n" if i == 0 else ""
        parts.append(memory(lv, extra))
    if spec == "array":  # our array's unroll axes: every other rank variable one iteration on that side
        rows, cols = (" | ".join(sorted(set(AF_RANK.values()) - {AF_RANK[d] for d in axis}))
                      for axis in arch.unroll.axes)
        limits = {"cols": f"loop_bounds: [{{expression: '{cols}', operator: '==', value: 1}}]",
                  "rows": f"loop_bounds: [{{expression: '{rows}', operator: '==', value: 1}}]"}
    else:  # AccelForge's Eyeriss example: p, q on the columns (weights reused), c, r, s on the rows
        limits = {"cols": "reuse: Weights", "rows": "reuse: Outputs"}
    parts.append(f"  - !Container\n    name: PE\n    spatial:\n"
                 f"    - {{name: cols, fanout: {arch.cols}, {limits['cols']}, may_reuse: All, min_usage: 1}}\n"
                 f"    - {{name: rows, fanout: {arch.rows}, {limits['rows']}, may_reuse: All, min_usage: 1}}\n")
    if pe_order == "example":
        per_pe = sorted(per_pe, key=lambda lv: -min(EXAMPLE_PE_ORDER.index(r) for r in lv.roles))
    for lv in per_pe[::-1]:  # our per-PE levels are listed inner -> outer
        parts.append(memory(lv))
    parts.append(f"  - !Compute\n    name: mac\n    leak_power: 0\n    area: 0\n    actions:\n"
                 f"    - {{name: compute, energy: {_fmt(h.mac_pj)}, throughput: 1}}\n")
    return "".join(parts)


def workload_yaml(s: dict, arch, spec: str = "ours") -> str:
    """One conv Einsum; the input is the padded window ``(P-1)*stride + R`` (what both tools move),
    except a strided 1 x 1 filter's, whose skipped rows and columns neither tool's hardware reads:
    AccelForge would count the whole rank range, we the touched pixels, so it gets the subsampled
    input (stride 1)."""
    st, ob = s["stride"], arch.operand_bits
    psum = ob if spec == "issue22" else arch.acc_bits
    if s["R"] == s["S"] == 1:
        st = 1
    h, w = (s["P"] - 1) * st + s["R"], (s["Q"] - 1) * st + s["S"]
    hp = f"{st}*p + r" if st > 1 else "p + r"
    wp = f"{st}*q + s" if st > 1 else "q + s"
    return (f"workload:\n  rank_sizes: {{K: {s['K']}, C: {s['C']}, P: {s['P']}, Q: {s['Q']}, R: {s['R']}, S: {s['S']}, "
            f"H: {h}, W: {w}}}\n"
            f"  bits_per_value: {{Inputs: {ob}, Weights: {ob}, Outputs: {psum}}}\n"
            f"  einsums:\n  - name: Conv\n    tensor_accesses:\n"
            f"    - {{name: Inputs, projection: {{C: c, H: {hp}, W: {wp}}}}}\n"
            f"    - {{name: Weights, projection: [k, c, r, s]}}\n"
            f"    - {{name: Outputs, projection: [k, p, q], output: True}}\n")


#: our conv dims as AccelForge's rank variables (:func:`workload_yaml`); n and g are 1 here
AF_RANK = {"oc": "k", "ic": "c", "oh": "p", "ow": "q", "kh": "r", "kw": "s"}
AF_DEPENDS = {"Inputs": {"ic", "oh", "ow", "kh", "kw"}, "Weights": {"oc", "ic", "kh", "kw"},
              "Outputs": {"oc", "oh", "ow"}}


def af_mapping_yaml(row: dict, arch, dims: list[str]) -> tuple[str, str]:
    """Our mapping of a layer (``mapping.json``'s row) as an AccelForge loop tree, and '' or why it
    has none (then the YAML is '').

    Loops outer -> inner as our model nests them (:func:`lego_build.mapping.model.positions`: each
    level's loops in its listed order, then the rest in the kernel's ``dims`` order; the array's spatial loops
    between the shared and the per-PE levels), each with its tile shape. A tensor's storage node at
    a level sits above that level's loops, and above the innermost loops over dims it does not
    depend on (our model keeps the tile there: stationarity; AccelForge refills a storage node's
    tile at every iteration of a loop above it). A per-PE tile that our model keeps across loops
    above the array has no place in AccelForge's tree (its storage nodes sit below the spatial
    loops): such a mapping is not translated."""
    h = from_conf(arch)
    sched, bound = row["schedule"], row["dims"]
    top = len(h.levels) - 1
    spatial: dict[str, int] = {}
    for axis in sched["spatial"]:
        for e in axis:
            spatial[e["dim"]] = spatial.get(e["dim"], 1) * e["factor"]
    factor = {lv: {} for lv in range(top + 1)}
    for d, t in sched["tiles"].items():
        for lv, f in enumerate(t):
            factor[lv][d] = f
        inner = prod(t) * spatial.get(d, 1)
        if bound[d] % inner:
            return "", f"{d}: an imperfect tiling (AccelForge's tile shapes divide)"
        factor[top][d] = bound[d] // inner
    loops: list[tuple[str, str, int]] = []  # (kind, dim, factor) outer -> inner
    starts: dict[int, int] = {}  # memory level -> index of its first loop
    for kind, lv in positions(h):
        if kind == "S":
            loops += [("S" + "rc"[lv], e["dim"], e["factor"]) for e in sched["spatial"][lv] if e["factor"] > 1]
            continue
        starts[lv] = len(loops)
        listed = sched["orders"][lv] if lv < len(sched["orders"]) else []
        moving = [d for d in dims if factor[lv].get(d, 1) > 1]
        loops += [("T", d, factor[lv][d]) for d in [*(d for d in listed if d in moving),
                                                     *(d for d in moving if d not in listed)]]
    nodes: dict[int, list[str]] = {}  # loop index -> storage nodes placed just above that loop
    for lv in range(top, -1, -1):
        level = h.levels[lv]
        for tensor in ("Weights", "Outputs", "Inputs"):
            if lv < top and ROLE_TENSOR_INV[tensor] not in level.roles:
                continue
            at = starts[lv]
            while lv < top and at and loops[at - 1][0] == "T" and loops[at - 1][1] not in AF_DEPENDS[tensor]:
                at -= 1  # stationary across that loop: the node above it
            if level.per_pe and at and loops[at - 1][0] != "T":
                above = next((x for x in reversed(loops[:at]) if x[0] == "T"), None)
                if above is not None and above[1] not in AF_DEPENDS[tensor]:
                    return "", (f"{tensor}@{level.name} kept across the array's {AF_RANK[above[1]]} loop above "
                                "the PEs (AccelForge's per-PE storage sits below its spatial loops)")
            nodes.setdefault(at, []).append(f"  - !Storage {{tensors: [{tensor}], component: {level.name}}}\n")
    remaining = dict(bound)
    out = ["mapping:\n  nodes:\n"]
    for i, (kind, d, f) in enumerate(loops + [("C", "", 1)]):
        out += nodes.get(i, [])
        if kind == "C":
            break
        remaining[d] //= f
        if kind == "T":
            out.append(f"  - !Temporal {{rank_variable: {AF_RANK[d]}, tile_shape: {remaining[d]}}}\n")
        else:
            out.append(f"  - !Spatial {{rank_variable: {AF_RANK[d]}, tile_shape: {remaining[d]}, "
                       f"name: {'rows' if kind == 'Sr' else 'cols'}, component: PE}}\n")
    out.append("  - !Compute {einsum: Conv, component: mac}\n")
    return "".join(out), ""


def evaluate_in_accelforge(python: str, jobs: list[tuple[str, str, str]], log: Path) -> list[dict]:
    """AccelForge's model on each (arch, workload, mapping) YAML triple (:data:`EVAL_DRIVER`)."""
    with tempfile.TemporaryDirectory(prefix="af_eval_") as tmp:
        t = Path(tmp)
        listed = []
        for i, texts in enumerate(jobs):
            paths = []
            for name, text in zip(("arch", "workload", "mapping"), texts):
                (t / f"{name}{i}.yaml").write_text(text)
                paths.append(str(t / f"{name}{i}.yaml"))
            listed.append({"arch": paths[0], "workload": paths[1], "mapping": paths[2], "out": str(t / f"out{i}.json")})
        (t / "jobs.json").write_text(json.dumps(listed))
        (t / "driver.py").write_text(EVAL_DRIVER)
        with open(log, "a") as f:
            env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
            rc = subprocess.run([python, str(t / "driver.py"), str(t / "jobs.json")], stdout=f,
                                stderr=subprocess.STDOUT, cwd=t, env=env).returncode
        if rc != 0:
            raise SystemExit(f"AccelForge's evaluate_mapping failed (exit {rc}); see {log}")
        return [json.loads(Path(job["out"]).read_text()) for job in listed]


def run_accelforge(python: str, net: str, layer: dict, arch, pe_order: str, spec: str, log: Path) -> dict:
    a_yaml, w_yaml = arch_yaml(arch, pe_order, spec), workload_yaml(layer["shape"], arch, spec)
    with tempfile.TemporaryDirectory(prefix="af_") as tmp:
        t = Path(tmp)
        for name, text in (("driver.py", DRIVER), ("arch.yaml", a_yaml), ("workload.yaml", w_yaml)):
            (t / name).write_text(text)
        start = time.perf_counter()
        with open(log, "a") as f:
            proc = subprocess.Popen([python, str(t / "driver.py"), str(t / "arch.yaml"), str(t / "workload.yaml"),
                                     str(t / "out.json")], stdout=f, stderr=subprocess.STDOUT, cwd=t,  # it writes there
                                    env={**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"})
            done = threading.Event()

            def beat():
                while not done.wait(60):
                    print(f"  ... AccelForge on {layer['name']}: {(time.perf_counter() - start) / 60:.0f} min "
                          f"(pid {proc.pid}, log {log})", flush=True)

            threading.Thread(target=beat, daemon=True).start()
            rc = proc.wait()
            done.set()
        if rc != 0:
            raise SystemExit(f"AccelForge failed on {layer['name']} (exit {rc}); see {log}")
        result = json.loads((t / "out.json").read_text())
    result["mapping"] = af_compact(result["mapping"])
    return {"network": net, "layer": layer["name"], "shape": layer["shape"], "pe_order": pe_order, "spec": spec,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "accelforge": result.pop("version") or ACCELFORGE_VERSION,
            "spec_sha1": hashlib.sha1((a_yaml + w_yaml).encode()).hexdigest()[:12], **result}


def load_record() -> list[dict]:
    return json.loads(RECORD.read_text())["runs"] if RECORD.exists() else []


def append_record(run: dict) -> None:
    """Add a run to the record (under a lock: two networks may be compared at once)."""
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    with open(RECORD.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        runs = load_record() + [run]
        tmp = RECORD.with_suffix(".tmp")
        tmp.write_text(json.dumps({"about": "AccelForge runs of benchmarks/vs_accelforge.py (energy pJ, cycles, "
                                            "CPU s)", "runs": runs}, indent=1) + "\n")
        tmp.replace(RECORD)


def af_compact(text: str) -> str:
    """AccelForge's mapping (its repr) in short: storage nodes ``[tensors@memory]``, temporal loops
    ``k:8`` (tile shape), spatial loops ``S:r3`` (fanout used), outer to inner."""
    if "Storage(" not in text:
        return text  # already short
    out = []
    for m in re.finditer(r"Storage\(tensors=\[([^\]]*)\], component='(\w+)'|Temporal\(rank_variable='(\w+)', "
                         r"tile_shape=(\w+)|Spatial\((\w+), in \[0\.\.(\d+)\)", text):
        if m.group(1) is not None:
            out.append(f"[{m.group(1).replace(chr(39), '').replace(' ', '')}@{m.group(2)}]")
        elif m.group(3) is not None:
            out.append(f"{m.group(3)}:{m.group(4)}")
        else:
            out.append(f"S:{m.group(5)}{m.group(6)}")
    return " ".join(out)


# ----------------------------------------------------------------------------- AccelForge's model on ours
def cross_check(args, arch, layers: list[dict], ours: dict, af: dict) -> None:
    """AccelForge's own model (``evaluate_mapping``) on each of our mappings (:func:`af_mapping_yaml`):
    whether the two models price the same mapping alike, so that an energy apart from AccelForge's
    optimum is the search's or the mapspace's. Recorded like the searches (``kind: evaluate``)."""
    texts, why = {}, {}
    for ly in layers:
        o = ours[ly["name"]]
        if o["status"] != "mapped":
            continue
        y, reason = af_mapping_yaml(o, arch, [d.name for d in ly["kernel"].dims])
        if reason:
            why[ly["name"]] = reason
        else:
            texts[ly["name"]] = (arch_yaml(arch, "ours", args.spec), workload_yaml(ly["shape"], arch, args.spec), y)
    sha = {n: hashlib.sha1("".join(t).encode()).hexdigest()[:12] for n, t in texts.items()}
    found = {r["spec_sha1"]: r for r in load_record() if r.get("kind") == "evaluate"}
    missing = [n for n in texts if sha[n] not in found]
    if missing and args.accelforge_python:  # seconds per layer: run even with --cached
        log = Path(tempfile.gettempdir()) / f"vs_accelforge_{os.getpid()}.log"
        print(f"\nAccelForge's model on our mappings of {len(missing)} layers ...", flush=True)
        for n, r in zip(missing, evaluate_in_accelforge(args.accelforge_python, [texts[n] for n in missing], log)):
            run = {"kind": "evaluate", "network": args.network, "layer": n, "spec": args.spec,
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   "accelforge": r.pop("version") or ACCELFORGE_VERSION, "spec_sha1": sha[n], **r}
            append_record(run)
            found[sha[n]] = run
    print("\nAccelForge's model on our mapping (its evaluate_mapping, no search), energy uJ: whether the two models "
          "agree on the same mapping")
    print(f"{'layer':22} {'ours':>8} {'AF(ours)':>8} {'ratio':>7} {'AF best':>8}")
    agree = []
    for ly in layers:
        n, o = ly["name"], ours[ly["name"]]
        if o["status"] != "mapped":
            continue
        r = found.get(sha.get(n, ""))
        best = f"{af[n]['energy_pj'] / 1e6:8.1f}" if n in af else f"{'-':>8}"
        if r is None:
            print(f"{label(ly):22} {o['energy_pj'] / 1e6:8.1f} {'-':>8} {'-':>7} {best} "
                  f"{why.get(n, 'not evaluated: give --accelforge-python')}")
            continue
        ratio = o["energy_pj"] / r["energy_pj"]
        agree += [abs(ratio - 1) <= 0.01]
        print(f"{label(ly):22} {o['energy_pj'] / 1e6:8.1f} {r['energy_pj'] / 1e6:8.1f} {ratio:7.4f} {best}")
    if agree:
        print(f"the two models within 1 % on {sum(agree)} of {len(agree)} mappings")


# ----------------------------------------------------------------------------- table
def label(ly: dict) -> str:
    """A distinct layer's first name, and how many more layers share its shape."""
    more = len(ly["names"]) - 1
    return ly["name"] + (f" +{more}" if more else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="resnet18")
    ap.add_argument("--layers", default="", help="comma-separated layer names (default: every distinct layer)")
    ap.add_argument("--accelforge-python", default=os.environ.get("ACCELFORGE_PYTHON", ""))
    ap.add_argument("--cached", action="store_true",
                    help="AccelForge's searches from the record, none run (its model on our mappings still runs when "
                         "--accelforge-python is given: seconds per layer)")
    ap.add_argument("--pe-order", choices=("both", "example", "ours"), default="both",
                    help="nesting of AccelForge's per-PE scratchpads: as in its Eyeriss example (input, weight, output "
                         "outer to inner), as ours (weight, psum, ifmap), or both searched, the better kept (default)")
    ap.add_argument("--spec", choices=("ours", "issue22", "array"), default="ours",
                    help="AccelForge spec: ours (our hardware numbers, its Eyeriss example's spatial constraints), "
                         "array (the same numbers, our array's unroll axes: --ours array-space is our mapper in that "
                         "space), or issue 22's as reconstructed (weights may use the GLB, 16-bit partial sums, the "
                         "example's 384 B weight scratchpad energy; with --pe-order example)")
    ap.add_argument("--ours", choices=tuple(OUR_SPACES), default="flow",
                    help="our side: the flow's default (mapper=ruby_s on the array's dataflows), or our mapper in "
                         "AccelForge's space (af-space: mapper=pfm, the unrolling searched over p, q | c, r, s; "
                         "array-space: over the array's unroll axes, as --spec array)")
    ap.add_argument("--hardware", choices=("accelforge", "ours"), default="accelforge",
                    help="what our side models: the hardware AccelForge's spec describes (no MAC operand registers, "
                         "no forwarding of overlapping input windows between PEs, no network energy: the same "
                         "accounting, so the energies compare the searches; default), or eyeriss_ruby's own")
    ap.add_argument("--search", choices=("rtml", "placed"), default="rtml",
                    help="our mapper.search: rtml (seed 000's maximal tiles; default) or placed (also each maximal "
                         "tile with a loop over a dim its level does not store left to the levels above)")
    ap.add_argument("--beam", type=int, default=0,
                    help="our mapper.beam: partial schedules kept into the outermost on-chip level "
                         "(default: the preset's, 8)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run our side this many times, each in its own process, and take the median CPU time "
                         "per layer (default 1: one run, in this process)")
    args = ap.parse_args(argv)
    if not args.cached and not args.accelforge_python:
        raise SystemExit("give --accelforge-python (or set ACCELFORGE_PYTHON), or use --cached")
    if args.repeat < 1 or args.beam < 0:
        raise SystemExit("--repeat must be at least 1 and --beam at least 0 (0: the preset's)")
    verdicts = [v for net in args.network.split(",") for v in compare(args, net)]
    if len(args.network.split(",")) > 1:
        summarize(verdicts)
    return 0


def summarize(verdicts: list[dict]) -> None:
    """Issue 22's count over the networks together: a conv shape found in several (ResNet-18's
    layer3.0.conv2 is ResNet-50's layer3.1.conv2) is one distinct layer, and counts only if every
    measurement of it does (the CPU ratio is measured once per network)."""
    shapes: dict[tuple, list[dict]] = {}
    for v in verdicts:
        shapes.setdefault(v["shape"], []).append(v)
    names = {k: " = ".join(f"{v['network']} {v['name']}" for v in vs) for k, vs in shapes.items()}

    def every(key: str) -> list[tuple]:
        return [k for k, vs in shapes.items() if all(v[key] for v in vs)]

    close, below, fast = every("close"), every("below"), every("fast")
    print(f"\n{len(shapes)} distinct layers over the networks: energy within 5 % of AccelForge's: {len(close)} (at "
          f"most 5 % above: {len(below)}); CPU time >= 1000x less: {len(fast)}")
    for title, keys in (("within 5 % and >= 1000x", [k for k in close if k in fast]),
                        ("at most 5 % above and >= 1000x", [k for k in below if k in fast])):
        print(f"  {title}: {len(keys)}" + "".join(f"\n    {names[k]}" for k in keys))


def compare(args, network: str) -> list[dict]:
    """The comparison on one network (tables printed); per distinct layer both tools mapped, its
    verdicts: within 5 % (``close``), at most 5 % above (``below``), 1000x less CPU (``fast``)."""
    args = argparse.Namespace(**{**vars(args), "network": network})
    arch = compose(["arch=eyeriss_ruby"]).arch
    layers = distinct_layers(args.network, arch)
    if args.layers:
        want = args.layers.split(",")
        unknown = set(want) - {n for ly in layers for n in ly["names"]}
        if unknown:
            raise SystemExit(f"not an array layer of {args.network}: {', '.join(sorted(unknown))} "
                             f"(distinct: {', '.join(ly['name'] for ly in layers)})")
        layers = [ly for ly in layers if set(ly["names"]) & set(want)]  # a layer stands for its twins

    extra = (OUR_SPACES[args.ours] + (AF_HARDWARE if args.hardware == "accelforge" else ())
             + ((f"mapper.search={args.search}",) if args.search != "rtml" else ())
             + ((f"mapper.beam={args.beam}",) if args.beam else ()))
    print(f"our side: {args.network} on eyeriss_ruby, {' '.join(extra) or 'mapper=ruby_s'} (energy objective) ...",
          flush=True)
    ours, cpu = run_ours_repeated(args.network, extra, args.repeat)
    orders = ("example", "ours") if args.pe_order == "both" else (args.pe_order,)
    runs: dict[tuple[str, str], dict] = {}
    spec_of = {(ly["name"], o): hashlib.sha1((arch_yaml(arch, o, args.spec)
                                              + workload_yaml(ly["shape"], arch, args.spec)).encode())
               .hexdigest()[:12] for ly in layers for o in orders}
    for run in load_record():  # the latest recorded run of each layer and nesting with today's spec
        key = (run["layer"], run.get("pe_order"))
        if spec_of.get(key) == run.get("spec_sha1"):
            runs[key] = run
    if not args.cached:
        log = Path(tempfile.gettempdir()) / f"vs_accelforge_{os.getpid()}.log"
        for i, ly in enumerate(layers, 1):
            s = ly["shape"]
            for o in orders:
                print(f"[{i}/{len(layers)}] AccelForge on {ly['name']} (K={s['K']} C={s['C']} P={s['P']} Q={s['Q']} "
                      f"R={s['R']} S={s['S']} stride {s['stride']}), per-PE nesting {o} ...", flush=True)
                run = run_accelforge(args.accelforge_python, args.network, ly, arch, o, args.spec, log)
                append_record(run)
                runs[(ly["name"], o)] = run
                print(f"  {run['energy_pj'] / 1e6:.1f} uJ, {run['cycles']:,.0f} cycles, "
                      f"{run['cpu_s'] / 60:.1f} CPU min", flush=True)
    af: dict[str, dict] = {}  # per layer: the best nesting's run, CPU time of all the nestings searched
    for ly in layers:
        found = [runs[(ly["name"], o)] for o in orders if (ly["name"], o) in runs]
        if len(found) == len(orders):
            af[ly["name"]] = {**min(found, key=lambda r: r["energy_pj"]), "cpu_s": sum(r["cpu_s"] for r in found)}

    pes = arch.rows * arch.cols
    head = (f"{'layer':22} {'E ours':>8} {'E AF':>8} {'ours/AF':>7} {'bound':>8} {'b<=AF':>5} {'cyc ours':>10} "
            f"{'cyc AF':>10} {'util':>5} {'AF':>5} {'nest':>7} {'cpu ours':>8} {'cpu AF':>8} {'AF/ours':>8}")
    print(f"\n{args.network} on eyeriss_ruby, distinct layers (+n: more with that shape), energy objective; "
          f"energy uJ, CPU s; AF: AccelForge {ACCELFORGE_VERSION}, spec {args.spec}, per-PE scratchpads nested as "
          f"{' or '.join(orders)} (nest: the better; cpu AF: all searched)")
    print(head)
    for ly in layers:
        o = ours[ly["name"]]
        if o["status"] != "mapped":
            print(f"{label(ly):22} ours: {o['status']} ({o.get('reason', '')})")
            continue
        c_o = cpu.get(shape_key(ly["kernel"]), float("nan"))
        bound = o["bound"]["energy_pj"]
        r = af.get(ly["name"])
        if r:
            macs = o["macs"]
            u_af = macs / (pes * r["latency_by_component"]["mac"])
            ok = "yes" if bound <= r["energy_pj"] else "NO"
            print(f"{label(ly):22} {o['energy_pj'] / 1e6:8.1f} {r['energy_pj'] / 1e6:8.1f} "
                  f"{o['energy_pj'] / r['energy_pj']:7.3f} {bound / 1e6:8.1f} {ok:>5} {o['cycles']:10,} "
                  f"{r['cycles']:10,.0f} {o['utilization']:5.0%} {u_af:5.0%} {r['pe_order']:>7} {c_o:8.2f} "
                  f"{r['cpu_s']:8.0f} {r['cpu_s'] / c_o:8.0f}")
        else:
            print(f"{label(ly):22} {o['energy_pj'] / 1e6:8.1f} {'-':>8} {'-':>7} {bound / 1e6:8.1f} {'-':>5} "
                  f"{o['cycles']:10,} {'-':>10} {o['utilization']:5.0%} {'-':>5} {'-':>7} {c_o:8.2f} {'-':>8} {'-':>8}")
    both = [ly for ly in layers if ours[ly["name"]]["status"] == "mapped" and ly["name"] in af]
    close = fast = below = []
    if both:  # the layers both tools mapped, each distinct layer weighted by how many share its shape
        tot = {k: sum(f(ly) * len(ly["names"]) for ly in both) for k, f in (
            ("eo", lambda ly: ours[ly["name"]]["energy_pj"]), ("ea", lambda ly: af[ly["name"]]["energy_pj"]),
            ("co", lambda ly: ours[ly["name"]]["cycles"]), ("ca", lambda ly: af[ly["name"]]["cycles"]))}
        cpu_o = sum(cpu.get(shape_key(ly["kernel"]), 0) for ly in both)
        print(f"{len(both)} distinct layers ({sum(len(ly['names']) for ly in both)} layers): energy ours "
              f"{tot['eo'] / 1e6:,.1f} uJ, AF {tot['ea'] / 1e6:,.1f} uJ (ours/AF {tot['eo'] / tot['ea']:.3f}); "
              f"cycles ours {tot['co']:,}, AF {tot['ca']:,.0f}; CPU ours {cpu_o:.1f} s, "
              f"AF {sum(af[ly['name']]['cpu_s'] for ly in both) / 60:.1f} min (distinct layers once)")
        close = [ly for ly in both if abs(ours[ly["name"]]["energy_pj"] / af[ly["name"]]["energy_pj"] - 1) <= 0.05]
        fast = [ly for ly in both if af[ly["name"]]["cpu_s"] >= 1000 * cpu.get(shape_key(ly["kernel"]), float("inf"))]
        below = [ly for ly in both if ours[ly["name"]]["energy_pj"] <= 1.05 * af[ly["name"]]["energy_pj"]]
        print(f"energy within 5 % of AccelForge's: {len(close)} of {len(both)} distinct layers (at most 5 % above: "
              f"{len(below)}); CPU time >= 1000x less: {len(fast)}; both: "
              f"{', '.join(ly['name'] for ly in close if ly in fast) or 'none'}; at most 5 % above and 1000x: "
              f"{', '.join(ly['name'] for ly in below if ly in fast) or 'none'}")
    if args.hardware == "accelforge":
        cross_check(args, arch, layers, ours, af)
    levels = [lv.name for lv in from_conf(arch).levels[::-1]] + ["mac", "network"]
    print("\nenergy by level, uJ: ours / AF (network: our array hops, not modelled by AccelForge)")
    print(f"{'layer':22} " + " ".join(f"{n:>15}" for n in levels))
    for ly in layers:
        o, r = ours[ly["name"]], af.get(ly["name"])
        if o["status"] != "mapped" or not r:
            continue
        cells = [f"{o['energy_breakdown_pj'].get(n, 0) / 1e6:7.1f}/" + (
            f"{r['energy_by_component_pj'][n] / 1e6:<7.1f}" if n in r["energy_by_component_pj"] else f"{'-':7}")
            for n in levels]
        print(f"{label(ly):22} " + " ".join(f"{c:>15}" for c in cells))
    print("\nspatial unrolling (rows | columns), ours; AccelForge's mapping, outer to inner")
    for ly in layers:
        o, r = ours[ly["name"]], af.get(ly["name"])
        if o["status"] != "mapped":
            continue
        sp = " | ".join(",".join(f"{x['dim']}{x['factor']}" for x in axis) for axis in o["schedule"]["spatial"])
        print(f"{label(ly):22} ours {o['dataflow']} {sp}" + (f"\n{'':22} AF   {af_compact(r['mapping'])}" if r else ""))
    rows = [(n, v) for n, v in ISSUE.items() if any(n in ly["names"] for ly in layers)]
    if rows:
        print("\nissue 22 (AccelForge, reported; its spec is --spec issue22 --pe-order example): " + "; ".join(
            f"{n} {e} uJ, {c:,} cycles, {m} CPU min" for n, (e, c, m) in rows))
    return [{"network": network, "name": ly["name"], "shape": shape_key(ly["kernel"]), "close": ly in close,
             "below": ly in below, "fast": ly in fast} for ly in both]


if __name__ == "__main__":
    if sys.argv[1:2] == [OUR_SIDE]:  # a child of run_ours_repeated: the stages' messages, then one JSON line
        rows, cpu = run_ours(sys.argv[2], tuple(sys.argv[3:]))
        print(json.dumps({"rows": rows, "cpu": {json.dumps(list(k)): v for k, v in cpu.items()}}))
        raise SystemExit(0)
    raise SystemExit(main())
