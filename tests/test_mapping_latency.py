"""The analytic latency model of a layer on lego_soc (:mod:`lego_build.mapping.latency`),
on hand-worked cases; its agreement with the RTL is tests/test_sim_memsys.py's."""
from __future__ import annotations

import pytest

from lego_build.mapping.latency import Grid, MemSystem, Traffic, bursts, layer_cycles, transfer


def test_grid_remainder_tiles_follow_ruby_last_iteration_bound():
    g = Grid(trips=(10, 7), full=(4, 7))
    assert g.tiles == (3, 1) and g.rem == (2, 7) and g.count == 3
    assert g.bounds((0, 0)) == (4, 7) and g.bounds((2, 0)) == (2, 7)


@pytest.mark.parametrize("slot, bounds, want", [
    # 32-byte rows on a 128-byte bus: one narrow beat per row, a run of 288 rows is one burst
    # of narrow beats split at 4 KB (128 beats of 32 B): 3 bursts per run, 2 runs
    (32, (2, 288), (2 * 3, 2 * 288)),
    # 256-byte rows: 2 full beats each; a run of 300 rows = 600 beats, split at 4 KB = 32 beats
    (256, (1, 300), (-(-600 // 32), 600)),
    # 128-byte rows, a run of 64: 64 beats in 2 bursts of 32 (4 KB)
    (128, (3, 64), (3 * 2, 3 * 64)),
])
def test_bursts_fold_the_contiguous_level_and_split_at_4kb(slot, bounds, want):
    t = Traffic(slot, (True, True), run_level=1)
    assert bursts(t, bounds, 128) == want


def test_bursts_without_a_contiguous_level_are_one_per_row():
    t = Traffic(32, (True, False, True), run_level=None)
    assert bursts(t, (3, 5, 4), 128) == (12, 12)  # the level it does not depend on is not moved


def test_transfer_waits_for_waves_of_outstanding_bursts():
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=64, outstanding=2, program_cycles=0, drain=0)
    # one burst of 8 beats: latency, then 8 beats at one per cycle (+2 handshake cycles)
    assert transfer(ms, 1, 8) == 64 + 2 + 8
    # 4 one-beat bursts, 2 in flight: the second wave waits for the first one's data
    assert transfer(ms, 4, 4) == 64 + 2 + (64 + 1 + 1) + 2 * 1
    # half the bandwidth: beats every other cycle
    slow = MemSystem(16, 8, 64, 16, 0, 0)
    assert transfer(slow, 1, 8) == 64 + 2 + 16


def test_layer_overlaps_loads_with_compute_and_accumulates_reduction_tiles():
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=10, outstanding=16, program_cycles=10, drain=2)
    a = Traffic(16, (True, True), run_level=1)  # depends on the outer (output) and inner (reduction) level
    out = Traffic(16, (True, False), run_level=0, output=True)
    one = layer_cycles(Grid((1, 64), (1, 64)), [a, out], ms)
    two = layer_cycles(Grid((1, 64), (1, 32)), [a, out], ms)
    # one tile: load, compute, store in sequence
    load, compute, store = 10 + 2 + 64, 10 + 2 + 64 + 2 + 1, 10 + 2 + 1
    assert one["cycles"] == load + compute + store + 1
    # two reduction tiles of one output tile: the second load hides under the first compute,
    # the output is stored once, after the last reduction tile
    assert two["cycles"] == (10 + 2 + 32) + 2 * (10 + 2 + 32 + 2 + 1) + store + 1
    assert two["beats"] == 64 + 1 and one["beats"] == 64 + 1
