"""Cross-group checks that no single schema can make (run right after compose).

They catch, before any stage runs, what would otherwise fail half-way: a
dataflow naming dims the kernel lacks, a dataflow the generated FU cannot run,
and buffers too small for the layer.
"""
from __future__ import annotations

from .schema import ConfigError, LegoConfig


def validate(cfg: LegoConfig) -> None:
    """Raise :class:`ConfigError` (one line, names the key) if the groups do not fit together."""
    from lego_build.analysis.kernels import kernel_from_config
    from lego_build.mapping.search import tiled_loops

    kernel = kernel_from_config(cfg.workload)
    dims = [d.name for d in kernel.dims]
    reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
    for axis, dim in enumerate(cfg.arch.spatial):
        if dim not in dims:
            raise ConfigError(
                f"arch.spatial[{axis}]={dim!r}: kernel {kernel.name} has no such dim (dims: {', '.join(dims)})"
            )
        if dim in reduction:
            raise ConfigError(
                f"arch.spatial[{axis}]={dim!r} is a reduction dim of {kernel.name}; the generated MAC FU "
                f"accumulates in place, so unroll output dims ({', '.join(d for d in dims if d not in reduction)})"
            )
    loops = tiled_loops(kernel, tuple(zip(cfg.arch.spatial, (cfg.arch.rows, cfg.arch.cols))))
    for tensor in kernel.tensors:
        words = 1
        for i, dim in enumerate(kernel.dims):
            if tensor.depends_on(i):
                words *= loops[dim.name].bound
        if words > cfg.arch.buffer_depth:
            raise ConfigError(
                f"arch.buffer_depth={cfg.arch.buffer_depth}: tensor {tensor.name} of workload {cfg.workload.name} "
                f"needs {words} words per bank; raise it or shrink the workload"
            )
    bound = max(loop.bound for loop in loops.values())
    counter_limit = 1 << max(16, (cfg.arch.buffer_depth - 1).bit_length())
    if bound > counter_limit:
        raise ConfigError(f"workload: a loop of {bound} trips exceeds the controller's counters ({counter_limit})")
