"""AccelForge's side of :mod:`benchmarks.vs_accelforge`: its spec written from our config, its
mapper and its model run as processes of its own Python (>= 3.12), and the spec checked.

* :func:`arch_yaml` / :func:`workload_yaml`: the AccelForge arch and workload written from
  ``from_conf(arch)`` (no constant retyped): per action ``energy`` = our ``read_pj`` / ``write_pj``
  per access of ``width_bits`` (``bits_per_action = width_bits``), leakage and area 0 and explicit
  throughputs (``bandwidth_bits / width_bits`` actions per cycle), so no component model (CACTI) is
  called; sizes in bits; ``tensors: {keep: ...}`` the roles each level holds (weights bypass the
  GLB when ours do); inputs and weights at ``operand_bits``, partial sums at ``acc_bits``, the
  outputs in DRAM at ``operand_bits`` (an output's final value).
* :func:`spec_check`: the written spec read back field by field against our config, and what
  our config has that no AccelForge spec says (MAC operand registers, window forwarding between
  PEs, array network energy): a comparison is of the same hardware only when every row holds.
* :func:`search_process`: AccelForge's FFM search on one layer as a whole process
  (:data:`DRIVER`: import, spec, ``Spec.map_workload_to_arch``, one job), timed from outside
  (:func:`benchmarks.peers.timed`); :func:`evaluate_in_accelforge`: its model on given mappings
  (``Spec.evaluate_mapping``, no search); :func:`af_mapping_yaml`: our mapping as its loop tree.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from dataclasses import replace
from math import prod
from pathlib import Path

import yaml

from benchmarks import peers
from lego_build.mapping.hierarchy import from_conf, table52_pj
from lego_build.mapping.model import positions

ACCELFORGE_VERSION = "1.0.467"
ROLE_TENSOR = {"input": "Inputs", "weight": "Weights", "output": "Outputs"}
ROLE_TENSOR_INV = {t: r for r, t in ROLE_TENSOR.items()}
#: the driver runs single-threaded (one job), as ours
THREADS = {"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}

#: one layer's search, the whole process: ``python driver.py arch.yaml workload.yaml out.json``;
#: ``search_cpu_s`` (the search alone, in its process) is a labelled extra
DRIVER = r'''
import json, sys, time
import accelforge as af
af.set_n_parallel_jobs(1, print_message=False)
spec = af.Spec.from_yaml(sys.argv[1], sys.argv[2])
spec.mapper.metrics = af.mapper.Metrics.ENERGY
cpu0, wall0 = time.process_time(), time.perf_counter()
m = spec.map_workload_to_arch(print_progress=False)
out = {"search_cpu_s": time.process_time() - cpu0, "search_wall_s": time.perf_counter() - wall0,
       "version": getattr(af, "__version__", None), "energy_pj": float(m.energy()), "cycles": float(m.latency()),
       "energy_by_component_pj": {k: float(v) for k, v in m.energy(per_component=True).items()},
       "latency_by_component": {k: float(v) for k, v in m.latency(per_component=True).items()}}
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
            env = {**os.environ, **THREADS}
            rc = subprocess.run([python, str(t / "driver.py"), str(t / "jobs.json")], stdout=f,
                                stderr=subprocess.STDOUT, cwd=t, env=env).returncode
        if rc != 0:
            raise SystemExit(f"AccelForge's evaluate_mapping failed (exit {rc}); see {log}")
        return [json.loads(Path(job["out"]).read_text()) for job in listed]


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



def spec_sha(*texts: str) -> str:
    return hashlib.sha1("".join(texts).encode()).hexdigest()[:12]


def search_process(python: str, layer: dict, arch, pe_order: str, spec: str, log: Path) -> dict:
    """AccelForge's search on ``layer`` as one whole process: its result, ``cpu_s`` / ``wall_s`` of
    the process (import and spec included), ``search_cpu_s`` the search alone (in its process)."""
    a_yaml, w_yaml = arch_yaml(arch, pe_order, spec), workload_yaml(layer["shape"], arch, spec)
    with tempfile.TemporaryDirectory(prefix="af_") as tmp:
        t = Path(tmp)
        for name, text in (("driver.py", DRIVER), ("arch.yaml", a_yaml), ("workload.yaml", w_yaml)):
            (t / name).write_text(text)
        times = peers.timed([python, str(t / "driver.py"), str(t / "arch.yaml"), str(t / "workload.yaml"),
                             str(t / "out.json")], cwd=t, env=THREADS, log=log)  # it writes there
        result = json.loads((t / "out.json").read_text())
    result["mapping"] = af_compact(result["mapping"])
    return {"layer": layer["name"], "shape": layer["shape"], "pe_order": pe_order, "spec": spec,
            "accelforge": result.pop("version") or ACCELFORGE_VERSION, "spec_sha1": spec_sha(a_yaml, w_yaml),
            **times, **result}


class _AnyTag(yaml.SafeLoader):
    """Reads AccelForge's tagged YAML (``!Memory`` ...): a tagged mapping gets its tag as ``kind``."""


_AnyTag.add_multi_constructor("!", lambda loader, tag, node: {
    "kind": tag, **(loader.construct_mapping(node, deep=True) if isinstance(node, yaml.MappingNode) else {})})


def spec_check(arch, spec: str = "ours", pe_order: str = "ours", shape: dict | None = None) -> list[dict]:
    """The spec :func:`arch_yaml` (and :func:`workload_yaml`) wrote, read back field by field against
    our config: ``{"field", "ours", "accelforge", "same"}`` rows; the last rows are what our config
    has that the spec cannot say (then not the same hardware)."""
    doc = yaml.load(arch_yaml(arch, pe_order, spec), Loader=_AnyTag)
    nodes = {n["name"]: n for n in doc["arch"]["nodes"]}
    h = from_conf(arch)
    rows: list[dict] = []

    def row(field, ours, theirs):
        rows.append({"field": field, "ours": ours, "accelforge": theirs, "same": ours == theirs})

    for lv in h.levels:
        n = nodes.get(lv.name, {})
        acts = {a["name"]: a for a in n.get("actions", [])}
        size = n.get("size")
        row(f"{lv.name}.size bits", "inf" if lv.size_bytes is None else lv.size_bytes * 8,
            "inf" if size in ("inf", float("inf")) else size)
        row(f"{lv.name}.holds", sorted(ROLE_TENSOR[r] for r in lv.roles),
            sorted(t.strip() for t in str(n.get("tensors", {}).get("keep", "")).split("|") if t.strip()))
        row(f"{lv.name}.may hold others", False, "may_keep" in n.get("tensors", {}))
        for a, pj in (("read", lv.read_pj), ("write", lv.write_pj)):
            act = acts.get(a, {})
            row(f"{lv.name}.{a} pJ per {lv.width_bits} bits", pj, act.get("energy"))
            row(f"{lv.name}.{a} bits per action", lv.width_bits, act.get("bits_per_action"))
            row(f"{lv.name}.{a} actions per cycle", float("inf") if lv.bandwidth_bits is None
                else lv.bandwidth_bits / lv.width_bits, float(act.get("throughput", "nan")))
    spatial = {s["name"]: s["fanout"] for s in nodes["PE"]["spatial"]}
    row("PEs (columns, rows)", (arch.cols, arch.rows), (spatial.get("cols"), spatial.get("rows")))
    row("MAC pJ", h.mac_pj, nodes["mac"]["actions"][0]["energy"])
    w = yaml.safe_load(workload_yaml(shape or {"K": 1, "C": 1, "P": 1, "Q": 1, "R": 1, "S": 1, "stride": 1},
                                     arch, spec))["workload"]["bits_per_value"]
    row("input, weight bits", (arch.operand_bits, arch.operand_bits), (w["Inputs"], w["Weights"]))
    row("partial sum bits", arch.acc_bits, w["Outputs"])
    dram = nodes[h.levels[-1].name].get("bits_per_value", {})
    row("final outputs in DRAM, bits", arch.operand_bits, dram.get("Outputs"))
    # what our config describes and no AccelForge spec says: the same hardware only without them
    row("MAC operand registers (no re-read of an unchanged operand)", h.operand_reuse, False)
    row("window forwarding between PEs (diagonal input reuse)", h.window_forwarding, False)
    row("array network pJ per hop", h.hop_pj, 0.0)
    return rows
