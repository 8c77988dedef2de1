"""Timeloop problem YAML -> workload IR.

A Timeloop problem (``problem: {shape: {dimensions, coefficients, data-spaces},
instance: {...}}``) already is the affine IR of seed 004 eq. 3.1: each data-space
projection row is a sum of ``[dim]`` or ``[dim, coefficient]`` terms, i.e. a row of
``M_{I->D}``; the data space marked ``read-write`` is the output.

The standard ``CNN-Layer`` problem (dims C M R S N P Q) becomes our conv2d kernel
(R, P: width; S, Q: height; Timeloop has no padding, so the input extent is
``(P-1)*Wstride + (R-1)*Wdilation + 1``), and a three-dim problem whose data spaces
project as ``[m,k] x [k,n] -> [m,n]`` becomes our gemm, so both run on the arrays.
Any other shape is kept as a generic kernel of family ``timeloop:<name>``.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from lego_build.analysis.importers.common import Importer, SettingError
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.errors import ConfigError
from lego_build.ir.workload import Dim, Kernel, Layer, TensorAccess, Workload


def load(path: Path, name: str, batch: int, bits: int) -> Workload:
    where = f"workload.path={path}"
    if batch != 1:
        raise SettingError(f"workload.batch={batch}: a Timeloop problem states its own sizes; set them in "
                           f"{path.name} (e.g. problem.instance.N) instead")
    try:
        doc = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: not valid YAML ({' '.join(str(exc).split())[:120]})") from None
    problem = doc.get("problem", doc) if isinstance(doc, dict) else None
    if not isinstance(problem, dict) or "shape" not in problem:
        raise ConfigError(f"{where}: no problem.shape (not a Timeloop problem file)")
    shape = problem["shape"]
    instance = problem.get("instance") or doc.get("instance")
    if not isinstance(shape, dict) or not isinstance(instance, dict):
        raise ConfigError(f"{where}: problem.shape and problem.instance must both be mappings")
    kernel = _kernel(shape, instance, bits, where)
    layer_name = str(shape.get("name", name))
    return Workload(name, (Layer(layer_name, kernel.name, kernel),), source=f"timeloop:{path.name}")


def _kernel(shape: dict, instance: dict, bits: int, where: str) -> Kernel:
    dims = [str(d) for d in shape.get("dimensions") or []]
    if not dims:
        raise ConfigError(f"{where}: problem.shape.dimensions is empty")
    coefficients = {c["name"]: int(c.get("default", 1)) for c in shape.get("coefficients") or []}
    for key, value in instance.items():
        if key in coefficients:
            coefficients[key] = int(value)
    bounds = {}
    for d in dims:
        value = instance.get(d, 1)
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"{where}: problem.instance.{d}={value!r} must be a positive integer")
        bounds[d] = value
    spaces = []
    for space in shape.get("data-spaces") or shape.get("data_spaces") or []:
        rows = []
        for row in space.get("projection") or []:
            coef = {d: 0 for d in dims}
            terms = row if isinstance(row[0], list) else [row]
            for term in terms:
                dim = term[0]
                if dim not in coef:
                    raise ConfigError(f"{where}: data space {space.get('name')}: unknown dimension {dim!r}")
                factor = coefficients.get(term[1], None) if len(term) > 1 else 1
                if factor is None:
                    raise ConfigError(f"{where}: data space {space.get('name')}: unknown coefficient {term[1]!r}")
                coef[dim] += factor
            rows.append(tuple(coef[d] for d in dims))
        spaces.append((str(space.get("name")), bool(space.get("read-write", False)), tuple(rows)))
    outputs = [s for s in spaces if s[1]]
    if len(outputs) != 1 or len(spaces) < 2:
        raise ConfigError(f"{where}: needs input data spaces and exactly one read-write (output) data space")
    special = _as_conv(dims, bounds, coefficients, spaces, bits) or _as_gemm(dims, bounds, spaces, bits)
    if special is not None:
        return special
    tensors = []
    for tname, out, rows in spaces:
        extent = tuple(sum(c * (bounds[d] - 1) for c, d in zip(row, dims)) + 1 for row in rows)
        tensors.append(TensorAccess(tname, "out" if out else "in", extent, rows, (0,) * len(rows),
                                    32 if out else bits))
    tensors.sort(key=lambda t: t.role == "out")
    return Kernel(f"timeloop:{shape.get('name', 'problem')}", tuple(Dim(d, bounds[d]) for d in dims), tuple(tensors))


def _as_conv(dims, bounds, coefficients, spaces, bits) -> Kernel | None:
    if sorted(dims) != sorted("CMRSNPQ"):
        return None
    b = bounds
    ws, hs = coefficients.get("Wstride", 1), coefficients.get("Hstride", 1)
    wd, hd = coefficients.get("Wdilation", 1), coefficients.get("Hdilation", 1)
    in_w = (b["P"] - 1) * ws + (b["R"] - 1) * wd + 1
    in_h = (b["Q"] - 1) * hs + (b["S"] - 1) * hd + 1
    return conv2d(b["N"], b["C"], b["M"], in_h, in_w, b["S"], b["R"], (hs, ws), 0, (hd, wd), 1, bits)


def _as_gemm(dims, bounds, spaces, bits) -> Kernel | None:
    if len(dims) != 3 or len(spaces) != 3:
        return None
    ins = [rows for _, out, rows in spaces if not out]
    (out,) = [rows for _, o, rows in spaces if o]

    def picks(rows):
        return [next((d for c, d in zip(row, dims) if c), None) for row in rows]

    o = picks(out)
    if len(o) != 2 or any(sum(1 for c in row if c) != 1 for rows in (*ins, out) for row in rows):
        return None
    m, n = o
    (k,) = [d for d in dims if d not in o]
    a = next((r for r in ins if picks(r) == [m, k]), None)
    bmat = next((r for r in ins if picks(r) == [k, n]), None)
    if a is None or bmat is None:
        return None
    return gemm(bounds[m], bounds[n], bounds[k], 1, bits)


IMPORTER = Importer("timeloop", load, "give a Timeloop problem YAML (problem: {shape, instance})")
