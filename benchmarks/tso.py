"""Seed 003's NMP table: burst-aware TSO against burst-oblivious, fixed partitions and fixed schedules.

    python -m benchmarks.tso [--quick] [--jobs 2] [--arch nmp]

For InceptionV3, LeNet, MobileNetV2, ResNet-50 and SqueezeNet (16-bit, batch 1) on
``arch=nmp``: the whole-network time (us, sum over conv/fc layers) of TSO-burst, TSO-noburst
(tiles chosen without the burst term, then timed with it, as the board measures them),
each fixed cluster partition (KS, KS&OFM, OFM) and each fixed core schedule (IS, OS, WS),
then the burst vs no-burst speedup (the paper measured 7.4 % - 21.7 %), the InceptionV3
layer of §IV (80 maps of 73x73, 192 filters 80x3x3) under both models, and the time to
explore all 94 InceptionV3 convs (paper: 6 min serial, 59 s on 16 cores; target < 30 s on
2 cores). ``--quick``: LeNet alone, its convs explored for the timing.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/tso.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.tso)

import time

from benchmarks import harness
from lego_build.analysis.lowering import lower
from lego_build.analysis.networks import network
from lego_build.mapping.tso import NPU, PARTITIONS, SCHEDULES, Conv, explore, explore_all

MODELS = ("inceptionv3", "lenet", "mobilenetv2", "resnet50", "squeezenet")
PAPER = {  # seed 003 table (burst, noburst, KS, KS&OFM, OFM, IS, OS, WS)
    "inceptionv3": (72686, 88478, 82370, 81367, 91408, 73706, 93731, 101641),
    "lenet": (199, 231, 202, 224, 231, 199, 233, 228),
    "mobilenetv2": (14030, 15470, 17765, 16696, 17571, 14084, 17387, 15155),
    "resnet50": (55927, 62375, 62077, 63118, 78844, 59714, 71905, 77535),
    "squeezenet": (12504, 13713, 16579, 14134, 12993, 12908, 15840, 13452),
}
COLUMNS = ("burst", "noburst", *PARTITIONS, *SCHEDULES)


def convs_of(model: str) -> list[Conv]:
    out = []
    for layer in network(model, 1, 16):
        if layer.kernel is not None and (k := lower(layer.kernel, "conv2d")) is not None:
            out += [Conv.from_kernel(layer.name, k)] * layer.count
    return out


def total_us(results, overlap: bool) -> float:
    return sum(r.best.time_ns(overlap, burst_model=True) for r in results) / 1000


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--arch", default="nmp")
    args = ap.parse_args(argv)
    mc = harness.compose([f"arch={args.arch}"]).arch.multicore
    npu = NPU.from_conf(mc)
    print(f"arch={args.arch}: {mc.clusters} clusters x {mc.cores} cores, {npu.macs} MACs/cycle per core, "
          f"{mc.bandwidth_gbps} GB/s, {mc.burst_ns} ns per {mc.burst_bytes} B burst; whole-network time in us")
    print(f"{'model':12} {'convs':>5} " + " ".join(f"{c:>9}" for c in COLUMNS) + f" {'burst gain':>10}")
    rows = []
    models = ("lenet",) if args.quick else MODELS
    for model in models:
        convs = convs_of(model)
        row = {
            "burst": explore_all(convs, npu, True, jobs=args.jobs),
            "noburst": explore_all(convs, npu, False, jobs=args.jobs),
            **{p: explore_all(convs, npu, True, partitions=(p,), jobs=args.jobs) for p in PARTITIONS},
            **{q: explore_all(convs, npu, True, schedules=(q,), jobs=args.jobs) for q in SCHEDULES},
        }
        t = {c: total_us(r, npu.overlap) for c, r in row.items()}
        gain = t["noburst"] / t["burst"] - 1
        print(f"{model:12} {len(convs):5} " + " ".join(f"{t[c]:9.0f}" for c in COLUMNS) + f" {gain:9.1%}")
        paper = PAPER[model]
        print(f"{'  (paper)':12} {'':5} " + " ".join(f"{v:9d}" for v in paper) + f" {paper[1] / paper[0] - 1:9.1%}")
        rows.append([model, len(convs), *(round(t[c]) for c in COLUMNS), f"{gain:.1%}",
                     f"{paper[1] / paper[0] - 1:.1%}"])
        rows.append([f"{model} (paper)", "", *paper, "", ""])
    layer = Conv("InceptionV3 §IV", N=80, M=192, H=73, L=73, KH=3, KW=3, S=1, R=71, C=71)
    print(f"\n{layer.name}: 80 maps of 73x73, 192 filters 80x3x3")
    layer_rows = []
    for burst in (True, False):
        b = explore(layer, npu, burst).best
        print(f"  {'burst   ' if burst else 'no-burst'}: {b.partition}/{b.schedule}, input tile T_N x T_H x T_L = "
              f"{b.T_N} x {b.T_H} x {b.T_L}{' (full width)' if b.T_L == layer.L else ''}, "
              f"{b.bursts[0]} bursts per input tile, {b.total_bursts:,} bursts in all, "
              f"{b.time_ns(npu.overlap) / 1000:,.0f} us with bursts")
        layer_rows.append(["burst" if burst else "no-burst", f"{b.partition}/{b.schedule}",
                           f"{b.T_N} x {b.T_H} x {b.T_L}", b.bursts[0], b.total_bursts,
                           round(b.time_ns(npu.overlap) / 1000)])
    print("  (paper: burst 14 x 4 x 73, 70 bursts; no-burst 16 x 11 x 20, 176 bursts; 28 % faster)")
    convs = convs_of(models[0] if args.quick else "inceptionv3")
    explore_s = {}
    for jobs in sorted({1, args.jobs}):
        start = time.perf_counter()
        explore_all(convs, npu, True, jobs=jobs)
        explore_s[jobs] = round(time.perf_counter() - start, 2)
        print(f"\nexplore {len(convs)} {models[0] if args.quick else 'InceptionV3'} convs, {jobs} process(es): "
              f"{explore_s[jobs]:.1f} s (paper: 6 min serial, 59 s on 16 cores; target < 30 s on 2 cores)")
    figures = {
        "headline": {f"explore {len(convs)} convs, {j} process(es) (s)": s for j, s in explore_s.items()},
        "tables": [
            harness.table(f"whole-network time (us) on arch={args.arch}, ours and the paper's",
                          ["model", "convs", *COLUMNS, "burst gain", "paper's gain"], rows),
            harness.table(f"{layer.name}: 80 maps of 73x73, 192 filters 80x3x3",
                          ["bursts in the model", "partition/schedule", "input tile", "bursts per tile", "bursts",
                           "us"], layer_rows,
                          note="paper: burst 14 x 4 x 73, 70 bursts; no-burst 16 x 11 x 20, 176 bursts; 28 % faster")]}
    harness.write_results("tso", figures, quick=args.quick, out=args.out, argv=argv,
                          title="burst-aware TSO against burst-oblivious and fixed choices (seed 003)",
                          paper={"source": "seed 003, NMP table and §IV", "burst gain": "7.4 % - 21.7 %",
                                 "explore InceptionV3 (serial)": "6 min", "explore InceptionV3 (16 cores)": "59 s"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
