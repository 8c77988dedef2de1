"""Parse the arch's dataflows into :class:`~lego_build.ir.dataflow.Dataflow` and check them.

Two spellings: per-axis dim lists (``spatial: [m, n]``, ``spatial: ["x:4,k:4", c]``)
and Interstellar's ``U|V`` notation (seed 001 ch. 3): ``C|K``, ``FY|Y``, replication
``C|K4X4`` (the leftmost loop is innermost: neighbours differ in K) and hierarchy
``[c|k, x2|y2]`` (entry ``i`` is unrolled at level ``i``; level 0 is innermost).
Interstellar's conv loops are B K C Y X FY FX; on the ``gemm`` family B, K, C name
the rows, columns and reduction of a fully connected layer (m, n, k).

A temporal dataflow lists loops outer to inner: ``kh`` or, for a tiled dim,
several levels such as ``[ic, kh, kw, ic:4]`` (the inner ``ic`` level runs 4 trips,
the outer one the rest). A dataflow is accepted only if ``i = M_T t + M_S s`` is a
bijection onto the iteration space: every axis's extents multiply to the array
size, every dim has exactly one open (outermost) temporal level, and no
coordinate is named twice; the error names the offending dim or axis.
"""
from __future__ import annotations

import re
from math import prod

from lego_build.analysis.lowering import FAMILY_DIMS
from lego_build.errors import ConfigError
from lego_build.ir.dataflow import Dataflow

INTERSTELLAR = {
    "conv2d": {"B": "n", "K": "oc", "C": "ic", "Y": "oh", "X": "ow", "FY": "kh", "FX": "kw"},
    "gemm": {"B": "m", "K": "n", "C": "k"},
}
_TOKEN = re.compile(r"(FX|FY|[BKCYX])(\d*)", re.IGNORECASE)


def _axis_from_spec(spec: str, size: int, where: str, dims: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    parts = [p.strip() for p in str(spec).split(",") if p.strip()]
    if not parts:
        raise ConfigError(f"{where}={spec!r}: empty axis; give the dim it unrolls, e.g. m")
    entries = []
    for part in parts:
        dim, _, ext = part.partition(":")
        dim = dim.strip()
        if dim not in dims:
            raise ConfigError(f"{where}: dim {dim!r} is not a dim of this family; use one of {', '.join(dims)}")
        if ext and not ext.strip().isdigit():
            raise ConfigError(f"{where}: extent {ext!r} of dim {dim!r} is not a positive integer; "
                              "write dim:N, e.g. m:4")
        entries.append([dim, int(ext) if ext else 0])
    missing = [e for e in entries if e[1] == 0]
    known = prod(e[1] for e in entries if e[1])
    if len(missing) > 1:
        raise ConfigError(f"{where}={spec!r}: give extents for all but one dim, e.g. x:4,k:4")
    if missing:
        if size % known:
            raise ConfigError(f"{where}={spec!r}: extents {known} do not divide the axis size {size}; "
                              "make them divide it")
        missing[0][1] = size // known
    if prod(e[1] for e in entries) != size:
        raise ConfigError(f"{where}={spec!r}: extents multiply to {prod(e[1] for e in entries)}, "
                          f"but the axis has {size} FUs; make the extents multiply to {size}")
    if any(e[1] < 1 for e in entries):
        raise ConfigError(f"{where}={spec!r}: every extent must be >= 1")
    return tuple((d, e) for d, e in entries)


def interstellar_axes(text: str, family: str, where: str) -> list[str]:
    """``"C|K4X4"`` -> per-axis specs ``["ic", "ow:4,oc:4"]`` (outer to inner)."""
    names = INTERSTELLAR.get(family)
    if names is None:
        raise ConfigError(f"{where}: Interstellar notation is defined for conv2d and gemm, not {family}; "
                          "use spatial instead")
    text = text.strip()
    levels = [lv.strip() for lv in text.strip("[]").split(",")] if text.startswith("[") else [text]
    axes: list[list[str]] = [[], []]
    for level in levels:  # level 0 (innermost) first
        sides = level.split("|")
        if len(sides) != 2:
            raise ConfigError(f"{where}={text!r}: each level needs one '|' between the two array axes")
        for j, side in enumerate(sides):
            tokens = _TOKEN.findall(side.replace(" ", ""))
            if "".join(t + n for t, n in tokens).upper() != side.replace(" ", "").upper() or not tokens:
                raise ConfigError(f"{where}={text!r}: cannot read {side!r}; write loops B K C Y X FY FX, e.g. C|K")
            # leftmost loop is innermost: it goes last in outer-to-inner order
            for token, number in tokens:
                dim = names.get(token.upper())
                if dim is None:
                    raise ConfigError(f"{where}={text!r}: loop {token} has no counterpart in the {family} family; use "
                                      f"{', '.join(sorted(names))}")
                axes[j].insert(0, f"{dim}:{number}" if number else dim)
    return [",".join(axis) for axis in axes]


def _temporal_entry(entry: str, where: str, family: str, dims: tuple[str, ...]) -> tuple[str, int]:
    dim, _, trips = entry.partition(":")
    dim = dim.strip()
    if dim not in dims:
        raise ConfigError(f"{where}: dim {dim!r} is not a dim of {family}; use one of {', '.join(dims)}")
    if trips and (not trips.strip().isdigit() or int(trips) < 1):
        raise ConfigError(f"{where}: trip count {trips!r} of dim {dim!r} is not a positive integer; "
                          "write dim:N, e.g. k:4")
    return dim, int(trips) if trips else 0


def parse_dataflow(name: str, conf, arch) -> Dataflow:
    where = f"arch.dataflows.{name}"
    family = arch.family
    dims = FAMILY_DIMS[family]
    if conf.interstellar and conf.spatial:
        raise ConfigError(f"{where}: give spatial or interstellar, not both")
    specs = interstellar_axes(conf.interstellar, family, f"{where}.interstellar") if conf.interstellar \
        else list(conf.spatial)
    if len(specs) != 2:
        raise ConfigError(f"{where}.spatial={specs}: give one entry per array axis (2), e.g. [m,n]")
    axes = tuple(_axis_from_spec(spec, size, f"{where}.spatial[{j}]", dims)
                 for j, (spec, size) in enumerate(zip(specs, (arch.rows, arch.cols))))
    seen = set()
    for j, axis in enumerate(axes):
        for dim, _ in axis:
            if (j, dim) in seen:
                raise ConfigError(f"{where}.spatial[{j}]: dim {dim!r} twice on one axis is not bijective; "
                                  "give each dim once per axis")
            seen.add((j, dim))
    temporal = tuple(_temporal_entry(str(entry), f"{where}.temporal", family, dims) for entry in conf.temporal)
    if temporal:
        for dim in dims:
            levels = [trips for d, trips in temporal if d == dim]
            if not levels:
                raise ConfigError(f"{where}.temporal: dim {dim!r} has no loop, so the iteration space "
                                  f"would not be covered; add one, e.g. {dim} (trip count 1 is fine)")
            if levels.count(0) != 1 or levels[0] != 0:
                raise ConfigError(f"{where}.temporal: dim {dim!r} needs exactly one loop without a trip count, "
                                  "its outermost; inner levels read dim:trips (else M_T->I is not bijective)")
    stride = conf.stride
    if not isinstance(stride, int) or stride < 1:
        raise ConfigError(f"{where}.stride={stride}: give a positive integer (the conv stride the links are for)")
    if stride != 1 and family != "conv2d":
        raise ConfigError(f"{where}.stride={stride}: only a conv2d array has strided windows; remove it")
    return Dataflow(name, family, dims, axes, temporal, tuple(arch.control_flow), stride)


def arch_dataflows(arch) -> tuple[Dataflow, ...]:
    """All dataflows of the arch, in config order."""
    return tuple(parse_dataflow(name, conf, arch) for name, conf in arch.dataflows.items())
