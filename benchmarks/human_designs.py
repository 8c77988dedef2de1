"""Seed 004 Table 6.2: generated arrays against the human-designed ones with the same dataflow.

    python -m benchmarks.human_designs [--quick] [--only eyeriss nvdla]

``arch=eyeriss_khoh`` (KH-OH, 12 x 14 = 168 FUs, 108 KB of banks) stands for LEGO-KHOH against
Eyeriss (Chen et al., JSSC 2017), ``arch=nvdla`` (IC-OC, 16 x 16 = 256 FUs, 128 KB) for
LEGO-ICOC against NVDLA. Each is built with ``target=asic`` (Yosys + ABC + OpenSTA on the OSU
0.18 µm library, the array's modules at the toggle rates of its simulated tiles, the memory
system at the default rate, the banks as SRAM macros), then moved to the node and clock of the
published figure by classical scaling (``lego_build.targets.models.scaled``, an estimate: area by s²,
energy by s V²; power linear in the clock from our 100 MHz). Needs ``apt-get install -y qflow``.
The published figures are the only typed-in numbers, labelled, with their nodes as seed 004
states them. ``--quick``: the flow on a 2x2 array alone (``benchmarks.asic.QUICK``) in place of
Eyeriss's, beside Eyeriss's figures (not comparable: it checks the benchmark runs).
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/human_designs.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.human_designs)

import time
from types import SimpleNamespace

from benchmarks import harness
from benchmarks.asic import QUICK
from lego_build.runtime.artifacts import read_artifact
from lego_build.targets.models import scaled

#: name -> (overrides, the human design, its node, clock MHz, area mm², power mW, LEGO's figure in the paper)
RUNS = {
    "eyeriss": (["arch=eyeriss_khoh"], "Eyeriss", 60, 200, 9.6, 278, ("LEGO-KHOH", 65, 7.4, 112)),
    "nvdla": (["arch=nvdla"], "NVDLA", 16, 1000, 1.0, 135, ("LEGO-ICOC", 16, 0.9, 94)),
}
VDD = {60: 1.0, 65: 1.0, 16: 0.8}  # nominal supplies assumed at those nodes


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), default=None)
    args = ap.parse_args(argv)
    runs = {"eyeriss": (next(iter(QUICK.values())), *RUNS["eyeriss"][1:])} if args.quick else \
        {n: RUNS[n] for n in args.only or RUNS}
    rows = []
    with harness.workspace(args, prefix="lego_build-human-") as tmp:
        for name, (overrides, human, node, mhz, area, power, paper) in runs.items():
            start = time.perf_counter()
            cfg = harness.compose(["target=asic", *overrides])
            harness.run_stages(cfg, "report", tmp / name)
            a = read_artifact(tmp / name, "sim/result.json").products["asic"]
            lib = SimpleNamespace(node_nm=a["node_nm"], vdd=a["vdd"])
            s = scaled(a["area_mm2"], a["fmax_mhz"], a["power_total_mw"], lib, paper[1], VDD[paper[1]])
            rows.append((name, cfg, a, s, mhz, time.perf_counter() - start))
    print("| design | dataflow | FUs | ours: mm² / mW at 180 nm, 100 MHz | ours scaled: node, mm², mW at the clock "
          "| paper's LEGO: node, mm², mW | human design: node, clock, mm², mW |")
    print("|---|---|---:|---|---|---|---|")
    table = []
    for name, cfg, a, s, mhz, wall in rows:
        _, human, node, _, area, power, paper = runs[name]
        dfs = "+".join(cfg.arch.dataflows)
        mw = s["power_mw"] * mhz / a["power_mhz"]
        print(f"| {cfg.arch.name} | {dfs} | {cfg.arch.rows * cfg.arch.cols} | {a['area_mm2']:.2f} / "
              f"{a['power_total_mw']:.0f} (Fmax {a['fmax_mhz']:.0f} MHz) | {paper[1]} nm, {s['area_mm2']:.2f} mm², "
              f"{mw:.0f} mW at {mhz} MHz | {paper[0]}: {paper[1]} nm, "
              f"{paper[2]} mm², {paper[3]} mW | {human}: {node} nm, {mhz} MHz, {area} mm², {power} mW |")
        table.append([cfg.arch.name, dfs, cfg.arch.rows * cfg.arch.cols, round(a["area_mm2"], 2),
                      round(a["power_total_mw"]), round(a["fmax_mhz"]), f"{paper[1]} nm, {mhz} MHz",
                      round(s["area_mm2"], 2), round(mw), f"{paper[0]}: {paper[2]} mm², {paper[3]} mW",
                      f"{human}: {node} nm, {area} mm², {power} mW", round(wall)])
    note = ("paper: seed 004 Table 6.2; its LEGO-ICOC figures are projected from 28 nm; ours are classical scaling "
            "of a 180 nm flow, an estimate")
    print(f"({note})")
    figures = {"tables": [harness.table(
        "generated arrays against the human-designed ones with the same dataflow",
        ["design", "dataflows", "FUs", "mm² at 180 nm", "mW at 180 nm, 100 MHz", "Fmax MHz", "scaled to",
         "mm² scaled", "mW scaled", "paper's LEGO", "human design (paper)", "wall s"], table, note=note)]}
    harness.write_results("human_designs", figures, quick=args.quick, out=args.out, argv=argv,
                          title="generated arrays against Eyeriss and NVDLA (seed 004 Table 6.2)",
                          paper={"source": "seed 004 Table 6.2 (Eyeriss: Chen et al., JSSC 2017; NVDLA), in the "
                                 "table's paper columns"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
