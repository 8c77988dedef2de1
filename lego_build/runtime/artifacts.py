"""Reading and writing a design's typed JSON artifacts (:mod:`lego_build.ir.artifacts`), and the
stage runner's side of it: :class:`Inputs` (what a stage reads) and :func:`write_outputs`
(what it returns).

:func:`write_artifact` checks the object against the artifact's type, adds
``format_version`` and writes atomically (journaled, :mod:`lego_build.runtime.atomic`);
:func:`read_artifact` refuses a file of another format version or whose keys are not
its type's, with one line that names the file and says to rebuild it.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from lego_build.errors import StageError
from lego_build.ir.artifacts import ARTIFACTS
from lego_build.ir.serialize import from_jsonable, to_jsonable
from lego_build.runtime.atomic import read_json, write_json, write_text

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


class Inputs(Mapping):
    """The artifacts a stage declared as inputs, read on first use: a typed object for a JSON
    artifact of :data:`ARTIFACTS`, the text otherwise. Asking for a file the stage did not
    declare is a bug in the stage table, and says so."""

    def __init__(self, design_dir: Path, names: Iterable[str], stage: str = ""):
        self.design_dir, self._names, self._stage = Path(design_dir), tuple(names), stage
        self._cache: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(f"{name} is not an input of stage {self._stage}; declare it in "
                           "lego_build.flow.stages.STAGES")
        if name not in self._cache:
            path = self.design_dir / name
            self._cache[name] = read_artifact(self.design_dir, name) if name in ARTIFACTS else path.read_text()
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def write_outputs(design_dir: Path, outputs: Mapping[str, Any], declared: Iterable[str], stage: str = "") -> None:
    """Write a stage's returned outputs in their order: a typed artifact as JSON with its format
    version, a ``str`` as text. Every path must be one the stage declares."""
    declared = set(declared)
    for name, obj in outputs.items():
        if name not in declared:
            raise KeyError(f"stage {stage} returned {name}, which it does not declare in "
                           "lego_build.flow.stages.STAGES")
        if name in ARTIFACTS:
            write_artifact(design_dir, name, obj)
        elif isinstance(obj, str):
            write_text(Path(design_dir) / name, obj)
        else:
            raise TypeError(f"stage {stage}: {name} must be text, got {type(obj).__name__}")
