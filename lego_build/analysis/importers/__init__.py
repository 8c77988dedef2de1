"""Model importers: ONNX, TFLite (flatbuffer read without TensorFlow), Timeloop problem YAML.

Each ``load(path, name, batch, bits) -> Workload`` raises :class:`ConfigError`
with one line naming the file (or the node) when the model cannot be read.
Operators that the array cannot run and no PPU implements are listed in
``Workload.unmapped``, never dropped.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from lego_build.flow.schema import ConfigError
from lego_build.ir.workload import Workload

_LOADERS = {"onnx": "onnx_import", "tflite": "tflite_import", "timeloop": "timeloop_import"}

#: what to do about a file the importer rejects (appended to its one-line reason)
_HINTS = {
    "onnx": "give an ONNX model (e.g. from torch.onnx.export) or fix the node it names",
    "tflite": "give a .tflite flatbuffer (e.g. from tf.lite.TFLiteConverter)",
    "timeloop": "give a Timeloop problem YAML (problem: {shape, instance})",
}


def load_model(kind: str, path: str, name: str, batch: int, bits: int) -> Workload:
    file = Path(path)
    if file.is_dir():
        raise ConfigError(f"workload.path={path}: is a directory; give the {kind} file itself")
    if not file.is_file():
        raise ConfigError(f"workload.path={path}: no such {kind} file; check the path "
                          "(relative to the directory doit runs in)")
    module = importlib.import_module(f"{__name__}.{_LOADERS[kind]}")
    try:
        return module.load(file, name, batch, bits)
    except ConfigError as exc:
        raise ConfigError(f"{exc}; {_HINTS[kind]}") from None
