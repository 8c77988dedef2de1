"""Model importers: ONNX, TFLite (flatbuffer read without TensorFlow), Timeloop problem YAML.

Each importer is an :class:`~lego_build.analysis.importers.common.Importer` whose
``load(path, name, batch, bits) -> Workload`` raises :class:`ConfigError` with one
line naming the file (or the node) when the model cannot be read. Operators that
the array cannot run and no PPU implements are listed in ``Workload.unmapped``,
never dropped. A new format is one module defining ``IMPORTER`` plus one line in
:data:`IMPORTERS` (or, outside lego_build, an entry point in ``lego_build.importers``);
its name is the ``workload.kind`` of a model-file workload.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lego_build.analysis.importers.common import Importer, SettingError
from lego_build.errors import ConfigError
from lego_build.ir.workload import Workload
from lego_build.runtime.registry import Registry

IMPORTERS: Registry[Importer] = Registry("lego_build.importers", "workload.kind", {
    "onnx": "lego_build.analysis.importers.onnx_import:IMPORTER",
    "tflite": "lego_build.analysis.importers.tflite_import:IMPORTER",
    "timeloop": "lego_build.analysis.importers.timeloop_import:IMPORTER",
})


def load_model(kind: str, path: str, name: str, batch: int, bits: int,
               symbols: Mapping[str, int] | None = None) -> Workload:
    """The model file's workload; ``symbols`` (``workload.symbols``) go to an importer that takes them."""
    importer = IMPORTERS.get(kind)
    if symbols and not importer.symbols:
        raise ConfigError(f"workload.symbols: a {kind} model has no named dims to set; remove workload.symbols")
    file = Path(path)
    if file.is_dir():
        raise ConfigError(f"workload.path={path}: is a directory; give the {kind} file itself")
    if not file.is_file():
        raise ConfigError(f"workload.path={path}: no such {kind} file; check the path "
                          "(relative to the directory doit runs in)")
    try:
        if importer.symbols:
            return importer.load(file, name, batch, bits, symbols=dict(symbols or {}))
        return importer.load(file, name, batch, bits)
    except SettingError:
        raise
    except ConfigError as exc:
        raise ConfigError(f"{exc}; {importer.hint}") from None
