"""The analytic latency model of a layer on lego_soc (:mod:`lego_build.mapping.latency`),
on hand-worked cases; its agreement with the RTL is tests/test_sim_memsys.py's."""
from __future__ import annotations

import pytest

from lego_build.mapping.latency import (
    ISSUE,
    STORE_DATA,
    STORE_EXTRA,
    WRITE_PATH,
    Grid,
    MemSystem,
    Traffic,
    bursts,
    layer_cycles,
    transfer,
)


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


def test_rows_that_share_a_beat_cost_the_transfers_their_runs_touch():
    """4-byte rows, four to a 16-byte beat: a tile of 4 runs of 7 rows, 7 rows apart in DRAM,
    starts its runs at rows 0, 7, 14, 21, i.e. at places 0, 3, 2, 1 of a beat, so they take
    2, 3, 3 and 2 beats: 10, not 28 / 4 = 7. From the tile one run further on (first row 7),
    places 3, 2, 1, 0: the same 10. Each run is one burst."""
    t = Traffic(4, (True, True), 1, fill=4, stride=(7, 1))
    assert bursts(t, (4, 7), 16) == (4, 10)
    assert bursts(t, (4, 7), 16, (1, 0)) == (4, 10)
    assert bursts(t, (1, 7), 16, (2, 0)) == (1, 3)  # row 14: place 2, beats (2 + 7 + 3) // 4
    assert bursts(Traffic(4, (True, True), 1, fill=4, stride=(8, 1)), (4, 8), 16) == (4, 8)  # aligned runs


def test_transfer_waits_for_waves_of_outstanding_bursts():
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=64, outstanding=2, program_cycles=0, drain=0)
    # one burst of 8 beats: latency, then 8 beats at one per cycle (+2 handshake cycles, +ISSUE the burst register)
    assert transfer(ms, ((1, 8),)) == 64 + 2 + ISSUE + 8
    # 4 one-beat bursts, 2 in flight: the second wave waits for the first one's data
    assert transfer(ms, ((4, 4),)) == 64 + 2 + ISSUE + (64 + 1 + 1) + 2 * 1
    # half the bandwidth: beats every other cycle, but for the two the bucket saved up during
    # the latency (the DRAM model's credit: soc_tb)
    slow = MemSystem(16, 8, 64, 16, 0, 0)
    assert transfer(slow, ((1, 8),)) == 64 + 2 + ISSUE + 2 + 6 * 2
    assert transfer(ms, ()) == transfer(ms, ((0, 0),)) == 0


def test_transfer_paces_each_tensor_by_its_own_bursts():
    """gemmini_like's layer2.0.conv2 tile (issue 42): 588 input bursts of 3 beats, then 12 weight
    bursts of 48. With 16 in flight at latency 64 the inputs are latency-bound (16 bursts per
    64 + 3 + 1 cycles: 36 full waves, then 12 bursts at their beats), the weights are not (their
    beats at one per cycle); the average burst (3.9 beats) would call the whole load
    latency-bound at 68.9 cycles per wave: 2,646 cycles where the RTL takes about 3,130."""
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=64, outstanding=16, program_cycles=0, drain=0)
    inputs = 36 * (64 + 3 + 1) + 12 * 3
    assert transfer(ms, ((588, 1764),)) == 64 + 2 + ISSUE + inputs
    # the 37th wave holds the last 12 input bursts and 4 weight bursts, the 38th the other 8:
    # it waits for the 37th's data, not for a round trip
    both = transfer(ms, ((588, 1764), (12, 576)))
    assert both == 64 + 2 + ISSUE + 36 * (64 + 3 + 1) + 12 * 3 + 4 * 48 + 8 * 48
    assert both > 3100


def test_a_load_of_fewer_bursts_than_may_be_in_flight_is_one_round_trip():
    """9 bursts with 16 in flight go out back to back: one latency, then their beats (a small
    GEMM tile of A and B rows at latency 128: 145 cycles in RTL)."""
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=128, outstanding=16, program_cycles=0, drain=0)
    assert transfer(ms, ((4, 5), (5, 7))) == 128 + 2 + ISSUE + 12


def test_layer_overlaps_loads_with_compute_and_accumulates_reduction_tiles():
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=10, outstanding=16, program_cycles=10, drain=2)
    a = Traffic(16, (True, True), run_level=1)  # depends on the outer (output) and inner (reduction) level
    out = Traffic(16, (True, False), run_level=0, output=True)
    one = layer_cycles(Grid((1, 64), (1, 64)), [a, out], ms)
    two = layer_cycles(Grid((1, 64), (1, 32)), [a, out], ms)
    # one tile: load (a cycle to decide, one to start the engine), start, steps, drain, store (its
    # beats WRITE_PATH cycles later at AXI W: the storer's pipelined write path)
    load, store = 10 + 2 + ISSUE + 64, STORE_DATA + WRITE_PATH + 10  # the head row read, the write path, the latency
    assert one["cycles"] == 2 + load + 1 + 64 + 2 + 1 + 5 + store + 1
    # two reduction tiles of one output tile: the loads run back to back (each longer than a
    # tile's 32 steps), each tile starts the cycle after its load; the output is stored once
    half = 10 + 2 + ISSUE + 32
    assert two["cycles"] == 2 * (2 + half) + 1 + 32 + 2 + 1 + 5 + store + 1
    assert two["beats"] == 64 + 1 and one["beats"] == 64 + 1


def test_tiles_start_when_the_previous_steps_are_over_not_after_its_drain():
    """Compute-bound tiles: the bounds are programmed while the previous tile steps and the
    drain overlaps the next tile (:mod:`lego_build.emit.ctrl`), so a tile costs its steps and
    one start cycle, not its drain."""
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=10, outstanding=16, program_cycles=4, drain=30)
    a = Traffic(16, (False, True), run_level=1)  # loaded once: it does not depend on the output tiles' level
    out = Traffic(16, (True, False), run_level=0, output=True)
    four = layer_cycles(Grid((4, 256), (1, 256)), [a, out], ms)  # four output tiles of 256 steps
    load, store = 10 + 2 + ISSUE + 256, STORE_DATA + WRITE_PATH + 10  # the head row read, the write path, the latency
    # the first load, then the four tiles' steps back to back, one start cycle apart (the
    # other stores hide under them), the last drain and the last store
    assert four["cycles"] == 2 + load + 1 + 4 * (256 + 1) - 1 + 30 + 1 + 5 + store + 1


def test_a_store_shares_the_channel_with_the_loads_reads_first():
    """Three output tiles of 100 steps, each loading 100 beats and storing 100 (a store-bound
    layer, as MobileNetV2's projection convs are on gemmini_like): store 0 starts with load 2
    (both wait for tile 0's drain) and, reads going first, its write beats (taken STORE_DATA
    cycles after its start, at AXI W WRITE_PATH cycles later) yield to the tail of load 1 and to
    load 2's 100; tile 2 waits for it (its output half). The rows are one beat each, and a store
    with no reads beside it sends them a beat a cycle (the storer reads rows in place)."""
    ms = MemSystem(bus_bytes=16, bytes_per_cycle=16, latency=10, outstanding=16, program_cycles=0, drain=0)
    a = Traffic(16, (True, True), run_level=1)
    out = Traffic(16, (True, True), run_level=1, output=True)
    three = layer_cycles(Grid((3, 100), (1, 100)), [a, out], ms)
    move = 10 + 2 + ISSUE + 100  # one 100-beat burst
    load = [2 + move, 2 * (2 + move)]  # back to back: 115, 230
    fin0 = load[0] + 1 + 100  # 216; load 2 then runs [217 + 1 + 13, 344]
    tail = 10 + STORE_EXTRA - 1  # the last write response, the done flag
    first0 = fin0 + 1 + STORE_DATA + WRITE_PATH  # store 0's first beat at AXI W
    store0 = first0 + (load[1] - first0) + 100 + 100 + tail  # 444: load 1's tail and load 2 inside it
    alone = STORE_DATA + WRITE_PATH + 100 + tail  # a beat a cycle
    store1 = store0 + alone  # tile 1 drained at 331, before store 0 ended
    fin2 = store0 + 1 + 100  # tile 2 waits for store 0 to free its output half
    assert store0 == 444
    assert three["cycles"] == max(fin2 + 1, store1) + alone + 1 == 695


def test_an_input_half_is_refilled_after_the_last_read_not_the_drain():
    """Load 2 goes into tile 0's half: with the half free at tile 0's last bank read (5 cycles
    after its last step) it follows load 1 (done at 230); when the half waited for the
    30-cycle drain it started after it (tile 0 drains at 246): 16 cycles later."""
    a = Traffic(16, (True, True), run_level=1)
    out = Traffic(16, (False, False), run_level=None, output=True)  # reduction tiles: one store, at the end
    grid = Grid((3, 100), (1, 100))

    def cycles(read_drain: int) -> int:
        ms = MemSystem(16, 16, 10, 16, program_cycles=0, drain=30, read_drain=read_drain)
        return layer_cycles(grid, [a, out], ms)["cycles"]
    assert cycles(30) == cycles(0)  # 0: the drain
    assert cycles(30) - cycles(5) == (116 + 100 + 30 + 1) - (230 + 1) == 16
