"""lego_build's mapper against ZigZag 3.9.1 on the same ONNX ResNet-18 and the same hardware numbers.

    python benchmarks/vs_zigzag.py [--mapper ruby_s] [--search rtml] [--skip-zigzag]

Both tools get ZigZag's stock ``eyeriss_like`` hardware (lego_build: ``arch=zigzag_eyeriss_like``,
the same 14 x 12 array, memory levels and per-access costs) and the ResNet-18 ONNX file that
ships with zigzag-dse, and minimise energy per layer. lego_build's wall time is the ``analyze``
and ``map`` stages (ONNX import, lowering, search and costing of every layer; the ``graph`` and
``optimize`` stages the map stage reads run untimed, since ZigZag generates no hardware); ZigZag's is its
API call (ONNX import, LOMA search, cost model). Prints wall time, total energy and latency for
both, and the energy per memory level. Targets: >= 10x less wall time; energy and latency
within 25 % (README, "Benchmarks", explains the per-level differences).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from zigzag_side import run_zigzag, stock_inputs  # noqa: E402

from lego_build import compose, run_stage  # noqa: E402
from lego_build.runtime.atomic import read_json  # noqa: E402


def resnet18_onnx() -> Path:
    hw, _ = stock_inputs("eyeriss_like")
    return hw.parent.parent / "workload" / "resnet18.onnx"


def run_lego(onnx: Path, mapper: str, search: str) -> dict:
    cfg = compose(["arch=zigzag_eyeriss_like", "workload=onnx", f"workload.path={onnx}", f"mapper={mapper}",
                   f"mapper.search={search}", "mapper.objective=energy"])
    with tempfile.TemporaryDirectory(prefix="vs_zigzag_") as tmp:
        work = Path(tmp)
        wall = 0.0
        with contextlib.redirect_stdout(io.StringIO()):
            for name in ("analyze", "graph", "optimize", "map"):  # the map stage reads the generated array
                start = time.perf_counter()
                run_stage(name, cfg, work)
                if name in ("analyze", "map"):  # generating the hardware is not ZigZag's part
                    wall += time.perf_counter() - start
        result = read_json(work / "mapping.json")
    levels: dict[str, float] = {}
    for layer in result["layers"]:
        if layer["status"] != "mapped":
            raise SystemExit(f"lego_build could not map {layer['name']}: {layer['reason']}")
        for name, pj in layer["energy_breakdown_pj"].items():
            levels[name] = levels.get(name, 0.0) + pj * layer["count"]
    return {"wall_s": wall, "energy_pj": result["totals"]["energy_pj"], "latency_cycles": result["totals"]["cycles"],
            "levels": levels, "layers": result["totals"]["layers_mapped"]}


def zigzag_levels(zz: dict) -> dict[str, float]:
    levels: dict[str, float] = {"mac": sum(layer["mac_energy_pj"] for layer in zz["layers"])}
    for layer in zz["layers"]:
        for name, per_operand in layer["mem_energy_pj"].items():
            levels[name] = levels.get(name, 0.0) + sum(per_operand.values())
    return levels


def ratio(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f} %" if b else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mapper", default="ruby_s",
                    help="ruby_s: the array runs partial tiles, as ZigZag's spatial unrolling does")
    ap.add_argument("--search", default="rtml")
    ap.add_argument("--skip-zigzag", action="store_true", help="lego_build only (no zigzag-dse needed)")
    args = ap.parse_args(argv)
    onnx = resnet18_onnx()
    lego = run_lego(onnx, args.mapper, args.search)
    zz = None if args.skip_zigzag else run_zigzag(str(onnx))
    print(f"ResNet-18 ({onnx.name}, {lego['layers']} conv/fc layers) on eyeriss_like, energy objective")
    print(f"{'':22} {'wall s':>9} {'energy uJ':>12} {'latency cycles':>16}")
    print(f"{'lego_build ' + args.mapper + '/' + args.search:22} {lego['wall_s']:9.2f} {lego['energy_pj'] / 1e6:12.1f} "
          f"{lego['latency_cycles']:16,.0f}")
    if zz is None:
        return 0
    print(f"{'ZigZag 3.9.1 LOMA':22} {zz['wall_s']:9.2f} {zz['energy_pj'] / 1e6:12.1f} {zz['latency_cycles']:16,.0f}")
    print(f"{'lego_build vs ZigZag':22} {zz['wall_s'] / lego['wall_s']:8.1f}x {ratio(lego['energy_pj'], zz['energy_pj']):>12} "
          f"{ratio(lego['latency_cycles'], zz['latency_cycles']):>16}")
    print()
    print(f"{'energy per level (uJ)':22} {'lego_build':>12} {'ZigZag':>12} {'difference':>12}")
    zl = zigzag_levels(zz)
    for name in [n for n in zl] + [n for n in lego["levels"] if n not in zl]:
        a, b = lego["levels"].get(name, 0.0), zl.get(name, 0.0)
        print(f"{name:22} {a / 1e6:12.1f} {b / 1e6:12.1f} {ratio(a, b):>12}")
    ok = (zz["wall_s"] >= 10 * lego["wall_s"] and abs(lego["energy_pj"] / zz["energy_pj"] - 1) <= 0.25
          and abs(lego["latency_cycles"] / zz["latency_cycles"] - 1) <= 0.25)
    print(f"\ntargets (>= 10x faster, energy and latency within 25 %): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
