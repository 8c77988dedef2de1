"""Seed 004 Table 6.1: large generative models on LEGO-ICOC-1K.

    python -m benchmarks.generative [--quick] [--only ddpm ...] [--rtl ddpm ...]

``arch=lego_icoc_1k``: 32 x 32 = 1024 FUs with the IC-OC dataflow, 576 KB of bank SRAM, 32 PPU
lanes, 32 B per cycle from DRAM (tests/test_presets.py reads these from the generated RTL).
Per model: utilization (MACs / (cycles x 1024)), GOP/s at 1 GHz (2 ops per MAC), on-chip
energy efficiency (GOPS/W = GOP per on-chip joule), and the paper's figures beside them (the
only typed-in numbers, labelled). Cycles are the array layers by the whole-layer latency model
that the RTL runs check (``--rtl``: measured in Verilator instead), plus the PPU passes
(softmax, group and layer norms, SiLU/GELU, upsampling: ``lego_build/mapping/ppu.py``).
Models: DDPM (CIFAR-10 UNet, one denoising step), Stable Diffusion (v1.x UNet, 64x64 latent,
one step), LLaMA-7B generating one token over a 1000-token cache at batch 1 and 32.
``--quick``: LLaMA-7B at batch 1 on the preset shrunk to 4x4 (its utilization is not Table 6.1's).
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/generative.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.generative)

import sys

from benchmarks import harness
from benchmarks.lego_vs_gemmini import OBJECTIVES, QUICK, measure

MODELS = {  # name -> workload overrides
    "ddpm": ["workload=ddpm"],
    "stable_diffusion": ["workload=stable_diffusion"],
    "llama7b_bs1": ["workload=llama7b"],
    "llama7b_bs32": ["workload=llama7b", "workload.batch=32"],
}
#: seed 004 Table 6.1: utilization, GOP/s, GOPS/W (3.95 mm², 601 mW on chip)
PAPER = {"ddpm": (0.929, 1903, 3165), "stable_diffusion": (0.802, 1642, 2731), "llama7b_bs1": (0.031, 63, 105),
         "llama7b_bs32": (0.429, 878, 1461)}


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS), default=None)
    ap.add_argument("--rtl", nargs="*", choices=sorted(MODELS), default=[])
    ap.add_argument("--objective", default="latency", choices=OBJECTIVES, help="mapper.objective")
    args = ap.parse_args(argv)
    rows = []
    with harness.workspace(args) as out:
        for name in ["llama7b_bs1"] if args.quick else (args.only or list(MODELS)):
            net = MODELS[name][0].split("=")[1]
            r = measure("lego_icoc_1k", net, args.objective, name in args.rtl, out / name,
                        [*MODELS[name][1:], *(QUICK if args.quick else [])])
            rows.append((name, r))
            print(f"  {name}: {r['cycles']:,} cycles ({r['source']}), {r['wall_s']:.1f} s", file=sys.stderr)
    print("| model | MACs | cycles | utilization | paper | GOP/s | paper | GOPS/W | paper | PPU share | source |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    table = []
    for name, r in rows:
        util, gops, gopsw = PAPER[name]
        print(f"| {name} | {r['macs']:,} | {r['cycles']:,} | {r['util']:.1%} | {util:.1%} | "
              f"{2 * r['macs'] / r['cycles']:,.0f} | {gops:,} | {r['gops_w']:,.0f} | {gopsw:,} | "
              f"{r['ppu_cycles'] / r['cycles']:.1%} | {r['source']} |")
        table.append([name, r["macs"], r["cycles"], f"{r['util']:.1%}", f"{util:.1%}",
                      round(2 * r["macs"] / r["cycles"]), gops, round(r["gops_w"]), gopsw,
                      f"{r['ppu_cycles'] / r['cycles']:.1%}", r["source"]])
    print("paper: seed 004 Table 6.1 (LEGO-ICOC-1K, 28 nm, 601 mW on chip)")
    figures = {"tables": [harness.table(
        f"lego_icoc_1k{' shrunk to 4x4' if args.quick else ''}, mapper.objective={args.objective}; GOP/s at 1 GHz",
        ["model", "MACs", "cycles", "utilization", "utilization (paper)", "GOP/s", "GOP/s (paper)", "GOPS/W",
         "GOPS/W (paper)", "PPU share", "source"], table,
        note="GOPS/W: on-chip energy from Interstellar's 28 nm table, not the paper's synthesis")]}
    harness.write_results("generative", figures, quick=args.quick, out=args.out, argv=argv,
                          title="large generative models on LEGO-ICOC-1K (seed 004 Table 6.1)",
                          paper={"source": "seed 004 Table 6.1 (LEGO-ICOC-1K, 28 nm, 601 mW on chip), in the "
                                 "table's (paper) columns"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
