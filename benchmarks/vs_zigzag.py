"""lego_build's mapper against ZigZag 3.9.1 on ZigZag's ResNet-18 ONNX file: same hardware, whole processes.

    python -m benchmarks.vs_zigzag [--repeat 3] [--mapper ruby_s] [--search rtml] [--skip-zigzag] [--quick]

Both tools get ZigZag's stock ``eyeriss_like`` hardware (lego_build: ``arch=zigzag_eyeriss_like``)
and the ResNet-18 ONNX file that ships with zigzag-dse, and minimise energy per layer.

* Same hardware: before anything runs, ZigZag's hardware and mapping files are checked field by
  field against our config (:func:`hardware_check`: every memory's size, read and write energy,
  operands, per-PE or shared, port width and bandwidth; the MAC energy; the array's sides and what
  each unrolls; the operand precisions ZigZag read from the ONNX file). A mismatch is reported and
  the comparison stops (``--force`` goes on). ZigZag is not given our mappings to price: its LOMA
  search has no fixed-mapping entry that takes a whole per-layer schedule, so the per-level energies
  (table) are the model check.
* Same timing: each side is one whole process, as a user runs it, in the same sitting on the same
  machine, the two interleaved ``--repeat`` times: ours ``doit map arch=zigzag_eyeriss_like
  workload=onnx ...`` in a fresh design directory (imports, composition, ``analyze``, ``graph``,
  ``optimize`` and ``map``: the map stage reads the generated array), ZigZag's ``python -m
  benchmarks.zigzag_side`` (imports, ONNX import, LOMA search, cost model). CPU time is the user +
  system time of each child's process tree, wall time the clock around it (:mod:`benchmarks.peers`);
  the figures are medians, the ratios ZigZag / ours. The in-process figures (our stages run in this
  process without imports and composition; ZigZag's API call) are a labelled extra.

Writes ``benchmarks/results/vs_zigzag.json`` (``--quick``: one repeat, the test's run).
"""
from __future__ import annotations

if __name__ == "__main__" and not __package__:  # python benchmarks/vs_zigzag.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.vs_zigzag)

import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

from benchmarks import harness, peers
from benchmarks.zigzag_side import stock_inputs

#: ZigZag's memory operands (its mapping file's ``memory_operand_links``) by the role they hold
ZZ_ROLE = {"I": "input", "W": "weight", "O": "output"}
PEER = "ZigZag 3.9.1 (zigzag-dse), LOMA temporal search, opt=energy, lpf_limit 6"


def resnet18_onnx() -> Path:
    hw, _ = stock_inputs("eyeriss_like")
    return hw.parent.parent / "workload" / "resnet18.onnx"


def overrides(onnx: Path, mapper: str, search: str) -> list[str]:
    return ["arch=zigzag_eyeriss_like", "workload=onnx", f"workload.path={onnx}", f"mapper={mapper}",
            f"mapper.search={search}", "mapper.objective=energy"]


def hardware_check(arch, precision: dict | None = None) -> list[dict]:
    """ZigZag's ``eyeriss_like`` hardware and ``default`` mapping files against ``arch``, field by
    field: ``{"field", "ours", "zigzag", "same"}`` rows. ``precision``: the operand precisions
    ZigZag used (its run's ``operand_precision``), checked against ``operand_bits`` / ``acc_bits``."""
    hw_file, map_file = stock_inputs("eyeriss_like")
    hw, mapping = yaml.safe_load(hw_file.read_text()), yaml.safe_load(map_file.read_text())[0]
    role_of = {mem: ZZ_ROLE[op] for op, mem in mapping["memory_operand_links"].items()}
    rows: list[dict] = []

    def row(field, ours, zz, same=None):
        rows.append({"field": field, "ours": ours, "zigzag": zz, "same": ours == zz if same is None else same})

    ours_names = [m.name for m in arch.memory]
    row("memory levels", sorted(ours_names), sorted(hw["memories"]))
    for m in arch.memory:
        zz = hw["memories"].get(m.name)
        if zz is None:
            continue
        ports = [p["bandwidth_max"] for p in zz["ports"]]
        unbounded = m.size_bytes <= 0
        row(f"{m.name}.size bits", "unbounded" if unbounded else m.size_bytes * 8, zz["size"],
            same=zz["size"] >= 8e9 if unbounded else m.size_bytes * 8 == zz["size"])
        row(f"{m.name}.read pJ", m.read_pj, float(zz["r_cost"]))
        row(f"{m.name}.write pJ", m.write_pj, float(zz["w_cost"]))
        row(f"{m.name}.roles", sorted(m.roles), sorted(role_of[op] for op in zz["operands"]))
        row(f"{m.name}.per PE", m.per_pe, not zz["served_dimensions"])
        row(f"{m.name}.word bits (widest port)", m.width_bits, max(ports))
        row(f"{m.name}.bandwidth bits/cycle (all ports)", m.bandwidth_bits, sum(ports))
    row("MAC pJ", arch.energy.mac_pj, float(hw["operational_array"]["unit_energy"]))
    row("array network pJ per hop", arch.energy.hop_pj, 0.0)  # ZigZag has no interconnect energy
    sizes = dict(zip(hw["operational_array"]["dimensions"], hw["operational_array"]["sizes"]))
    unroll = {d: mapping["spatial_mapping"][d][0].split(",")[0].strip() for d in sizes}
    dataflow = next(iter(arch.dataflows.values()))
    axes = [str(a).split(":")[0] for a in dataflow.spatial]  # rows, columns
    letter = {"ic": "C", "oc": "K", "oh": "OY", "ow": "OX", "kh": "FY", "kw": "FX"}
    row("array (rows unroll, columns unroll)", [(arch.rows, letter[axes[0]]), (arch.cols, letter[axes[1]])],
        sorted([(sizes[d], unroll[d]) for d in sizes], key=lambda x: x[0] != arch.rows))
    if precision:
        row("input, weight bits", [arch.operand_bits] * 2, [precision.get("I"), precision.get("W")])
        row("partial sum bits", arch.acc_bits, precision.get("O"))
    return rows


def zigzag_process(onnx: Path, log: Path) -> tuple[dict, dict]:
    """ZigZag as a whole process (:mod:`benchmarks.zigzag_side`): (its times, its result)."""
    with tempfile.TemporaryDirectory(prefix="vs_zigzag_zz_") as tmp:
        out = Path(tmp) / "zigzag.json"
        times = peers.timed([sys.executable, "-m", "benchmarks.zigzag_side", str(onnx), "--json", str(out),
                             "--workdir", tmp], cwd=Path(tmp), env=peers.product_env(), log=log)
        return times, json.loads(out.read_text())


def in_process(onnx: Path, mapper: str, search: str) -> dict:
    """The labelled extra: our four stages run in this process (composition and imports done)."""
    cfg = harness.compose(overrides(onnx, mapper, search))
    with tempfile.TemporaryDirectory(prefix="vs_zigzag_inproc_") as tmp:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        harness.run_stages(cfg, "map", tmp)
        return {"cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - wall0}


def our_levels(doc: dict) -> tuple[dict, dict]:
    """Energy per level over the layers (pJ) and the totals of our ``mapping.json``."""
    levels: dict[str, float] = {}
    for layer in doc["layers"]:
        if layer["status"] != "mapped":
            raise SystemExit(f"lego_build could not map {layer['name']}: {layer['reason']}")
        for name, pj in layer["energy_breakdown_pj"].items():
            levels[name] = levels.get(name, 0.0) + pj * layer["count"]
    t = doc["totals"]
    return levels, {"energy_pj": t["energy_pj"], "latency_cycles": t["cycles"], "layers": t["layers_mapped"]}


def zigzag_levels(zz: dict) -> dict[str, float]:
    levels: dict[str, float] = {"mac": sum(layer["mac_energy_pj"] for layer in zz["layers"])}
    for layer in zz["layers"]:
        for name, per_operand in layer["mem_energy_pj"].items():
            levels[name] = levels.get(name, 0.0) + sum(per_operand.values())
    return levels


def pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f} %" if b else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--repeat", type=int, default=3, help="whole-process runs of each side, interleaved (median)")
    ap.add_argument("--mapper", default="ruby_s",
                    help="ruby_s: the array runs partial tiles, as ZigZag's spatial unrolling does")
    ap.add_argument("--search", default="rtml")
    ap.add_argument("--skip-zigzag", action="store_true", help="lego_build only (no zigzag-dse needed)")
    ap.add_argument("--force", action="store_true", help="compare even when the hardware check finds a difference")
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    onnx = resnet18_onnx()
    arch = harness.compose(["arch=zigzag_eyeriss_like"]).arch
    log = Path(tempfile.gettempdir()) / "vs_zigzag.log"
    load = {"start": peers.load()}
    ours_runs, zz_runs, doc, zz = [], [], None, None
    for i in range(repeat):  # interleaved: both sides see the same machine load
        print(f"run {i + 1} of {repeat}: lego_build (doit map) ...", flush=True)
        t, doc = peers.doit_map(overrides(onnx, args.mapper, args.search), log)
        ours_runs.append(t)
        if not args.skip_zigzag:
            print(f"run {i + 1} of {repeat}: ZigZag (python -m benchmarks.zigzag_side) ...", flush=True)
            t, zz = zigzag_process(onnx, log)
            zz_runs.append(t)
    load["end"] = peers.load()
    check = hardware_check(arch, zz["operand_precision"] if zz else None)
    differ = [r for r in check if not r["same"]]
    print(f"same hardware: {len(check) - len(differ)} of {len(check)} fields equal" +
          "".join(f"\n  DIFFERENT {r['field']}: ours {r['ours']}, ZigZag {r['zigzag']}" for r in differ))
    if differ and not args.force:
        raise SystemExit("the two tools do not describe the same hardware (--force to compare anyway)")
    levels, totals = our_levels(doc)
    ours = peers.summary(ours_runs)
    extra = {} if args.quick else {  # the test's run leaves the extra out
        "lego_build stages in process (imports, composition excluded)": in_process(onnx, args.mapper, args.search)}
    print(f"ResNet-18 ({onnx.name}, {totals['layers']} conv/fc layers) on eyeriss_like, energy objective")
    print(f"{'whole process, median':26} {'CPU s':>8} {'wall s':>8} {'energy uJ':>11} {'latency cycles':>15}")
    print(f"{'lego_build doit map':26} {ours['cpu_s']:8.2f} {ours['wall_s']:8.2f} {totals['energy_pj'] / 1e6:11.1f} "
          f"{totals['latency_cycles']:15,.0f}")
    figures = {"headline": {}, "tables": [], "ours": {**totals, "whole_process": ours, "levels_pj": levels},
               "in_process_extra": extra, "hardware_check": check, "load_average": load}
    figures["headline"]["lego_build CPU s (whole process, median)"] = round(ours["cpu_s"], 3)
    peer = None
    if zz is not None:
        theirs = peers.summary(zz_runs)
        cpu_x, wall_x = peers.ratio(theirs["cpu_s"], ours["cpu_s"]), peers.ratio(theirs["wall_s"], ours["wall_s"])
        print(f"{'ZigZag 3.9.1 process':26} {theirs['cpu_s']:8.2f} {theirs['wall_s']:8.2f} "
              f"{zz['energy_pj'] / 1e6:11.1f} "
              f"{zz['latency_cycles']:15,.0f}")
        print(f"{'ZigZag / lego_build':26} {cpu_x:7.1f}x {wall_x:7.1f}x "
              f"{pct(totals['energy_pj'], zz['energy_pj']):>11} "
              f"{pct(totals['latency_cycles'], zz['latency_cycles']):>15}")
        extra["ZigZag API call in process (imports excluded)"] = {"cpu_s": zz["cpu_s"], "wall_s": zz["wall_s"]}
        print("extra, in process (not the comparison): " + ", ".join(f"{k} {v['cpu_s']:.2f} CPU s"
                                                                     for k, v in extra.items()))
        zl = zigzag_levels(zz)
        rows = [[n, round(levels.get(n, 0.0) / 1e6, 1), round(zl.get(n, 0.0) / 1e6, 1),
                 pct(levels.get(n, 0.0), zl.get(n, 0.0))] for n in [*zl, *(n for n in levels if n not in zl)]]
        print(f"\n{'energy per level (uJ)':22} {'lego_build':>12} {'ZigZag':>12} {'difference':>12}")
        for r in rows:
            print(f"{r[0]:22} {r[1]:12.1f} {r[2]:12.1f} {r[3]:>12}")
        figures["headline"].update({
            "CPU time ZigZag / lego_build (whole processes, median)": round(cpu_x, 1),
            "wall time ZigZag / lego_build (whole processes, median)": round(wall_x, 1),
            "energy lego_build / ZigZag": round(totals["energy_pj"] / zz["energy_pj"], 4),
            "latency lego_build / ZigZag": round(totals["latency_cycles"] / zz["latency_cycles"], 4),
            "hardware fields equal": f"{len(check) - len(differ)} of {len(check)}"})
        figures["tables"] = [
            harness.table("whole processes, same sitting (medians)",
                          ["", "lego_build", "ZigZag 3.9.1", "ZigZag / ours"],
                          [["CPU s", round(ours["cpu_s"], 2), round(theirs["cpu_s"], 2), round(cpu_x, 1)],
                           ["wall s", round(ours["wall_s"], 2), round(theirs["wall_s"], 2), round(wall_x, 1)]],
                          note=f"{repeat} interleaved runs each; CPU: user + system of the process tree"),
            harness.table("energy per level (uJ)", ["level", "lego_build", "ZigZag 3.9.1", "difference"], rows)]
        peer = {"source": PEER, "whole_process": theirs, "energy_pj": zz["energy_pj"],
                "latency_cycles": zz["latency_cycles"], "levels_pj": zl, "operand_precision": zz["operand_precision"]}
    harness.write_results("vs_zigzag", figures, peer=peer, argv=argv, quick=args.quick, out=args.out, cache="warm",
                          title="ZigZag 3.9.1 vs lego_build's map stage on ResNet-18 (ONNX), whole processes",
                          notes="cache: runs interleaved in one sitting; our cache root fresh per run (the map stage "
                                "reads none); the first run of each side (coldest OS file cache) is 'first'.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
