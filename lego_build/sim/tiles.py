"""Which tiles the simulate stage runs, and with which operands (``target.scope=tiles``).

One tile of each kind of layer the workload has (:func:`representative_tiles`, the
mapper's controller-level tile of the first mapped layer of each kind, plus the edge tile of
the first layer with remainder bounds), each with every test-data set of ``target.data``
(:func:`data_sources`: seeded random operands, the extreme patterns, or a file's arrays).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from lego_build.analysis.lowering import lower
from lego_build.analysis.stage import load_layers
from lego_build.errors import InputError, StageError
from lego_build.ir.adg import ADG
from lego_build.ir.artifacts import MappingDoc
from lego_build.ir.host import HostMap
from lego_build.ir.mapping import Mapping
from lego_build.ir.workload import Kernel, layer_kind
from lego_build.mapping.sim_tile import edge_tile, fit_tile
from lego_build.runtime.artifacts import read_artifact
from lego_build.sim.golden import file_operands, load_data_file, pattern_operands


def with_bits(kernel: Kernel, adg: ADG, out_bits: int) -> Kernel:
    """The hardware's widths: random operands span each input buffer's range (the FU's operand)."""
    return replace(kernel, tensors=tuple(
        replace(t, bits=out_bits if t.role == "out" else adg.net(t.name).bits) for t in kernel.tensors))


@dataclass(frozen=True)
class Tile:
    layer: str
    kind: str
    kernel: Kernel
    mapping: Mapping
    dataflow: str
    epilogue: tuple[str, ...] = ()  # element-wise ops after the layer (sim.ppu)
    offset: tuple[tuple[str, int], ...] = ()  # iteration offset of the tile in its layer, per dim


def representatives(design_dir: Path, adg: ADG, target) -> list[Tile]:
    """:func:`representative_tiles` of the ``mapping.json`` and ``analysis.json`` in ``design_dir``."""
    hm = design_dir / "rtl" / "host_interface.json"  # the map stage's callers have no RTL yet
    return representative_tiles(read_artifact(design_dir, "mapping.json"), load_layers(design_dir), adg, target,
                                read_artifact(design_dir, "rtl/host_interface.json") if hm.exists() else None)


def epilogues(layers) -> dict[str, tuple[str, ...]]:
    """Per array layer, the element-wise operators between it and the next array layer that
    the PPU applies (``analysis.json`` entries with ``unit: ppu``)."""
    out: dict[str, tuple[str, ...]] = {}
    last = None
    for entry, kernel in layers:
        if kernel is not None:
            last = entry["name"]
            out[last] = ()
        elif last is not None and entry.get("unit") == "ppu":
            out[last] += (entry["op"],)
    return out


def runnable(mapping: MappingDoc, adg: ADG) -> dict[str, dict]:
    """The mapped layers (by name) the array runs: those mapped to one of its dataflows
    (``mapper.unroll=search`` may map a layer for the model only: dataflow '')."""
    names = {df.name for df in adg.dataflows}
    return {e["name"]: e for e in mapping.layers if e["status"] == "mapped" and e["dataflow"] in names}


def nothing_to_simulate(mapping: MappingDoc) -> StageError:
    """Why no layer can be simulated: none mapped, or each only for the model (``mapper.unroll=search``:
    an unusable setting for a simulated build, exit 2)."""
    if any(e["status"] == "mapped" for e in mapping.layers):
        return InputError("mapper.unroll=search: no layer's unrolling is one of the array's dataflows, so the array "
                          "runs none of them; use mapper.unroll=dataflows, or doit map / target=rtl")
    return StageError("no mapped layer to simulate; use target=rtl, or a workload with a layer the mapper places")


def representative_tiles(mapping: MappingDoc, layers, adg: ADG, target, hm: HostMap | None = None) -> list[Tile]:
    """The first mapped layer of each kind present (:func:`layer_kind`: conv, grouped, depthwise,
    1x1, fc/matmul, ...), in network order, each lowered to the array's family, as the mapper's
    controller-level tile (clipped further if it exceeds ``target.tile_steps``), and run with
    the dataflow the mapper chose for its layer; plus the last (``edge``) tile of the first
    layer whose last tile has remainder bounds (Ruby's partial last tile: a layer that divides
    evenly into tiles has none, :func:`.tiles.edge_tile`). With shared output lanes (``hm``'s
    :meth:`~lego_build.ir.host.HostMap.out_period`) the clipping keeps every accumulation that long
    where it can (a shorter one holds its first step, :mod:`lego_build.emit.ctrl`)."""
    mapped = runnable(mapping, adg)
    epilogue = epilogues(layers)
    tiles: dict[str, Tile] = {}
    for entry, kernel in layers:
        if entry["name"] not in mapped or kernel is None:
            continue
        kind = layer_kind(kernel)
        if kind in tiles and "edge" in tiles:
            continue
        row = mapped[entry["name"]]
        lowered = lower(kernel, adg.kernel)
        period = hm.out_period(row["dataflow"]) if hm is not None else 1
        tile, tile_mapping = fit_tile(lowered, Mapping.from_json(row["mapping"]), adg.capacities(row["dataflow"]),
                                      target.tile_steps, row.get("tile"), period)
        if kind not in tiles:
            tiles[kind] = Tile(entry["name"], kind, tile, tile_mapping, row["dataflow"], epilogue[entry["name"]])
        edge = edge_tile(lowered, tile, tile_mapping) if "edge" not in tiles else None
        if edge is not None:  # the layer's last tile: remainder bounds where a dim does not divide evenly
            tiles["edge"] = Tile(entry["name"], "edge", edge[0], edge[1], row["dataflow"], epilogue[entry["name"]],
                                 tuple(edge[2].items()))
    if not tiles:
        raise nothing_to_simulate(mapping)
    return list(tiles.values())


@dataclass(frozen=True)
class DataSource:
    """Where a run's operands come from: a generated pattern (:data:`golden.GENERATED`) or a file."""

    pattern: str
    seed: int = 0
    arrays: dict | None = None  # the file's arrays (pattern "file")
    path: str = ""

    def operands(self, tile: Tile, kernel: Kernel, origin: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
        if self.pattern != "file":
            return pattern_operands(kernel, self.pattern, self.seed)
        try:
            return file_operands(kernel, self.arrays or {}, tile.layer, origin, self.path)
        except ValueError as exc:
            raise InputError(str(exc)) from None


def data_sources(target, seed: int | None = None) -> list[DataSource]:
    """The runs ``target.data`` asks for, in order; ``file`` loads ``target.data_file``."""
    runs = []
    for pattern in target.data:
        if pattern == "file":
            try:
                arrays = load_data_file(Path(target.data_file))
            except ValueError as exc:
                raise InputError(str(exc)) from None
            runs.append(DataSource("file", arrays=arrays, path=target.data_file))
        else:
            runs.append(DataSource(pattern, target.seed if seed is None else seed))
    return runs
