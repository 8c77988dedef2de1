"""Ruby-S against PFM (seed 002 §V): ResNet-50 on the Eyeriss-like 14 x 12 array, EDP per layer.

    python -m benchmarks.ruby [--quick] [--search rtml|random] [--network resnet50]

Every figure is the product's own path, the map stage of ``doit map arch=eyeriss_ruby
workload=<network> mapper=pfm|ruby_s mapper.objective=edp`` (run in process; the paper's
Eyeriss-like PE scratchpads, 128 KiB GLB, weights bypassing it, Table 5.2 energies), in two
mapspaces of the unrolling:

* ``mapper.unroll=search`` (the paper's): each layer's unrolling is searched, filter rows (KH,
  always unrolled) and input channels on the 12 rows, output rows (OH, always unrolled) and
  output channels on the 14 columns, on the model-only levels. PFM's spatial factors divide
  the dims; Ruby-S's may leave a partial last tile.
* ``mapper.unroll=dataflows``: the generated array's row-stationary forms (with their link
  checks), which run a partial last spatial tile; PFM may use a form only where it divides
  the layer's dims (the 12-row ``ic`` form never does on a 1x1 layer).

Prints per distinct layer the unrolling, utilisation and EDP of both, each whole network's
energy, cycles and EDP (total energy x total cycles, layers weighted by their count), and
AlexNet layer 2 (27 x 27 outputs, 48 -> 128 channels, 5 x 5: one group of the original two-GPU
network) under the searched unrolling. Paper: whole network -14 % EDP (energy +2 %, cycles
-17 %); AlexNet layer 2 utilisation 71 % (PFM) vs 85 % (Ruby-S). ``--quick``: LeNet-5 instead of
the network, no AlexNet layer 2.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/ruby.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.ruby)

import time
from pathlib import Path

from benchmarks import harness
from lego_build.runtime.artifacts import read_artifact

ALEXNET2 = ["workload=conv2d", "workload.in_ch=48", "workload.out_ch=128", "workload.in_h=27", "workload.in_w=27",
            "workload.kh=5", "workload.kw=5", "workload.pad=2"]


def flow(overrides: list[str], mapper: str, unroll: str, search: str, work: Path):
    """``doit map arch=eyeriss_ruby <overrides> mapper=<mapper>`` under EDP: mapping.json's doc."""
    cfg = harness.compose(["arch=eyeriss_ruby", *overrides, f"mapper={mapper}", "mapper.objective=edp",
                           f"mapper.search={search}", f"mapper.unroll={unroll}"])
    return read_artifact(harness.run_stages(cfg, "map", work), "mapping.json")


def _unrolling(e: dict) -> str:
    return e.get("unrolling") or e["dataflow"]


def compare(network: str, unroll: str, search: str, work: Path) -> tuple[float, float, float]:
    """Print the per-layer table of one unrolling mapspace; return Ruby-S's change in energy,
    cycles and EDP against PFM's over the whole network."""
    docs = {m: flow([f"workload={network}"], m, unroll, search, work / f"{unroll}-{m}") for m in ("pfm", "ruby_s")}
    rows = {m: {e["name"]: e for e in d.layers if e["status"] == "mapped"} for m, d in docs.items()}
    seen, distinct = set(), []
    for e in docs["ruby_s"].layers:  # one row per distinct layer (same shape: same mapping)
        key = tuple(sorted(e.get("dims", {}).items()))
        if e["status"] == "mapped" and key not in seen:
            seen.add(key)
            distinct.append(e["name"])
    print(f"\n{network} on eyeriss_ruby (14 x 12), mapper.unroll={unroll}, EDP, {search} search; "
          f"{len(distinct)} distinct layers")
    print(f"{'layer':22} {'unrolling PFM':>21} {'Ruby-S':>21} {'util PFM':>8} {'Ruby-S':>7} {'EDP PFM':>10} "
          f"{'Ruby-S':>10} {'change':>7}")
    for name in distinct:
        p, r = rows["pfm"].get(name), rows["ruby_s"][name]
        if p is None:
            print(f"{name[:22]:22} {'unmappable':>21} {_unrolling(r):>21}")
            continue
        ep, er = p["energy_pj"] * p["cycles"], r["energy_pj"] * r["cycles"]
        print(f"{name[:22]:22} {_unrolling(p):>21} {_unrolling(r):>21} {p['utilization']:8.0%} "
              f"{r['utilization']:7.0%} {ep:10.4g} {er:10.4g} {(er / ep - 1) * 100:+6.1f}%")
    tp, tr = (docs[m].totals for m in ("pfm", "ruby_s"))
    if tp["layers_unmappable"]:
        print(f"PFM leaves {tp['layers_unmappable']} layers unmappable: the whole-network figures are not comparable")
    de, dc = tr["energy_pj"] / tp["energy_pj"] - 1, tr["cycles"] / tp["cycles"] - 1
    print(f"whole network: PFM {tp['energy_pj'] / 1e6:,.0f} uJ, {tp['cycles']:,} cycles; Ruby-S "
          f"{tr['energy_pj'] / 1e6:,.0f} uJ, {tr['cycles']:,} cycles")
    return de, dc, (1 + de) * (1 + dc) - 1


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--search", default="rtml", choices=("rtml", "random"))
    ap.add_argument("--network", default="resnet50")
    args = ap.parse_args(argv)
    network = "lenet" if args.quick else args.network
    start = time.perf_counter()
    with harness.workspace(args) as work:
        changes = {unroll: compare(network, unroll, args.search, work) for unroll in ("search", "dataflows")}
        alex = {} if args.quick else {m: flow(ALEXNET2, m, "search", args.search, work / f"alex-{m}").layers[0]
                                      for m in ("pfm", "ruby_s")}
    print(f"\n{network}, Ruby-S against PFM (doit map ... mapper.objective=edp), whole network:")
    print(f"{'unrolling':28} {'energy':>8} {'cycles':>8} {'EDP':>8}")
    rows = []
    for unroll, (de, dc, dedp) in changes.items():
        print(f"{'mapper.unroll=' + unroll:28} {de * 100:+7.1f}% {dc * 100:+7.1f}% {dedp * 100:+7.1f}%")
        rows.append([f"mapper.unroll={unroll}", f"{de:+.1%}", f"{dc:+.1%}", f"{dedp:+.1%}"])
    print(f"{'paper (seed 002 §V)':28} {'+2.0%':>8} {'-17.0%':>8} {'-14.0%':>8}")
    rows.append(["paper (seed 002 §V, its searched unrolling)", "+2.0%", "-17.0%", "-14.0%"])
    for m, e in alex.items():
        print(f"AlexNet layer 2, {m:6}: utilisation {e['utilization']:.0%}, unrolling {e['unrolling']}, "
              f"EDP {e['energy_pj'] * e['cycles']:.4g}")
    print("(paper: 71 % PFM, 85 % Ruby-S)")
    wall = time.perf_counter() - start
    print(f"\n{wall:.1f} s")
    figures = {
        "headline": {f"AlexNet layer 2 utilisation, {m}": f"{e['utilization']:.0%} ({e['unrolling']})"
                     for m, e in alex.items()} | {"wall (s)": round(wall, 1)},
        "tables": [harness.table(f"{network} on eyeriss_ruby, Ruby-S against PFM under EDP ({args.search} search), "
                                 "whole network", ["unrolling space", "energy", "cycles", "EDP"], rows)]}
    harness.write_results("ruby", figures, quick=args.quick, out=args.out, argv=argv,
                          title="Ruby-S against PFM on the Eyeriss-like array (seed 002)",
                          paper={"source": "seed 002 §V", "ResNet-50 energy": "+2 %", "cycles": "-17 %",
                                 "EDP": "-14 %", "AlexNet layer 2 utilisation PFM / Ruby-S": "71 % / 85 %"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
