"""Cross-group checks that no single schema can make (run right after compose).

They catch, before any task runs, what would otherwise fail half-way: a model
file that cannot be read (its errors name the file or node) and a dataflow
naming dims its kernel family lacks.
Whether any layer of the workload runs on the array is the mapper's verdict, so
``doit analyze`` works for every workload whatever the arch.
"""
from __future__ import annotations

from .schema import ConfigError, LegoConfig


def validate(cfg: LegoConfig) -> None:
    """Raise :class:`ConfigError` (one line, names the key) if the groups do not fit together."""
    from lego_build.analysis.lowering import FAMILY_DIMS
    from lego_build.analysis.workloads import workload_from_config

    workload_from_config(cfg.workload)  # parses model files
    family = cfg.arch.family
    dims = FAMILY_DIMS[family]
    for axis, dim in enumerate(cfg.arch.spatial):
        if dim not in dims:
            raise ConfigError(
                f"arch.spatial[{axis}]={dim!r}: arch.family={family} has no such dim (dims: {', '.join(dims)})"
            )
