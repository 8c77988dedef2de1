"""Cross-group checks that no single schema can make (run right after compose)."""
from __future__ import annotations

from .schema import ConfigError, LegoConfig


def validate(cfg: LegoConfig) -> None:
    """Raise :class:`ConfigError` (one line, names the key) if the groups do not fit together."""
    from lego_build.analysis.kernels import kernel_from_config

    kernel = kernel_from_config(cfg.workload)
    dims = [d.name for d in kernel.dims]
    for axis, dim in enumerate(cfg.arch.spatial):
        if dim not in dims:
            raise ConfigError(
                f"arch.spatial[{axis}]={dim!r}: kernel {kernel.name} has no such dim (dims: {', '.join(dims)})"
            )
