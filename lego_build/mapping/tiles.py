"""Moved to :mod:`lego_build.mapping.sim_tile` (issue 43); this alias goes once its importers
(sim/, mapping/latency.py, tests) import the new name."""
from lego_build.mapping.sim_tile import edge_tile, fit_tile, reduction_tile, strides, window  # noqa: F401
