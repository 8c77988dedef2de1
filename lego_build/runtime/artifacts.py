"""Reading and writing a design's typed JSON artifacts (:mod:`lego_build.ir.artifacts`).

:func:`write_artifact` checks the object against the artifact's type, adds
``format_version`` and writes atomically (journaled, :mod:`lego_build.runtime.atomic`);
:func:`read_artifact` refuses a file of another format version or whose keys are not
its type's, with one line that names the file and says to rebuild it.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from lego_build.errors import StageError
from lego_build.ir.artifacts import ARTIFACTS
from lego_build.ir.serialize import from_jsonable, to_jsonable
from lego_build.runtime.atomic import read_json, write_json

VERSION_KEY = "format_version"


def encode(name: str, obj: Any) -> dict:
    """The JSON object of artifact ``name`` (a path of :data:`ARTIFACTS`), with its format version."""
    spec = ARTIFACTS[name]
    if not isinstance(obj, spec.type):
        raise TypeError(f"{name}: expected {spec.type.__name__}, got {type(obj).__name__}")
    if spec.type.__name__ == "RtlManifest":
        doc = dict(obj.files)
    else:
        doc = to_jsonable(obj)
        for f in dataclasses.fields(obj):
            if f.metadata.get("omit_none") and doc[f.name] is None:
                del doc[f.name]
    doc[VERSION_KEY] = spec.version
    return doc


def decode(name: str, doc: dict, where: Path | str = "") -> Any:
    """The typed object of artifact ``name`` from its JSON object."""
    spec = ARTIFACTS[name]
    where = where or name
    version = doc.get(VERSION_KEY)
    if version != spec.version:
        raise StageError(f"{where}: format version {version} (this lego_build reads {spec.version}); "
                         "rebuild the design (doit clean, then doit build)")
    body = {k: v for k, v in doc.items() if k != VERSION_KEY}
    if spec.type.__name__ == "RtlManifest":
        return spec.type(files=body)
    known = {f.name for f in dataclasses.fields(spec.type)}
    required = {f.name for f in dataclasses.fields(spec.type)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    extra, missing = sorted(set(body) - known), sorted(required - set(body))
    if extra or missing:
        raise StageError(f"{where}: {'unknown key ' + extra[0] if extra else 'missing key ' + missing[0]} "
                         f"for {spec.type.__name__}; rebuild the design (doit clean, then doit build)")
    return from_jsonable(spec.type, body)


def write_artifact(design_dir: Path, name: str, obj: Any) -> None:
    write_json(Path(design_dir) / name, encode(name, obj))


def read_artifact(design_dir: Path, name: str) -> Any:
    path = Path(design_dir) / name
    return decode(name, read_json(path), path)


def json_object(name: str, obj: Any) -> dict:
    """The JSON object of a typed artifact without its format version (for code written against
    the file's keys, e.g. the report's tables)."""
    doc = encode(name, obj)
    del doc[VERSION_KEY]
    return doc
