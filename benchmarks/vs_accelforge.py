"""lego_build's mapper against AccelForge 1.0.467's (FFM) per layer: same hardware, whole processes.

    python -m benchmarks.vs_accelforge [--network resnet18[,resnet50]] [--layers NAME,...] [--repeat N]
                                       [--accelforge-python PATH] [--cached] [--pe-order both]
                                       [--spec ours|array|issue22] [--ours flow|af-space|array-space]
                                       [--hardware accelforge|ours] [--search rtml|placed] [--beam N] [--quick]

The hardware: ``arch=eyeriss_ruby`` as the config composes it (16-bit operands, 32-bit partial
sums, Table 5.2 energies, the scratchpads, GLB and DRAM of ``arch.memory``) with, by default
(``--hardware accelforge``), the three features no AccelForge spec can say turned off in our config
(:data:`AF_HARDWARE`: MAC operand registers, window forwarding between PEs, array network energy).
AccelForge's spec is written from that composed config (:mod:`benchmarks.accelforge_side`) and
checked twice: field by field (:func:`benchmarks.accelforge_side.spec_check`), and by AccelForge's
own model pricing our chosen mapping of each layer (``evaluate_mapping``), its energy and cycles
beside ours, per layer. ``--hardware ours`` keeps eyeriss_ruby's own features: the spec check then
says which rows differ and no same-hardware ratio is claimed. ``--spec issue22`` (issue 22's
reconstructed spec: 16-bit partial sums, weights may stay in the GLB, a 192-word weight
scratchpad's energy) is another hardware, reported as such.

The timing, per distinct layer, in one sitting on one machine: ours is ``doit map`` of that layer
(``workload=conv2d`` with the layer's shape) in a fresh process and design directory (imports,
composition, ``analyze``, ``graph``, ``optimize``, ``map``), AccelForge's its driver process (import,
spec, FFM search, one job; :func:`benchmarks.accelforge_side.search_process`); CPU time is the
user + system time of each process tree, wall time the clock around it (:mod:`benchmarks.peers`),
medians over ``--repeat`` interleaved runs. FFM keeps the per-PE scratchpads nested in one order, so
``--pe-order both`` (default) searches two nestings, each a process; the headline ratio is the
winning nesting's process alone (its repeats re-run only it), the two nestings' sum is shown
beside it, labelled. In-process figures (our ``best_dataflow`` per layer in a warm multi-layer
process, AccelForge's search call in its process) are a labelled extra. ``--cached``: AccelForge's
figures from the results file (labelled "recorded, not this sitting"; no same-sitting ratio).

The energy count is two-sided: a layer is within 5 % when ours is neither more than 5 % above nor
more than 5 % below AccelForge's optimum. Below it, the tools searched different spaces (AccelForge's
model prices our mapping near ours, its FFM did not find it); our mapper's lower bound above
AccelForge's optimum says the reverse. Writes ``benchmarks/results/vs_accelforge.json``.
"""
from __future__ import annotations

if __name__ == "__main__" and not __package__:  # python benchmarks/vs_accelforge.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.vs_accelforge)

import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import harness, peers
from benchmarks.accelforge_side import (
    ACCELFORGE_VERSION,
    af_mapping_yaml,
    arch_yaml,
    evaluate_in_accelforge,
    search_process,
    spec_check,
    spec_sha,
    workload_yaml,
)
from lego_build.analysis.lowering import lower
from lego_build.analysis.networks import network
from lego_build.mapping import stage as map_stage
from lego_build.runtime.atomic import read_json

RESULTS = harness.RESULTS / "vs_accelforge.json"
PEER = (f"AccelForge {ACCELFORGE_VERSION} (pip accelforge), FFM mapper, energy objective, one job; spec written "
        "from our config (benchmarks/accelforge_side.py)")
#: ``--ours af-space``: our mapper in AccelForge's Eyeriss example's space (the unrolling searched with
#: output rows and columns on the 14-wide side, input channels and the filter on the 12-wide side)
AF_SPACE = ("mapper=pfm", "mapper.unroll=search", "arch.unroll.axes=[[ic,kh,kw],[oh,ow]]", "arch.unroll.required=[]")
#: ``--ours array-space``: the unrolling searched over the array's own unroll axes (``--spec array``'s)
ARRAY_SPACE = ("mapper=pfm", "mapper.unroll=search", "arch.unroll.required=[]")
OUR_SPACES = {"flow": (), "af-space": AF_SPACE, "array-space": ARRAY_SPACE}
#: ``--hardware accelforge``: eyeriss_ruby without what no AccelForge spec says: a MAC reads its operands
#: every cycle, the GLB serves every scratchpad fill (no forwarding of overlapping windows), no hop energy
AF_HARDWARE = ("arch.operand_registers=false", "arch.window_forwarding=false", "arch.energy.hop_pj=0")
HARDWARE = {"accelforge": AF_HARDWARE, "ours": ()}
#: ``--quick`` (the test's run): one small 1x1 layer, one nesting, one repeat
QUICK_LAYER = "layer2.0.downsample.0"


# ----------------------------------------------------------------------------- our side
def shape_key(kernel) -> tuple:
    """A conv layer's loop bounds and stride (a kernel read back and one built by ``network`` compare equal)."""
    names = [d.name for d in kernel.dims]
    x = next(t for t in kernel.tensors if t.role == "in")
    return tuple(d.bound for d in kernel.dims) + (x.matrix[2][names.index("oh")],)  # the input's H row: oh's stride


def distinct_layers(net: str, arch) -> list[dict]:
    """The network's distinct array layers (named by the first, ``names`` all), with their conv shape
    (AccelForge's ranks) and the ``workload=conv2d`` overrides that make that layer alone."""
    seen, out = {}, []
    for layer in network(net, 1, arch.operand_bits):
        if layer.kernel is None or (k := lower(layer.kernel, arch.family)) is None:
            continue
        if k in seen:
            seen[k]["names"].append(layer.name)
            continue
        dims = {d.name: d.bound for d in k.dims}
        if dims["n"] != 1 or dims["g"] != 1:
            continue  # batch 1, no grouped layers in the ResNets
        stride = shape_key(k)[-1]
        x = next(t for t in k.tensors if t.role == "in")
        conv = {"in_ch": dims["ic"], "out_ch": dims["oc"], "in_h": x.shape[2], "in_w": x.shape[3], "kh": dims["kh"],
                "kw": dims["kw"], "stride": stride, "pad": -x.bias[2]}
        seen[k] = {"name": layer.name, "names": [layer.name], "kernel": k, "conv": conv, "shape": {
            "K": dims["oc"], "C": dims["ic"], "P": dims["oh"], "Q": dims["ow"], "R": dims["kh"], "S": dims["kw"],
            "stride": stride}}
        out.append(seen[k])
    return out


def our_overrides(extra: tuple[str, ...], layer: dict | None = None, net: str = "") -> list[str]:
    """``doit map``'s overrides: eyeriss_ruby, the layer alone (or the network), the array's operand width."""
    work = [f"workload.{k}={v}" for k, v in layer["conv"].items()] if layer else []
    arch_bits = harness.compose(["arch=eyeriss_ruby"]).arch.operand_bits  # the preset's default is 8 bits
    return ["arch=eyeriss_ruby", f"workload={'conv2d' if layer else net}", *work, f"workload.bits={arch_bits}",
            "mapper=ruby_s", *extra]


def our_process(layer: dict, extra: tuple[str, ...], log: Path) -> tuple[dict, dict]:
    """Our side of one layer as a whole process: (its times, its mapping.json row)."""
    times, doc = peers.doit_map(our_overrides(extra, layer), log)
    rows = [r for r in doc["layers"] if r.get("macs")] or doc["layers"]
    return times, rows[0]


def in_process(net: str, extra: tuple[str, ...]) -> dict:
    """The labelled extra: our process time of ``mapping.stage.best_dataflow`` per distinct layer (all
    its dataflows searched and costed), in one warm process mapping the whole network."""
    cfg = harness.compose(our_overrides(extra, net=net))
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
            harness.run_stages(cfg, "map", tmp)
            rows = {r["name"]: r for r in read_json(Path(tmp) / "mapping.json")["layers"]}
    finally:
        map_stage.best_dataflow = real
    return {"cpu": cpu, "rows": rows}


# ----------------------------------------------------------------------------- AccelForge's side
def recorded_peer() -> dict:
    """AccelForge's layers in the results file (``--cached``), by spec hash."""
    if not RESULTS.exists():
        return {}
    peer = (json.loads(RESULTS.read_text()).get("peer") or {})
    return {r["spec_sha1"]: r for r in peer.get("layers", {}).values() if "spec_sha1" in r}


def accelforge_layer(args, ly: dict, arch, orders: tuple[str, ...], log: Path, first: bool, won: dict) -> None:
    """Run AccelForge's search on ``ly`` (every nesting on the first repeat, then the winner's only);
    ``won[name]``: the winning nesting's run with ``runs`` (its processes' times) and ``nestings``."""
    name = ly["name"]
    todo = orders if first else (won[name]["pe_order"],)
    for o in todo:
        s = ly["shape"]
        print(f"  AccelForge on {name} (K={s['K']} C={s['C']} P={s['P']} Q={s['Q']} R={s['R']} S={s['S']} stride "
              f"{s['stride']}), per-PE nesting {o} ...", flush=True)
        run = search_process(args.accelforge_python, ly, arch, o, args.spec, log)
        print(f"    {run['energy_pj'] / 1e6:.1f} uJ, {run['cycles']:,.0f} cycles, process {run['cpu_s']:.1f} CPU s",
              flush=True)
        if first:
            won.setdefault(name, {"nestings": {}})["nestings"][o] = run
        else:
            won[name]["runs"].append({"cpu_s": run["cpu_s"], "wall_s": run["wall_s"]})
    if first:
        nest = won[name]["nestings"]
        best = min(nest.values(), key=lambda r: r["energy_pj"])
        won[name] = {**best, "nestings": {o: {k: r[k] for k in ("energy_pj", "cpu_s", "wall_s", "search_cpu_s")}
                                          for o, r in nest.items()},
                     "runs": [{"cpu_s": best["cpu_s"], "wall_s": best["wall_s"]}]}


def cross_check(args, arch, layers: list[dict], rows: dict, log: Path) -> dict:
    """AccelForge's own model (``evaluate_mapping``) on our mapping of each layer, by name:
    ``{"energy_pj", "cycles", ...}`` or ``{"why": ...}`` when our mapping has no AccelForge tree."""
    texts, out = {}, {}
    for ly in layers:
        row = rows[ly["name"]]
        if row["status"] != "mapped":
            continue
        y, reason = af_mapping_yaml(row, arch, [d.name for d in ly["kernel"].dims])
        if reason:
            out[ly["name"]] = {"why": reason}
        else:
            texts[ly["name"]] = (arch_yaml(arch, "ours", args.spec), workload_yaml(ly["shape"], arch, args.spec), y)
    if texts and args.accelforge_python:
        print(f"AccelForge's model on our mappings of {len(texts)} layers ...", flush=True)
        for n, r in zip(texts, evaluate_in_accelforge(args.accelforge_python, list(texts.values()), log)):
            out[n] = {**r, "spec_sha1": spec_sha(*texts[n])}
    return out


# ----------------------------------------------------------------------------- the comparison
def label(ly: dict) -> str:
    """A distinct layer's first name, and how many more layers share its shape."""
    more = len(ly["names"]) - 1
    return ly["name"] + (f" +{more}" if more else "")


def verdict(ours: float, bound: float, af: float) -> str:
    """Two-sided: ``within`` 5 % either way; ``below``: ours more than 5 % under AccelForge's optimum
    (different spaces: a mapping its search did not reach); ``above``: more than 5 % over it, ``above,
    outside ours`` when AccelForge's optimum is under our lower bound (its mapping is outside our space)."""
    r = ours / af
    if abs(r - 1) <= 0.05:
        return "within"
    if r < 1:
        return "below"
    return "above, outside ours" if af < bound else "above"


def compare(args, net: str) -> list[dict]:
    """The comparison on one network, per space of ours (``--ours``): prints the tables, returns the
    per-layer figures. AccelForge searches each layer once, whatever our spaces."""
    hw = HARDWARE[args.hardware]
    arch = harness.compose(["arch=eyeriss_ruby", *hw]).arch
    layers = distinct_layers(net, arch)
    want = [QUICK_LAYER] if args.quick and not args.layers else [n for n in args.layers.split(",") if n]
    if want:
        unknown = set(want) - {n for ly in layers for n in ly["names"]}
        if unknown:
            raise SystemExit(f"not an array layer of {net}: {', '.join(sorted(unknown))} "
                             f"(distinct: {', '.join(ly['name'] for ly in layers)})")
        layers = [ly for ly in layers if set(ly["names"]) & set(want)]  # a layer stands for its twins
    check = spec_check(arch, args.spec, "ours", layers[0]["shape"])
    differ = [r for r in check if not r["same"]]
    same_hw = not differ
    print(f"same hardware (spec read back against our config): {len(check) - len(differ)} of {len(check)} fields" +
          "".join(f"\n  DIFFERENT {r['field']}: ours {r['ours']}, AccelForge {r['accelforge']}" for r in differ))
    spaces = [sp for sp in args.ours.split(",") if sp]
    unknown = set(spaces) - set(OUR_SPACES)
    if unknown or not spaces:
        raise SystemExit(f"--ours: one or more of {', '.join(OUR_SPACES)} (comma-separated), not {args.ours!r}")
    extra = {sp: (OUR_SPACES[sp] + hw + ((f"mapper.search={args.search}",) if args.search != "rtml" else ())
                  + ((f"mapper.beam={args.beam}",) if args.beam else ())) for sp in spaces}
    orders = ("example", "ours") if args.pe_order == "both" else (args.pe_order,)
    log = Path(tempfile.gettempdir()) / f"vs_accelforge_{os.getpid()}.log"
    live = not args.cached
    ours_runs: dict[tuple[str, str], list] = {}
    rows: dict[str, dict[str, dict]] = {sp: {} for sp in spaces}
    won: dict[str, dict] = {}
    for rep in range(args.repeat):  # interleaved: both sides see the same machine load
        for i, ly in enumerate(layers, 1):
            for sp in spaces:
                print(f"[run {rep + 1}/{args.repeat}, layer {i}/{len(layers)}] ours ({sp}): doit map {ly['name']} ...",
                      flush=True)
                t, row = our_process(ly, extra[sp], log)
                ours_runs.setdefault((sp, ly["name"]), []).append(t)
                rows[sp].setdefault(ly["name"], row)
            if live:  # AccelForge's search does not depend on our space: once per layer
                accelforge_layer(args, ly, arch, orders, log, rep == 0, won)
    if not live:  # the results file's runs of today's spec: recorded, not this sitting
        recorded = recorded_peer()
        for ly in layers:
            shas = {spec_sha(arch_yaml(arch, o, args.spec), workload_yaml(ly["shape"], arch, args.spec)): o
                    for o in orders}
            found = [recorded[s] for s in shas if s in recorded]
            if found:
                won[ly["name"]] = min(found, key=lambda r: r["energy_pj"])
    out = []
    for sp in spaces:
        inproc = {"cpu": {}, "rows": {}} if args.quick else in_process(net, extra[sp])  # the test's run: none
        evals = cross_check(args, arch, layers, rows[sp], log)
        runs = {n: r for (s, n), r in ours_runs.items() if s == sp}
        out.append(table(args, net, sp, layers, rows[sp], runs, won, evals, inproc, same_hw, check, live))
    return out


def table(args, net, space, layers, rows, ours_runs, won, evals, inproc, same_hw, check, live) -> dict:
    sitting = "this sitting" if live else "recorded, not this sitting"
    print(f"\n{net} on eyeriss_ruby, ours: {space} ({args.hardware} hardware, spec {args.spec}), energy uJ; "
          f"CPU and wall: whole "
          f"processes, medians of {args.repeat}; AccelForge {ACCELFORGE_VERSION} ({sitting}), the winning nesting")
    print(f"{'layer':22} {'E ours':>8} {'E AF':>8} {'ours/AF':>7} {'bound':>8} {'verdict':>9} {'AF(ours)':>8} "
          f"{'cyc AF(o)':>10} "
          f"{'cyc ours':>10} {'cyc AF':>10} {'cpu ours':>8} {'cpu AF':>8} {'CPU x':>7} {'wall x':>7} {'AF both':>8}")
    out = []
    for ly in layers:
        n, o = ly["name"], rows[ly["name"]]
        mine = peers.summary(ours_runs[n])
        net_row = inproc["rows"].get(n, {})
        fig = {"layer": n, "names": ly["names"], "shape": ly["shape"], "status": o["status"],
               "ours": {k: o.get(k) for k in ("energy_pj", "cycles", "utilization", "dataflow")} | {
                   "bound_pj": o.get("bound", {}).get("energy_pj"), "whole_process": mine,
                   "in_process_best_dataflow_cpu_s": inproc["cpu"].get(shape_key(ly["kernel"])),
                   "same_as_network_run": net_row.get("energy_pj") == o.get("energy_pj") if net_row else None}}
        if o["status"] != "mapped":
            print(f"{label(ly):22} ours: {o['status']} ({o.get('reason', '')})")
            out.append(fig)
            continue
        r, ev = won.get(n), evals.get(n, {})
        af_o = (f"{ev['energy_pj'] / 1e6:8.1f} {ev['cycles']:10,.0f}" if "energy_pj" in ev else f"{'-':>8} {'-':>10}")
        if "energy_pj" in ev:
            fig["accelforge_on_our_mapping"] = {"energy_pj": ev["energy_pj"], "cycles": ev["cycles"],
                                                "energy_ratio": o["energy_pj"] / ev["energy_pj"],
                                                "cycles_ratio": o["cycles"] / ev["cycles"]}
        elif "why" in ev:
            fig["accelforge_on_our_mapping"] = {"why": ev["why"]}
        bound = o["bound"]["energy_pj"]
        if not r:
            print(f"{label(ly):22} {o['energy_pj'] / 1e6:8.1f} {'-':>8} {'-':>7} {bound / 1e6:8.1f} {'-':>9} {af_o} "
                  f"{o['cycles']:10,} {'-':>10} {mine['cpu_s']:8.2f}")
            out.append(fig)
            continue
        if "runs" in r:  # this sitting
            theirs, both = peers.summary(r["runs"]), sum(x["cpu_s"] for x in r["nestings"].values())
        else:  # recorded
            theirs, both = r["whole_process"], r["both_nestings_cpu_s"]
        v = verdict(o["energy_pj"], bound, r["energy_pj"])
        fig.update(verdict=v, energy_ratio=o["energy_pj"] / r["energy_pj"],
                   cpu_x=peers.ratio(theirs["cpu_s"], mine["cpu_s"]),
                   wall_x=peers.ratio(theirs["wall_s"], mine["wall_s"]),
                   cpu_x_both_nestings=peers.ratio(both, mine["cpu_s"]),
                   accelforge={"energy_pj": r["energy_pj"], "cycles": r["cycles"], "pe_order": r["pe_order"],
                               "whole_process": theirs, "both_nestings_cpu_s": both, "sitting": sitting,
                               "spec_sha1": r["spec_sha1"], "mapping": r.get("mapping"),
                               "in_process_search_cpu_s": r.get("search_cpu_s")})
        print(f"{label(ly):22} {o['energy_pj'] / 1e6:8.1f} {r['energy_pj'] / 1e6:8.1f} {fig['energy_ratio']:7.3f} "
              f"{bound / 1e6:8.1f} {v.split(',')[0]:>9} {af_o} {o['cycles']:10,} {r['cycles']:10,.0f} "
              f"{mine['cpu_s']:8.2f} {theirs['cpu_s']:8.1f} {fig['cpu_x']:6.0f}x {fig['wall_x']:6.0f}x {both:8.1f}")
        out.append(fig)
    for f in out:
        if "why" in f.get("accelforge_on_our_mapping", {}):
            print(f"  AF(ours) of {f['layer']}: none, {f['accelforge_on_our_mapping']['why']}")
    return summarize_network(net, space, out, same_hw, check, live)


def summarize_network(net, space, out, same_hw, check, live) -> dict:
    both = [f for f in out if "verdict" in f]
    counts = {v: sum(f["verdict"].startswith(v) for f in both) for v in ("within", "below", "above")}
    agree = [f for f in out if "energy_ratio" in f.get("accelforge_on_our_mapping", {})]
    ok = [f for f in agree if abs(f["accelforge_on_our_mapping"]["energy_ratio"] - 1) <= 0.01]
    ok_c = [f for f in agree if abs(f["accelforge_on_our_mapping"]["cycles_ratio"] - 1) <= 0.01]
    head = {"spec fields equal to our config": f"{sum(r['same'] for r in check)} of {len(check)}",
            "same hardware": same_hw,
            "AccelForge's model on our mapping within 1 % of ours (energy)": f"{len(ok)} of {len(agree)}",
            "AccelForge's model on our mapping within 1 % of ours (cycles)": f"{len(ok_c)} of {len(agree)}",
            "our mappings with no AccelForge loop tree": sum("why" in f.get("accelforge_on_our_mapping", {})
                                                             for f in out),
            "layers within 5 % of AccelForge's optimum, either way": f"{counts['within']} of {len(both)}",
            "more than 5 % below (different spaces)": counts["below"], "more than 5 % above": counts["above"]}
    if both:
        cx, wx = [f["cpu_x"] for f in both], [f["wall_x"] for f in both]
        key = "" if live else " (AccelForge recorded, not this sitting)"
        head |= {f"CPU time AccelForge / ours, whole processes, median over layers{key}":
                 round(statistics.median(cx), 1),
                 f"CPU time ratio range{key}": f"{min(cx):.0f}-{max(cx):.0f}x",
                 f"wall time AccelForge / ours, whole processes, median over layers{key}":
                 round(statistics.median(wx), 1),
                 "CPU time ratio with both nestings summed (labelled extra)":
                     round(statistics.median(f["cpu_x_both_nestings"] for f in both), 1)}
    for k, v in head.items():
        print(f"  {k}: {v}")
    for f in both:
        if f["verdict"] == "below":
            a = f.get("accelforge_on_our_mapping", {})
            print(f"  {f['layer']}: {f['energy_ratio']:.3f} of AccelForge's optimum: the tools searched different "
                  f"spaces" + (f" (AccelForge's model prices our mapping at {a['energy_ratio']:.3f} of ours)"
                               if "energy_ratio" in a else ""))
    if not same_hw:
        print("  NOT the same hardware (spec check above): the energies compare different machines")
    return {"network": net, "ours": space, "headline": head, "layers": out}


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--network", default="resnet18")
    ap.add_argument("--layers", default="", help="comma-separated layer names (default: every distinct layer)")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved whole-process runs of each side (median)")
    ap.add_argument("--accelforge-python", default=os.environ.get("ACCELFORGE_PYTHON", ""))
    ap.add_argument("--cached", action="store_true",
                    help="AccelForge's searches from the results file (recorded, not this sitting); its model on our "
                         "mappings still runs when --accelforge-python is given")
    ap.add_argument("--pe-order", choices=("both", "example", "ours"), default="both",
                    help="nesting of AccelForge's per-PE scratchpads: its Eyeriss example's, ours, or both (default)")
    ap.add_argument("--spec", choices=("ours", "issue22", "array"), default="ours",
                    help="AccelForge's spatial constraints: its Eyeriss example's (ours), our array's unroll axes "
                         "(array), or issue 22's reconstructed spec (another hardware)")
    ap.add_argument("--ours", default="flow",
                    help="our side, comma-separated (AccelForge searched once for all): flow (the product's "
                         "default), af-space (pfm in AccelForge's unrolling space), array-space (our array's axes)")
    ap.add_argument("--hardware", choices=tuple(HARDWARE), default="accelforge",
                    help="accelforge: eyeriss_ruby without what no AccelForge spec says (default); ours: as is")
    ap.add_argument("--search", choices=("rtml", "placed"), default="rtml")
    ap.add_argument("--beam", type=int, default=0, help="our mapper.beam (default: the preset's)")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeat, args.pe_order = 1, ("ours" if args.pe_order == "both" else args.pe_order)
    if not args.cached and not args.accelforge_python:
        raise SystemExit("give --accelforge-python (or set ACCELFORGE_PYTHON), or use --cached")
    if args.repeat < 1 or args.beam < 0:
        raise SystemExit("--repeat must be at least 1 and --beam at least 0 (0: the preset's)")
    load = {"start": peers.load()}
    results = [r for net in args.network.split(",") for r in compare(args, net)]
    load["end"] = peers.load()
    if args.cached and args.out is None:
        return 0  # a recorded peer: the results file keeps the sitting it was measured in
    peer = {"source": PEER, "sitting": "recorded, not this sitting" if args.cached else "this sitting",
            "layers": {f"{r['network']}/{f['layer']}": f["accelforge"] for r in results for f in r["layers"]
                       if "accelforge" in f}}
    figures = {"headline": results[0]["headline"] if len(results) == 1 else
               {f"{r['network']}, ours {r['ours']}: {k}": v for r in results for k, v in r["headline"].items()},
               "tables": [harness.table(f"{r['network']}, ours {r['ours']}, per distinct layer",
                                        ["layer", "energy ours / AccelForge", "verdict", "CPU x", "wall x",
                                         "AccelForge's model on our mapping / ours"],
                                        [[f["layer"], round(f.get("energy_ratio", float("nan")), 3), f.get("verdict"),
                                          round(f.get("cpu_x", float("nan")), 1),
                                          round(f.get("wall_x", float("nan")), 1),
                                          f.get("accelforge_on_our_mapping", {}).get("energy_ratio")]
                                         for f in r["layers"]]) for r in results],
               "networks": results, "load_average": load, "spec_check": spec_check(harness.compose(["arch=eyeriss_ruby",
                                                                              *HARDWARE[args.hardware]]).arch,
                                                             args.spec, "ours")}
    harness.write_results("vs_accelforge", figures, peer=peer, argv=argv, quick=args.quick, out=args.out,
                          cache="warm", title="AccelForge 1.0.467 vs lego_build's map stage per ResNet layer, "
                                              "whole processes, same hardware checked",
                          notes="CPU: user + system of each whole process tree, medians of interleaved runs in one "
                                "sitting; AccelForge's numba caches as left by earlier runs on this machine (warm); "
                                "our cache root fresh per run. The headline ratio is the winning per-PE nesting's "
                                "process; both nestings summed is the labelled extra.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
