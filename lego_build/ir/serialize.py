"""JSON round trip for the frozen-dataclass IR (tuples become lists and back).

A type may own its JSON form: ``obj.__jsonable__()`` writes it and the classmethod
``cls.__from_jsonable__(data)`` reads it back (a DAG node keeps its typed attributes
as the ``[key, string]`` pairs of ``dag.json``, :class:`lego_build.ir.dag.Node`).
"""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, TypeVar

T = TypeVar("T")


def to_jsonable(obj: Any) -> Any:
    if hasattr(type(obj), "__jsonable__"):
        return obj.__jsonable__()
    if dataclasses.is_dataclass(obj):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    return obj


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """``(name, resolved type)`` of a dataclass's fields; resolving the string annotations
    (``get_type_hints``) is the costly part of reading a large artifact, so once per class."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def _build(tp: Any, data: Any) -> Any:
    if isinstance(tp, type) and hasattr(tp, "__from_jsonable__"):
        return tp.__from_jsonable__(data)
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        # a field left out of the file takes its default (optional fields of artifacts)
        return tp(**{name: _build(hint, data[name]) for name, hint in _fields(tp) if name in data})
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], v) for v in data)
        return tuple(_build(a, v) for a, v in zip(args, data))
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return None if data is None else _build(args[0], data)
    if origin is dict:
        _, vt = typing.get_args(tp)
        return {k: _build(vt, v) for k, v in data.items()}
    if tp is float:
        return float(data)
    return data


def from_jsonable(cls: type[T], data: Any) -> T:
    return _build(cls, data)
