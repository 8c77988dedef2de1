"""Named extension points: a closed vocabulary defined once, open to users' packages.

Each vocabulary (FU kinds, back-end passes, LP solvers, mapper searches, model
importers, targets) is one :class:`Registry`, kept in the package that owns it. Its
built-ins are ``name -> "module:attribute"`` (one registration line each, loaded
on first use so that ``dodo.py`` stays light); a user's package adds names with a
Python entry point in the registry's group, e.g. in its ``pyproject.toml``::

    [project.entry-points."lego_build.searches"]
    anneal = "my_plugin.anneal:SEARCH"

Entry points rather than Hydra ``_target_``: a name registered once works the
same in ``doit build``, the ``lego-build`` Hydra app, sweeps and the Python API;
configs keep naming things by short names (``mapper.search=anneal``); and
lego_build can list every installed extension (for the error that names the
choices, and for the code hash that re-runs stages when a plugin's source
changes, :func:`plugin_files`).
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, Iterator, Mapping, TypeVar

from lego_build.config.plugins import entry_points
from lego_build.errors import ConfigError

T = TypeVar("T")

#: every entry-point group lego_build reads (presets are config directories, read by
#: :func:`lego_build.config.plugins.preset_dirs`; the rest are Python objects)
GROUPS: tuple[str, ...] = ("lego_build.fus", "lego_build.passes", "lego_build.solvers", "lego_build.searches",
                           "lego_build.importers", "lego_build.targets", "lego_build.presets")


def _load(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Registry(Generic[T]):
    """Built-in entries plus the entry points of ``group``; ``key`` is the config key that
    names an entry (it starts every error message)."""

    group: str
    key: str
    builtins: Mapping[str, str]
    _cache: dict[str, T] = field(default_factory=dict, compare=False, repr=False)

    def _plugins(self) -> dict[str, metadata.EntryPoint]:
        eps = {ep.name: ep for ep in entry_points(self.group)}
        clash = sorted(set(eps) & set(self.builtins))
        if clash:
            ep = eps[clash[0]]
            raise ConfigError(f"{self.key}={clash[0]}: the plugin entry point {ep.value!r} ({self.group}) reuses "
                              "a built-in name; rename it in the plugin's pyproject.toml")
        return eps

    def names(self) -> tuple[str, ...]:
        """Built-in names in their registration order, then plugins' names sorted."""
        return tuple(self.builtins) + tuple(self._plugins())

    def __contains__(self, name: object) -> bool:
        return name in self.builtins or name in self._plugins()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def check(self, name: str) -> None:
        """Raise :class:`ConfigError` naming the key and the choices if ``name`` is unknown."""
        if name not in self:
            raise ConfigError(f"{self.key}={name}: unknown; choose one of {', '.join(self.names())} "
                              f"(or install a plugin that adds it to the entry-point group {self.group})")

    def get(self, name: str) -> T:
        """The registered object (loaded once per process)."""
        if name in self._cache:
            return self._cache[name]
        self.check(name)
        if name in self.builtins:
            obj = _load(self.builtins[name])
        else:
            ep = self._plugins()[name]
            try:
                obj = ep.load()
            except Exception as exc:  # a plugin's import error is the plugin's: name it in one line
                raise ConfigError(f"{self.key}={name}: cannot load plugin {ep.value!r}: "
                                  f"{type(exc).__name__}: {exc}") from None
        self._cache[name] = obj
        return obj


def plugin_files() -> list[tuple[str, Path]]:
    """Source files (``*.py``, ``*.yaml``) of every installed plugin package as ``(name, path)``,
    ``name`` relative to the package's parent (no machine paths), for the code hash: editing a
    plugin re-runs the stages, as editing lego_build does."""
    roots: dict[str, Path] = {}
    for group in GROUPS:
        for ep in entry_points(group):
            top = ep.value.partition(":")[0].split(".")[0]
            spec = None if top in roots else importlib.util.find_spec(top)
            if spec is None:
                continue
            if spec.submodule_search_locations:
                roots[top] = Path(list(spec.submodule_search_locations)[0])
            elif spec.origin:
                roots[top] = Path(spec.origin)
    files: list[tuple[str, Path]] = []
    for _, root in sorted(roots.items()):
        paths = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.suffix in (".py", ".yaml") and p.is_file() and "__pycache__" not in p.parts)
        files += [(p.relative_to(root.parent).as_posix(), p) for p in paths]
    return files
