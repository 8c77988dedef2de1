"""Reading an ONNX file for :mod:`.onnx_import`.

* ``onnx.load(path, load_external_data=False)``: only shapes are needed, so weights kept
  in external data files are never read (and may be absent, as in the shape-only models
  that ship with zigzag-dse). Small constants the importer looks at (Clip bounds, Pad
  amounts) are read when stored inline or produced by ``Constant`` nodes.
* ``onnx.checker.check_model`` on a copy in which external-data initializers are turned
  into graph inputs (so a missing data file is not an error); a checker failure is a
  :class:`ConfigError` ("not a valid ONNX model").
* Symbolic dims: a graph input's dim named by a ``dim_param`` (a dynamic batch ``N``, a
  sequence length) takes its value from ``symbols`` (``workload.symbols``), everywhere that
  name appears, before shape inference; each value used is a note of the workload. A
  symbolic dim without a value, a dim with neither size nor name, a symbol the model does
  not have, and a ``batch`` other than 1 (the file's shapes are the model's) are refused.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lego_build.analysis.importers.common import SettingError
from lego_build.errors import ConfigError


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def onnx_module():
    try:
        import onnx
    except ImportError as exc:  # pragma: no cover - dependency declared in pyproject
        raise ConfigError(f"workload=onnx needs the 'onnx' package ({exc})") from None
    return onnx



def read_model(onnx: Any, path: Path, where: str):
    if not path.is_file():
        raise ConfigError(f"{where}: no such onnx file")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - DecodeError, OSError, ...
        raise ConfigError(f"{where}: not a valid ONNX model ({one_line(exc)})") from None
    if not model.HasField("graph") or not model.graph.node:
        raise ConfigError(f"{where}: not a valid ONNX model (no graph nodes)")
    return model


def check_model(onnx: Any, model: Any, where: str) -> None:
    """``onnx.checker`` on a copy whose external-data initializers became graph inputs."""
    from onnx import TensorProto, helper

    try:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        inputs = {i.name for i in copy.graph.input}
        inline = []
        for t in copy.graph.initializer:
            if t.data_location == TensorProto.EXTERNAL:
                if t.name not in inputs:
                    copy.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
            else:
                inline.append(t)
        del copy.graph.initializer[:]
        copy.graph.initializer.extend(inline)
        onnx.checker.check_model(copy)
    except Exception as exc:  # noqa: BLE001 - ValidationError and friends
        raise ConfigError(f"{where}: not a valid ONNX model (checker: {one_line(exc)})") from None


def _inputs(model: Any) -> list[tuple[str, Any]]:
    """``(name, dims)`` of every graph input that is not an initializer and has a shape."""
    inits = {t.name for t in model.graph.initializer}
    return [(v.name, v.type.tensor_type.shape.dim) for v in model.graph.input
            if v.name not in inits and v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")]


def _text(dims: Any) -> str:
    return "[" + ", ".join(str(d.dim_value) if d.HasField("dim_value") else d.dim_param or "?" for d in dims) + "]"


def set_symbols(model: Any, symbols: dict[str, int], batch: int, where: str) -> tuple[str, ...]:
    """Give every symbolic dim of the graph inputs its value from ``symbols`` (and the same name
    everywhere else in the graph); the notes that say which values were used. Refused: a
    symbolic dim without a value, a dim with neither size nor name, a symbol the inputs do not
    have, and ``batch`` other than 1."""
    inputs = _inputs(model)
    named = list(dict.fromkeys(d.dim_param for _, dims in inputs for d in dims
                               if not d.HasField("dim_value") and d.dim_param))
    if batch != 1:
        how = (f"give a symbolic dim's value by name instead, e.g. 'workload.symbols={{{named[0]}: {batch}}}'"
               if named else "this model's input shapes are fixed; export it with the batch you want")
        raise SettingError(f"workload.batch={batch}: an ONNX model's sizes are its inputs' shapes; {how}")
    extra = [s for s in symbols if s not in named]
    if extra:
        have = f"its inputs' symbolic dims are {', '.join(named)}" if named else "its inputs have no symbolic dims"
        raise SettingError(f"workload.symbols.{extra[0]}: {where} has no symbolic dim {extra[0]!r} ({have}); "
                          f"remove it from workload.symbols")
    for name, dims in inputs:
        for i, d in enumerate(dims):
            if d.HasField("dim_value") and d.dim_value < 1:
                raise ConfigError(f"{where}: input {name!r} has size {d.dim_value} in dim {i} of {_text(dims)}; "
                                  "export the model with positive sizes")
            if not d.HasField("dim_value") and not d.dim_param:
                raise ConfigError(f"{where}: input {name!r} dim {i} of {_text(dims)} has neither a size nor a name; "
                                  "export the model with a fixed size there (e.g. python -m "
                                  "onnxruntime.tools.make_dynamic_shape_fixed)")
    missing = [s for s in named if s not in symbols]
    if missing:
        name, dims = next((n, dims) for n, dims in inputs if any(d.dim_param == missing[0] for d in dims))
        i = next(i for i, d in enumerate(dims) if d.dim_param == missing[0])
        example = ", ".join(f"{s}: {symbols.get(s, 1)}" for s in named)
        raise SettingError(f"{where}: input {name!r} has the symbolic dim {missing[0]!r} (dim {i} of {_text(dims)}); "
                          f"give its value, e.g. 'workload.symbols={{{example}}}'")
    notes = tuple(f"{where}: symbolic dim {s} = {symbols[s]} (workload.symbols) in input "
                  f"{next(n for n, dims in inputs if any(d.dim_param == s for d in dims))!r}" for s in named)
    graph = model.graph
    for value in (*graph.input, *graph.output, *graph.value_info):
        if value.type.HasField("tensor_type") and value.type.tensor_type.HasField("shape"):
            for dim in value.type.tensor_type.shape.dim:
                if dim.HasField("dim_param") and dim.dim_param in symbols:
                    dim.dim_value = symbols[dim.dim_param]
    return notes

