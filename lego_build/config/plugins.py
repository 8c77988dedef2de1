"""Installed plugins, found through Python entry points (see :mod:`lego_build.runtime.registry`).

Reading the entry points scans every installed distribution (about 10 ms here), and a
composition asks several registries: the scan is cached per ``sys.path`` (what decides
which distributions are visible), so a test or a tool that puts a plugin on the path
sees it at once.
"""
from __future__ import annotations

import functools
import importlib.util
import sys
from importlib import metadata
from pathlib import Path

from lego_build.errors import ConfigError

#: the entry-point group of plugins' config presets
PRESETS_GROUP = "lego_build.presets"


@functools.lru_cache(maxsize=64)
def _scan(group: str, path: tuple[str, ...]) -> tuple[metadata.EntryPoint, ...]:
    return tuple(sorted(metadata.entry_points(group=group), key=lambda ep: ep.name))


def entry_points(group: str) -> tuple[metadata.EntryPoint, ...]:
    """The installed entry points of ``group``, sorted by name (the order is part of the build)."""
    return _scan(group, tuple(sys.path))


def preset_dirs() -> tuple[Path, ...]:
    """Config directories that plugins add, sorted by entry-point name: each entry point of
    ``lego_build.presets`` names a package holding ``arch/``, ``workload/``, ... YAML files,
    searched after ``conf/`` (a plugin preset can extend a built-in one in its defaults)."""
    dirs = []
    for ep in entry_points(PRESETS_GROUP):
        spec = importlib.util.find_spec(ep.value.partition(":")[0])
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(f"plugin presets {ep.name} = {ep.value!r} ({PRESETS_GROUP}): not an importable "
                              "package; point the entry point at the package that holds arch/ and workload/")
        dirs.append(Path(list(spec.submodule_search_locations)[0]))
    return tuple(dirs)
