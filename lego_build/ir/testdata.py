"""Test-data patterns of the simulation, defined once (``target.data``; generated in
:mod:`lego_build.sim.golden`)."""
from __future__ import annotations

#: every test-data set a simulated tile can run with
PATTERNS: tuple[str, ...] = ("random", "min", "max", "mixed", "alternating", "file")
#: the patterns that reach a datapath's worst cases (run on a tile's reduction tile)
EXTREMES: tuple[str, ...] = ("min", "max", "mixed", "alternating")
#: the sets generated from the kernel alone (``file`` reads ``target.data_file``)
GENERATED: tuple[str, ...] = ("random", *EXTREMES)
#: iteration points the golden model evaluates at once (about 26 MB of NumPy arrays)
GOLDEN_CHUNK = 1 << 20
