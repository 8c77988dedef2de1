"""Ruby-S against PFM (seed 002 §V): ResNet-50 on the Eyeriss-like 14 x 12 array, EDP per layer.

    python benchmarks/ruby.py [--search rtml|random] [--network resnet50]

``arch=eyeriss_ruby`` (the paper's Eyeriss-like PE scratchpads, 128 KiB GLB, weights bypassing
it, Table 5.2 energies). The mapper chooses the unrolling as the paper's row-stationary
mapspace allows: filter rows (KH, always unrolled) and input channels (IC) on the 12 rows,
output rows (OH, always unrolled) and output channels (OC) on the 14 columns; everything else is searched by the same search
in both mapspaces. PFM factors must divide the bounds; Ruby-S lets the array axes run a
partial last tile (``T = (T' - 1) P + R``). Prints per distinct layer the utilisation,
energy, cycles and EDP of both, the whole network's EDP (total energy x total cycles, layers
weighted by their count), and AlexNet layer 2 (27 x 27 outputs, 48 -> 128 channels, 5 x 5:
one group of the original two-GPU network). Paper: whole network -14 % EDP; AlexNet layer 2
utilisation 71 % (PFM) vs 85 % (Ruby-S).
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

from lego_build import compose
from lego_build.analysis.kernels import conv2d
from lego_build.analysis.lowering import lower
from lego_build.analysis.networks import network
from lego_build.mapping.hierarchy import from_conf
from lego_build.mapping.mapspace import Mapspace, Rules
from lego_build.mapping.model import Model
from lego_build.mapping.searches import make_search

AXES = (("kh", "ic"), ("oh", "oc"))  # row stationary: filter rows x channels | output rows x filters
REQUIRED = ("kh", "oh")  # row stationary: filter rows on the rows, output rows on the columns


def best(kernel, arch, space: str, search: str):
    out = kernel.output
    kernel = replace(kernel, tensors=tuple(replace(t, bits=arch.acc_bits) if t is out else t for t in kernel.tensors))
    ms = Mapspace(Model(kernel, from_conf(arch), arch.operand_bits), space, Rules(axes=AXES, max_spatial=12, required=REQUIRED))
    found = make_search(search, ms, "edp").run()
    if found is None:
        raise SystemExit(f"{kernel}: no mapping in {space}")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--search", default="rtml", choices=("rtml", "random"))
    ap.add_argument("--network", default="resnet50")
    args = ap.parse_args(argv)
    arch = compose(["arch=eyeriss_ruby"]).arch
    start = time.perf_counter()
    layers: dict = {}
    for layer in network(args.network, 1, arch.operand_bits):
        if layer.kernel is None or (k := lower(layer.kernel, "conv2d")) is None:
            continue
        entry = layers.setdefault(k, {"name": layer.name, "count": 0})
        entry["count"] += layer.count
    print(f"{args.network} on eyeriss_ruby (14 x 12), EDP objective, {args.search} search; "
          f"{len(layers)} distinct layers")
    print(f"{'layer':28} {'n':>2} {'util PFM':>8} {'Ruby-S':>7} {'EDP PFM':>12} {'Ruby-S':>12} {'change':>8}")
    tot = {"pfm": [0.0, 0.0], "ruby-s": [0.0, 0.0]}
    for kernel, entry in layers.items():
        res = {space: best(kernel, arch, space, args.search)[1] for space in ("pfm", "ruby-s")}
        for space, ev in res.items():
            tot[space][0] += ev.energy_pj * entry["count"]
            tot[space][1] += ev.cycles * entry["count"]
        p, r = (res[s].energy_pj * res[s].cycles for s in ("pfm", "ruby-s"))
        print(f"{entry['name'][:28]:28} {entry['count']:2} {res['pfm'].utilization:8.0%} {res['ruby-s'].utilization:7.0%} "
              f"{p:12.4g} {r:12.4g} {(r / p - 1) * 100:+7.1f}%")
    (ep, cp), (er, cr) = tot["pfm"], tot["ruby-s"]
    print(f"\nwhole network: energy {(er / ep - 1) * 100:+.1f} %, cycles {(cr / cp - 1) * 100:+.1f} %, "
          f"EDP {(er * cr / (ep * cp) - 1) * 100:+.1f} %  (paper: energy +2 %, cycles -17 %, EDP -14 %)")
    alex = conv2d(1, 48, 128, 27, 27, 5, 5, pad=2, bits=arch.operand_bits)
    a = {space: best(alex, arch, space, args.search) for space in ("pfm", "ruby-s")}
    for space, (s, ev) in a.items():
        print(f"AlexNet layer 2, {space:6}: utilisation {ev.utilization:.0%}, unrolling "
              f"{' | '.join(','.join(f'{d}{p}' for d, p in axis) for axis in s.spatial)}, EDP {ev.energy_pj * ev.cycles:.4g}")
    print("(paper: 71 % PFM, 85 % Ruby-S)")
    print(f"\n{time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
