"""Seed 004 Table 6.1: large generative models on LEGO-ICOC-1K.

    python benchmarks/generative.py [--only ddpm ...] [--rtl ddpm ...]

``arch=lego_icoc_1k``: 32 x 32 = 1024 FUs with the IC-OC dataflow, 576 KB of bank SRAM, 32 PPU
lanes, 32 B per cycle from DRAM (tests/test_presets.py reads these from the generated RTL).
Per model: utilization (MACs / (cycles x 1024)), GOP/s at 1 GHz (2 ops per MAC), on-chip
energy efficiency (GOPS/W = GOP per on-chip joule), and the paper's figures beside them (the
only typed-in numbers, labelled). Cycles are the array layers by the whole-layer latency model
that the RTL runs check (``--rtl``: measured in Verilator instead), plus the PPU passes
(softmax, group and layer norms, SiLU/GELU, upsampling: ``lego_build/mapping/ppu.py``).
Models: DDPM (CIFAR-10 UNet, one denoising step), Stable Diffusion (v1.x UNet, 64x64 latent,
one step), LLaMA-7B generating one token over a 1000-token cache at batch 1 and 32.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lego_vs_gemmini import OBJECTIVES, measure  # noqa: E402

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
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS), default=None)
    ap.add_argument("--rtl", nargs="*", choices=sorted(MODELS), default=[])
    ap.add_argument("--objective", default="latency", choices=OBJECTIVES, help="mapper.objective")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        for name in args.only or list(MODELS):
            net = MODELS[name][0].split("=")[1]
            r = measure("lego_icoc_1k", net, args.objective, name in args.rtl, out / name, MODELS[name][1:])
            rows.append((name, r))
            print(f"  {name}: {r['cycles']:,} cycles ({r['source']}), {r['wall_s']:.1f} s", file=sys.stderr)
    print("| model | MACs | cycles | utilization | paper | GOP/s | paper | GOPS/W | paper | PPU share | source |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, r in rows:
        util, gops, gopsw = PAPER[name]
        print(f"| {name} | {r['macs']:,} | {r['cycles']:,} | {r['util']:.1%} | {util:.1%} | "
              f"{2 * r['macs'] / r['cycles']:,.0f} | {gops:,} | {r['gops_w']:,.0f} | {gopsw:,} | "
              f"{r['ppu_cycles'] / r['cycles']:.1%} | {r['source']} |")
    print("paper: seed 004 Table 6.1 (LEGO-ICOC-1K, 28 nm, 601 mW on chip)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
