"""Ruby-S against PFM (seed 002 §V): ResNet-50 on the Eyeriss-like 14 x 12 array, EDP per layer.

    python benchmarks/ruby.py [--search rtml|random] [--network resnet50]

The whole-network figure is the product's own path: ``doit map arch=eyeriss_ruby
workload=<network> mapper=pfm|ruby_s mapper.objective=edp`` (the map stage, run in process:
the generated array's dataflows with their link checks, the paper's Eyeriss-like PE
scratchpads, 128 KiB GLB, weights bypassing it, Table 5.2 energies). The array runs a partial
last spatial tile; PFM's space holds only perfect spatial factors, so a dataflow whose unrolling
does not divide a layer's dim (the 12-row ``ic`` of the 1x1 layers) is not PFM's, and Ruby-S's
is. Prints per distinct layer the dataflow, utilisation and EDP of both and the whole network's
energy, cycles and EDP (total energy x total cycles, layers weighted by their count).

Then the paper's own mapspace, which the array cannot run as a whole: the unrolling free over
filter rows (KH, always unrolled) and input channels on the 12 rows, output rows (OH, always
unrolled) and output channels on the 14 columns, for AlexNet layer 2 (27 x 27 outputs, 48 ->
128 channels, 5 x 5: one group of the original two-GPU network). Paper: whole network -14 %
EDP (energy +2 %, cycles -17 %); AlexNet layer 2 utilisation 71 % (PFM) vs 85 % (Ruby-S).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from lego_build import compose, run_stage
from lego_build.analysis.kernels import conv2d
from lego_build.mapping.hierarchy import from_conf
from lego_build.mapping.mapspace import Mapspace, Rules
from lego_build.mapping.model import Model
from lego_build.mapping.searches import make_search
from lego_build.runtime.artifacts import read_artifact

AXES = (("kh", "ic"), ("oh", "oc"))  # row stationary: filter rows x channels | output rows x filters
REQUIRED = ("kh", "oh")  # row stationary: filter rows on the rows, output rows on the columns


def best(kernel, arch, space: str, search: str):
    out = kernel.output
    kernel = replace(kernel, tensors=tuple(replace(t, bits=arch.acc_bits) if t is out else t for t in kernel.tensors))
    rules = Rules(axes=AXES, max_spatial=12, required=REQUIRED)
    ms = Mapspace(Model(kernel, from_conf(arch), arch.operand_bits), space, rules)
    found = make_search(search, ms, "edp").run()
    if found is None:
        raise SystemExit(f"{kernel}: no mapping in {space}")
    return found


def flow(network: str, mapper: str, search: str, work: Path):
    """``doit map`` of ``network`` on eyeriss_ruby under ``mapper`` (EDP): mapping.json's doc."""
    cfg = compose(["arch=eyeriss_ruby", f"workload={network}", f"mapper={mapper}", "mapper.objective=edp",
                   f"mapper.search={search}"])
    for stage in ("analyze", "graph", "optimize", "map"):
        run_stage(stage, cfg, work)
    return read_artifact(work, "mapping.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--search", default="rtml", choices=("rtml", "random"))
    ap.add_argument("--network", default="resnet50")
    args = ap.parse_args(argv)
    arch = compose(["arch=eyeriss_ruby"]).arch
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        docs = {m: flow(args.network, m, args.search, Path(tmp) / m) for m in ("pfm", "ruby_s")}
    rows = {m: {e["name"]: e for e in d.layers if e["status"] == "mapped"} for m, d in docs.items()}
    seen, distinct = set(), []
    for e in docs["ruby_s"].layers:  # one row per distinct layer (same shape: same mapping)
        key = tuple(sorted(e.get("dims", {}).items()))
        if e["status"] == "mapped" and key not in seen:
            seen.add(key)
            distinct.append(e["name"])
    print(f"{args.network} on eyeriss_ruby (14 x 12) in the build flow (doit map mapper=pfm|ruby_s "
          f"mapper.objective=edp), {args.search} search; {len(distinct)} distinct layers")
    print(f"{'layer':28} {'dataflow PFM':>13} {'Ruby-S':>11} {'util PFM':>8} {'Ruby-S':>7} {'EDP PFM':>11} "
          f"{'Ruby-S':>11} {'change':>8}")
    for name in distinct:
        p, r = rows["pfm"].get(name), rows["ruby_s"][name]
        if p is None:
            print(f"{name[:28]:28} {'unmappable':>13} {r['dataflow']:>11}")
            continue
        ep, er = p["energy_pj"] * p["cycles"], r["energy_pj"] * r["cycles"]
        print(f"{name[:28]:28} {p['dataflow']:>13} {r['dataflow']:>11} {p['utilization']:8.0%} {r['utilization']:7.0%} "
              f"{ep:11.4g} {er:11.4g} {(er / ep - 1) * 100:+7.1f}%")
    (tp, tr) = (docs[m].totals for m in ("pfm", "ruby_s"))
    if tp["layers_unmappable"]:
        print(f"PFM leaves {tp['layers_unmappable']} layers unmappable: the whole-network figures are not comparable")
    de, dc = tr["energy_pj"] / tp["energy_pj"] - 1, tr["cycles"] / tp["cycles"] - 1
    print(f"\nwhole network (build flow): PFM {tp['energy_pj'] / 1e6:,.0f} uJ, {tp['cycles']:,} cycles; Ruby-S "
          f"{tr['energy_pj'] / 1e6:,.0f} uJ, {tr['cycles']:,} cycles: energy {de * 100:+.1f} %, "
          f"cycles {dc * 100:+.1f} %, "
          f"EDP {((1 + de) * (1 + dc) - 1) * 100:+.1f} %  (paper: energy +2 %, cycles -17 %, EDP -14 %)")
    alex = conv2d(1, 48, 128, 27, 27, 5, 5, pad=2, bits=arch.operand_bits)
    a = {space: best(alex, arch, space, args.search) for space in ("pfm", "ruby-s")}
    print("\nthe paper's free unrolling (KH,IC | OH,OC; not a generated array):")
    for space, (s, ev) in a.items():
        print(f"AlexNet layer 2, {space:6}: utilisation {ev.utilization:.0%}, unrolling "
              f"{' | '.join(','.join(f'{d}{p}' for d, p in axis) for axis in s.spatial)}, "
              f"EDP {ev.energy_pj * ev.cycles:.4g}")
    print("(paper: 71 % PFM, 85 % Ruby-S)")
    print(f"\n{time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
