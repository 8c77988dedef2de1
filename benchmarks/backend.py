"""Back-end savings on the Operation-Dataflow kernel suite in physical units (seed 004
figs. 6-4, 6-5, 6-6; issue 19).

    python -m benchmarks.backend [--quick] [--only LABEL ...] [--jobs N] [--no-breakdown] [--timed]

Every design is built twice, ``optimizer=delay_only`` (width inference and LP delay matching:
the mandatory baseline) and ``optimizer=lego`` (every pass), the array alone (``target=asic
target.asic_top=array``, no output-path PPU: no pass touches it), synthesised to the OSU
0.18 µm cells (Yosys + ABC), its representative tile simulated in Verilator with random data
and toggle coverage, OpenSTA pricing each module at its measured toggle rates. Printed per
design: DAG register bits, flip-flops after synthesis, logic area (µm²; the SRAM banks, the
same in both, left out), logic power at 100 MHz and energy of the simulated tile (power x
measured cycles / clock), and the baseline/lego ratios. Then the attention kernel pass by
pass (fig. 6-6: each pass's share of the area and power saving), and with ``--timed`` the
back end's run time on two 16x16 switchable designs (seed 004's C++ back end: 70 s for 256 FUs).

Seed 004: 1.26x less area on average (up to 2.03x), 1.24x less energy (up to 1.88x); on
attention reduction tree 5 % and broadcast rewiring 6 % of area, power gating 19 % of power,
pin reuse 22 % of area and 29 % of power. Needs ``apt-get install -y qflow``. ``--quick``: one 2x2
GEMM array (``benchmarks.asic.QUICK``), no breakdown.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/backend.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.backend)

import contextlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from benchmarks import harness
from benchmarks.asic import QUICK
from lego_build import ConfigError, StageError
from lego_build.runtime.artifacts import read_artifact
from lego_build.runtime.atomic import read_json
from lego_build.targets.stdcell import SRAM

SMALL_CONV = ["workload.in_h=10", "workload.in_w=10", "workload.in_ch=8", "workload.out_ch=8"]
ATTENTION = ["arch=lego_attention", "workload=attention", "workload.seq_q=32", "workload.seq_kv=32",
             "workload.head_dim=16", "workload.heads=1"]
SUITE = (
    ("GEMM-ICOC", ["arch.rows=8", "arch.cols=8", "arch.dataflows.main.spatial=[k,n]", "arch.control_flow=[0,0]"]),
    ("GEMM-systolic", ["arch.rows=8", "arch.cols=8"]),
    ("GEMM-WS-systolic", ["arch=tpu", "arch.rows=8", "arch.cols=8"]),
    ("Conv-KHOH", ["arch=eyeriss_khoh", "arch.rows=3", "arch.cols=8", "workload=conv2d", *SMALL_CONV]),
    ("Conv-ICOC", ["arch=nvdla", "arch.rows=8", "arch.cols=8", "workload=conv2d", *SMALL_CONV]),
    ("Conv-OHOW", ["arch=shidiannao", "workload=conv2d", *SMALL_CONV]),
    ("Depthwise-OHOW", ["arch=nvdla", "arch.rows=8", "arch.cols=8", "arch.dataflows.icoc.interstellar=Y|X",
                        "workload=depthwise", "workload.in_h=16", "workload.in_w=16", "workload.in_ch=16",
                        "workload.out_ch=16"]),
    ("MTTKRP", ["arch.family=mttkrp", "arch.dataflows.main.spatial=[i,j]", "workload=mttkrp"]),
    ("Attention-MN+ICOC+MK", ATTENTION),
    ("GEMM-MN+ICOC", ["arch=lego_mnicoc", "arch.rows=8", "arch.cols=8"]),
    ("Conv-KHOH+ICOC", ["arch=lego_khoh_icoc", "workload=conv2d", *SMALL_CONV]),
)
BASE, ALL = "delay_only", "lego"
#: fig. 6-6: the attention kernel with the passes added one at a time (the list's order is
#: the pass manager's; each step adds one pass to the one before)
STEPS = (
    ("baseline (delay matching)", "optimizer=delay_only"),
    ("+ reduction tree", "optimizer.passes=[reduction_tree,bitwidth,delay_matching]"),
    ("+ broadcast rewiring", "optimizer.passes=[reduction_tree,bitwidth,delay_matching,broadcast_rewiring]"),
    ("+ power gating", "optimizer.passes=[reduction_tree,bitwidth,delay_matching,broadcast_rewiring,power_gating]"),
    ("+ pin reuse (all passes)", "optimizer=lego"),
)
SEED_STEPS = {"+ reduction tree": ("5 %", ""), "+ broadcast rewiring": ("6 %", ""), "+ power gating": ("", "19 %"),
              "+ pin reuse (all passes)": ("22 %", "29 %")}
#: switchable designs at full size, for the back end's run time
TIMED = (
    ("GEMM-MN+ICOC 16x16", ["arch=lego_mnicoc"]),
    ("Conv-KHOH+ICOC 16x16", ["arch=lego_khoh_icoc", "arch.rows=16", "arch.cols=16", "workload=conv2d"]),
)


def measure(overrides: list[str], work: str) -> dict:
    """One design's physical figures: the array alone, its tile run with random data."""
    cfg = harness.compose([*overrides, "target=asic", "target.asic_top=array", "arch.ppu=false",
                           "target.data=[random]"])
    with open(Path(work).with_suffix(".log"), "w") as log, contextlib.redirect_stdout(log):
        harness.run_stages(cfg, "report", Path(work), quiet=False)
    a = read_artifact(Path(work), "sim/result.json").products["asic"]
    cycles = sum(r["cycles"] for r in a["runs"])
    power = sum(v for k, v in a["power_mw"].items() if k != SRAM)
    return {"register_bits": read_json(Path(work) / "passes.json")["passes"][-1]["register_bits"],
            "flip_flops": a["flip_flops"], "area_um2": sum(v for k, v in a["area_um2"].items() if k != SRAM),
            "power_mw": power, "cycles": cycles, "energy_nj": power * cycles / a["power_mhz"],
            "clock_gating_mw": a.get("clock_gating", {}).get("saved_mw", 0.0)}


def _job(key: tuple, overrides: list[str], work: str):
    try:
        return key, measure(overrides, work)
    except (StageError, ConfigError) as exc:
        return key, str(exc)


def run_jobs(jobs: dict, n: int, tmp: Path) -> dict:
    """``jobs``: key -> overrides, ``n`` at a time; key -> figures or the error's line."""
    out = {}
    start = time.perf_counter()
    with ProcessPoolExecutor(n) as pool:
        futures = [pool.submit(_job, key, ov, str(tmp / f"job{i}")) for i, (key, ov) in enumerate(jobs.items())]
        for k, fut in enumerate(as_completed(futures), 1):
            key, res = fut.result()
            out[key] = res
            print(f"[{k}/{len(jobs)}] {time.perf_counter() - start:6.0f} s  {' / '.join(key)}", file=sys.stderr,
                  flush=True)
    return out


PAPER = {"source": "seed 004 figs. 6-4, 6-5, 6-6 (Design Compiler, 28 nm)", "area saving (average)": "1.26x",
         "area saving (max)": "2.03x", "energy saving (average)": "1.24x", "energy saving (max)": "1.88x"}


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", choices=[s[0] for s in SUITE], help="designs to build (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="designs built at once (default 2)")
    ap.add_argument("--no-breakdown", action="store_true", help="skip the attention pass-by-pass breakdown")
    ap.add_argument("--timed", action="store_true", help="also time the back end on two 16x16 designs")
    args = ap.parse_args(argv)
    suite = [s for s in SUITE if not args.only or s[0] in args.only]
    if args.quick:  # the array-alone settings are measure()'s own
        small = [o for o in next(iter(QUICK.values())) if not o.startswith(("target.", "arch.ppu"))]
        suite, args.no_breakdown, args.timed = [("GEMM 2x2", small)], True, False
    jobs = {(label, opt): [*ov, f"optimizer={opt}"] for label, ov in suite for opt in (BASE, ALL)}
    if not args.no_breakdown:
        jobs.update({("fig. 6-6", step): [*ATTENTION, ov] for step, ov in STEPS})
    with harness.workspace(args, prefix="lego_build-backend-") as tmp:
        res = run_jobs(jobs, args.jobs, tmp)
    tables = [savings(suite, res)]
    headline = dict(tables[0].pop("headline"))
    if not args.no_breakdown:
        tables.append(breakdown(res))
    if args.timed:
        tables.append(timed())
    harness.write_results("backend", {"headline": headline, "tables": tables}, paper=PAPER, quick=args.quick,
                          out=args.out, argv=argv,
                          title="back-end savings in physical units (seed 004 figs. 6-4 to 6-6)")
    return 0


def savings(suite, res: dict) -> dict:
    """Print and return the per-design table (base / lego and the ratios), with the averages."""
    print(f"\n{'design':<22} {'reg bits base/lego':>19} {'FFs base/lego':>15} {'area um2 base/lego':>21} "
          f"{'cycles base/lego':>17} {'mW base/lego':>15} {'energy nJ base/lego':>20} {'area':>6} {'energy':>6}")
    area_r, energy_r, rows = [], [], []
    for label, _ in suite:
        base, lego = res[(label, BASE)], res[(label, ALL)]
        if isinstance(base, str) or isinstance(lego, str):
            print(f"{label:<22} n/a: {base if isinstance(base, str) else lego}")
            rows.append([label, f"n/a: {base if isinstance(base, str) else lego}", *[""] * 7])
            continue
        ra, re_ = base["area_um2"] / lego["area_um2"], base["energy_nj"] / lego["energy_nj"]
        area_r.append(ra)
        energy_r.append(re_)
        print(f"{label:<22} {base['register_bits']:>9}/{lego['register_bits']:<9} "
              f"{base['flip_flops']:>7}/{lego['flip_flops']:<7} {base['area_um2']:>10,.0f}/{lego['area_um2']:<10,.0f} "
              f"{base['cycles']:>8}/{lego['cycles']:<8} {base['power_mw']:>7.1f}/{lego['power_mw']:<7.1f} "
              f"{base['energy_nj']:>9,.1f}/{lego['energy_nj']:<10,.1f} {ra:6.2f} {re_:6.2f}")
        rows.append([label, f"{base['register_bits']} / {lego['register_bits']}",
                     f"{base['flip_flops']} / {lego['flip_flops']}",
                     f"{base['area_um2']:,.0f} / {lego['area_um2']:,.0f}", f"{base['cycles']} / {lego['cycles']}",
                     f"{base['power_mw']:.1f} / {lego['power_mw']:.1f}",
                     f"{base['energy_nj']:,.1f} / {lego['energy_nj']:,.1f}", round(ra, 2), round(re_, 2)])
    headline = {}
    if area_r:
        headline = {"area saving, average (max)": f"{sum(area_r) / len(area_r):.2f}x ({max(area_r):.2f}x)",
                    "energy saving, average (max)": f"{sum(energy_r) / len(energy_r):.2f}x ({max(energy_r):.2f}x)"}
        print(f"average saving over {len(area_r)} designs: area {headline['area saving, average (max)']}, energy "
              f"{headline['energy saving, average (max)']}; seed 004: 1.26x (up to 2.03x) and 1.24x (up to 1.88x)")
    note = ("logic of the array without its SRAM banks, OSU 0.18 um, power at 100 MHz with the toggle rates of the "
            "simulated tile; energy = power x measured cycles / clock")
    print(f"({note})")
    return {**harness.table("optimizer=delay_only (base) against optimizer=lego, the array alone",
                            ["design", "register bits", "flip-flops", "area um²", "cycles", "mW", "energy nJ",
                             "area saving", "energy saving"], rows, note=note), "headline": headline}


def breakdown(res: dict) -> dict:
    """Fig. 6-6: each pass's share of the area and power saving on attention."""
    print(f"\nfig. 6-6, {ATTENTION[0]} on attention: each pass's share of the area and power saving")
    print(f"{'step':<28} {'FFs':>6} {'area um2':>10} {'power mW':>9} {'area saved':>11} {'power saved':>12} "
          f"{'seed area':>10} {'seed power':>11}")
    first = prev = None
    rows = []
    for step, _ in STEPS:
        r = res[("fig. 6-6", step)]
        if isinstance(r, str):
            print(f"{step:<28} n/a: {r}")
            continue
        first = first or r
        da = (prev["area_um2"] - r["area_um2"]) / first["area_um2"] if prev else 0.0
        dp = (prev["power_mw"] - r["power_mw"]) / first["power_mw"] if prev else 0.0
        seed = SEED_STEPS.get(step, ("", ""))
        print(f"{step:<28} {r['flip_flops']:>6} {r['area_um2']:>10,.0f} {r['power_mw']:>9.1f} {da:>11.1%} "
              f"{dp:>12.1%} {seed[0]:>10} {seed[1]:>11}")
        rows.append([step, r["flip_flops"], round(r["area_um2"]), round(r["power_mw"], 1), f"{da:.1%}", f"{dp:.1%}",
                     *seed])
        prev = r
    note = ""
    if prev and first:
        note = (f"with clock-gating cells at the enables (an estimate, not in the figures above): "
                f"{prev['clock_gating_mw']:.2f} mW less")
        print(note)
    return harness.table(f"fig. 6-6: {ATTENTION[0]} on attention, pass by pass",
                         ["step", "FFs", "area um²", "power mW", "area saved", "power saved", "area saved (paper)",
                          "power saved (paper)"], rows, note=note)


def timed() -> dict:
    """The back end's run time (all lego passes) on two 16x16 switchable designs."""
    print(f"\n{'back-end time (all lego passes)':<40} {'primitives':>10} {'seconds':>8}  (target: 16x16 under 30 s)")
    rows = []
    for label, overrides in TIMED:
        with harness.workspace() as tmp:
            cfg = harness.compose([*overrides, "optimizer=lego", "target=rtl"])
            harness.run_stages(cfg, "graph", tmp)
            start = time.perf_counter()
            harness.run_stages(cfg, "optimize", tmp, skip=("analyze", "graph"))
            seconds = time.perf_counter() - start
            nodes = read_json(tmp / "passes.json")["passes"][-1]["nodes"]
            print(f"{label:<40} {nodes:>10} {seconds:8.1f}")
            rows.append([label, nodes, round(seconds, 1)])
    return harness.table("the back end's run time, all lego passes (target: 16x16 under 30 s; seed 004's C++: "
                         "70 s for 256 FUs)", ["design", "primitives", "seconds"], rows)


if __name__ == "__main__":
    sys.exit(main())
