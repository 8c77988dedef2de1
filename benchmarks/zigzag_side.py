"""Side-by-side reference numbers from ZigZag (zigzag-dse 3.9.x) on its stock hardware.

    python -m benchmarks.zigzag_side [model.onnx] [--hardware eyeriss_like] [--lpf-limit 6] [--json FILE]

Runs ZigZag's public API (``zigzag.api.get_hardware_performance_zigzag``) on an ONNX
model with one of the accelerator descriptions shipped inside the zigzag package
(``zigzag/inputs/hardware/<name>.yaml``) and the stock mapping file that goes with
it, optimising every layer for energy (LOMA temporal-mapping search).
Without arguments it prints a per-layer table and the totals for the ResNet-18
ONNX model shipped with zigzag on ``eyeriss_like``; ``--json FILE`` also writes the result
(:func:`run_zigzag`'s dict): :mod:`benchmarks.vs_zigzag` runs this module as ZigZag's whole
process, as a user would run ZigZag.

Units, as in ZigZag: energies are in pJ (memory ``r_cost``/``w_cost`` are pJ per
access of one port word, ``unit_energy`` is pJ per MAC); latencies are in clock
cycles (ZigZag's ``latency_total2``: computation + stalls + initial onloading +
final offloading).  ``utilization`` is ZigZag's ``mac_utilization2``: ideal cycles
at 100 % array use divided by ``latency_total2``.
"""
from __future__ import annotations

if __name__ == "__main__" and not __package__:  # python benchmarks/zigzag_side.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.zigzag_side)

import importlib.util
import json
import logging
import math
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

MISSING_MESSAGE = "zigzag-dse is not installed: pip install -e '.[dev]'"

# Stock mapping file for each stock hardware file. zigzag-dse ships no eyeriss-specific
# mapping: its generic default.yaml (D1: K, D2: C) is the one to use with eyeriss_like.
STOCK_MAPPINGS = {
    "eyeriss_like": "default.yaml",
    "meta_prototype": "meta_prototype_like.yaml",
    "gemm_l1": "gemm_l1.yaml",
    "gemm_l1_l3": "gemm_l1_l3.yaml",
    "aimc": "default_imc.yaml",
    "dimc": "default_imc.yaml",
}

# Layer operand names -> what they hold in a convolution / GEMM.
OPERAND_ROLE = {"I": "input", "W": "weight", "O": "output"}

_QUIET_LEVEL = logging.ERROR
# Relative tolerance of the energy bookkeeping checks (sums of floats).
_REL_TOL = 1e-9


def _zigzag_root() -> Path:
    spec = importlib.util.find_spec("zigzag")
    if spec is None or spec.origin is None:
        raise RuntimeError(MISSING_MESSAGE)
    return Path(spec.origin).parent


def _import_api() -> Any:
    """Import ``zigzag.api``. zigzag-dse 3.9.1 imports ``six`` (only for ``six.u``, the
    identity on Python 3) without declaring it; when ``six`` is absent a throw-away
    stand-in is used for the import and removed from ``sys.modules`` afterwards."""
    _zigzag_root()
    stub_added = False
    if importlib.util.find_spec("six") is None and "six" not in sys.modules:
        stand_in = types.ModuleType("six")
        stand_in.u = lambda text: text  # type: ignore[attr-defined]
        sys.modules["six"] = stand_in
        stub_added = True
    try:
        import zigzag.api as api
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "zigzag":
            raise RuntimeError(MISSING_MESSAGE) from exc
        raise
    finally:
        if stub_added:
            sys.modules.pop("six", None)
    return api


def stock_inputs(hardware: str = "eyeriss_like") -> tuple[Path, Path]:
    """(hardware yaml, mapping yaml) shipped with zigzag for ``hardware``.
    ``hardware`` may also be a path to an accelerator yaml (then default.yaml is used)."""
    inputs = _zigzag_root() / "inputs"
    candidate = Path(hardware)
    if candidate.suffix in (".yaml", ".yml") and candidate.is_file():
        hw_file, name = candidate, candidate.stem
    else:
        hw_file, name = inputs / "hardware" / f"{hardware}.yaml", hardware
    if not hw_file.is_file():
        known = sorted(p.stem for p in (inputs / "hardware").glob("*.yaml"))
        raise ValueError(f"unknown hardware {hardware!r}; stock ones: {', '.join(known)}")
    mapping_name = STOCK_MAPPINGS.get(name, f"{name}.yaml")
    mapping_file = inputs / "mapping" / mapping_name
    if not mapping_file.is_file():
        mapping_file = inputs / "mapping" / "default.yaml"
    return hw_file, mapping_file


class _QuietZigzag:
    """Silence ZigZag's logging for the duration of a call and undo its side effects:
    ``get_hardware_performance_zigzag`` calls ``logging.basicConfig(level=INFO)``,
    which would otherwise install a root handler for the rest of the process."""

    def __enter__(self) -> "_QuietZigzag":
        root = logging.getLogger()
        self._root_handlers = list(root.handlers)
        self._root_level = root.level
        self._placeholder = logging.NullHandler()
        root.addHandler(self._placeholder)  # makes basicConfig a no-op
        self._zz = logging.getLogger("zigzag")
        self._zz_level = self._zz.level
        self._zz.setLevel(_QUIET_LEVEL)
        return self

    def __exit__(self, *exc: object) -> None:
        root = logging.getLogger()
        for handler in list(root.handlers):
            if handler not in self._root_handlers:
                root.removeHandler(handler)
        root.setLevel(self._root_level)
        self._zz.setLevel(self._zz_level)


def _spatial_mapping_text(cme: Any) -> str:
    """Integer unrolling per array dimension, e.g. ``D1: K 14 | D2: C 3``."""
    parts = []
    for oa_dim in sorted(cme.layer.spatial_mapping, key=str):
        unrolls = cme.layer.spatial_mapping[oa_dim]
        loops = ", ".join(f"{dim} {factor:g}" for dim, factor in unrolls.items())
        parts.append(f"{oa_dim}: {loops}")
    return " | ".join(parts)


def _level_names(cme: Any, layer_op: Any) -> list[str]:
    mem_op = cme.memory_operand_links.layer_to_mem_op(layer_op)
    return [level.name for level in cme.accelerator.mem_hierarchy_dict[mem_op]]


def _temporal_mapping_text(cme: Any) -> str:
    """Temporal loops innermost first, each tagged with the memory level that holds each
    operand while that loop runs, e.g. ``FY 7 [O:rf_16B W:rf_64B_W I:rf_64B_A]``."""
    per_op = cme.temporal_mapping.mapping_dic_origin
    operands = sorted(per_op, key=lambda op: "OWI".find(str(op)))
    located: dict[Any, list[str]] = {}
    loops: list[tuple[Any, Any]] = []
    for op in operands:
        names = _level_names(cme, op)
        located[op] = [names[level] for level, level_loops in enumerate(per_op[op]) for _ in level_loops]
        flat = [loop for level_loops in per_op[op] for loop in level_loops]
        if not loops:
            loops = flat
    texts = []
    for index, (dim, size) in enumerate(loops):
        where = " ".join(f"{op}:{located[op][index]}" for op in operands)
        texts.append(f"{dim} {size:g} [{where}]")
    return " ; ".join(texts) if texts else "(no temporal loops)"


def _memory_energy(cme: Any) -> dict[str, dict[str, float]]:
    """{memory level name: {layer operand: pJ}} from ZigZag's per-operand breakdown."""
    found: dict[str, dict[str, float]] = {}
    for layer_op, per_level in cme.mem_energy_breakdown.items():
        for name, energy in zip(_level_names(cme, layer_op), per_level):
            found.setdefault(name, {})[str(layer_op)] = float(energy)
    # Innermost level first, in the order of the hardware description.
    order = [level.name for level in cme.accelerator.memory_hierarchy.mem_level_list]
    return {name: found[name] for name in sorted(found, key=lambda n: order.index(n) if n in order else len(order))}


def _check(result: dict[str, Any]) -> None:
    layers = result["layers"]
    layer_sum = math.fsum(layer["energy_pj"] for layer in layers)
    if not math.isclose(layer_sum, result["energy_pj"], rel_tol=_REL_TOL):
        raise RuntimeError(f"per-layer energies sum to {layer_sum} pJ, total is {result['energy_pj']} pJ")
    for layer in layers:
        parts = [layer["mac_energy_pj"]] + [e for ops in layer["mem_energy_pj"].values() for e in ops.values()]
        if not math.isclose(math.fsum(parts), layer["energy_pj"], rel_tol=_REL_TOL):
            raise RuntimeError(f"{layer['name']}: MAC + memory energy {math.fsum(parts)} pJ != {layer['energy_pj']} pJ")


def run_zigzag(
    onnx_path: str,
    hardware: str = "eyeriss_like",
    workdir: str | None = None,
    lpf_limit: int = 6,
) -> dict:
    """Run ZigZag on ``onnx_path`` with a stock accelerator and its stock mapping, minimising
    energy per layer. ZigZag's dumps (json, pickle, loop orderings, a png) go to ``workdir``
    (a temporary directory, removed afterwards, when None). See the module docstring for units."""
    api = _import_api()
    hw_file, mapping_file = stock_inputs(hardware)
    onnx_file = Path(onnx_path)
    if not onnx_file.is_file():
        raise FileNotFoundError(onnx_path)

    scratch = tempfile.TemporaryDirectory(prefix="zigzag_side_") if workdir is None else None
    base = Path(scratch.name if scratch is not None else workdir)
    dump = base / "zigzag_outputs"
    dump.mkdir(parents=True, exist_ok=True)
    try:
        with _QuietZigzag():
            start, cpu0 = time.perf_counter(), time.process_time()
            energy, latency, answers = api.get_hardware_performance_zigzag(
                workload=str(onnx_file),
                accelerator=str(hw_file),
                mapping=str(mapping_file),
                opt="energy",
                dump_folder=str(dump),
                pickle_filename=str(dump / "cmes.pickle"),
                lpf_limit=lpf_limit,
                loma_show_progress_bar=False,
            )
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    finally:
        if scratch is not None:
            scratch.cleanup()

    layers = []
    for cme, _ in answers[0][1]:
        layers.append(
            {
                "name": cme.layer.name,
                "energy_pj": float(cme.energy_total),
                "latency_cycles": float(cme.latency_total2),
                "mac_energy_pj": float(cme.mac_energy),
                "mem_energy_pj": _memory_energy(cme),
                "spatial_mapping": _spatial_mapping_text(cme),
                "temporal_mapping": _temporal_mapping_text(cme),
                "utilization": float(cme.mac_utilization2),
            }
        )
    first = answers[0][1][0][0].layer if answers[0][1] else None
    result = {
        "wall_s": wall,
        "cpu_s": cpu,  # the API call's, in this process (imports and the interpreter's start excluded)
        "operand_precision": {str(op): int(b) for op, b in first.operand_precision.data.items()} if first else {},
        "energy_pj": float(energy),
        "latency_cycles": float(latency),
        "layers": layers,
    }
    _check(result)
    return result


def _print_report(result: dict, title: str) -> None:
    print(title)
    header = f"{'layer':<46}{'energy pJ':>16}{'MAC pJ':>14}{'latency cc':>13}{'util':>7}  spatial"
    print(header)
    print("-" * len(header))
    for layer in result["layers"]:
        print(
            f"{layer['name']:<46}{layer['energy_pj']:>16.6g}{layer['mac_energy_pj']:>14.6g}"
            f"{layer['latency_cycles']:>13.0f}{layer['utilization']:>7.3f}  {layer['spatial_mapping']}"
        )
    print("-" * len(header))
    print(f"{'total':<46}{result['energy_pj']:>16.6g}{'':>14}{result['latency_cycles']:>13.0f}")
    levels: dict[str, dict[str, float]] = {}
    for layer in result["layers"]:
        for name, ops in layer["mem_energy_pj"].items():
            for op, energy in ops.items():
                levels.setdefault(name, {}).setdefault(op, 0.0)
                levels[name][op] += energy
    print("memory energy over all layers (pJ):")
    for name, ops in levels.items():
        print(f"  {name:<12}" + "  ".join(f"{op}={energy:.6g}" for op, energy in ops.items()))
    print(f"MAC energy over all layers: {math.fsum(ly['mac_energy_pj'] for ly in result['layers']):.6g} pJ")
    print(f"ZigZag wall time: {result['wall_s']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("onnx", nargs="?", help="ONNX model (default: zigzag's resnet18.onnx)")
    parser.add_argument("--hardware", default="eyeriss_like")
    parser.add_argument("--lpf-limit", type=int, default=6)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--json", default=None, help="also write the result to this file (JSON)")
    args = parser.parse_args(argv)
    try:
        onnx = args.onnx or str(_zigzag_root() / "inputs" / "workload" / "resnet18.onnx")
        result = run_zigzag(onnx, hardware=args.hardware, workdir=args.workdir, lpf_limit=args.lpf_limit)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    _print_report(result, f"ZigZag: {Path(onnx).name} on {args.hardware}, opt=energy, lpf_limit={args.lpf_limit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
