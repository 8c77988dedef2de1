"""The Interstellar cost model (lego_build.mapping.model) and the Table 5.2 energies (mapping.hierarchy)."""
from dataclasses import replace

import pytest

from lego_build import compose
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.ir.mapping import Schedule
from lego_build.ir.memory import Hierarchy, MemLevel
from lego_build.mapping.grid import dim_tiling, positions
from lego_build.mapping.hierarchy import from_conf, table52_pj
from lego_build.mapping.model import Model

ALL = ("input", "weight", "output")


def three_level(glb_roles=ALL, rf=64, glb=32768, reuse=False, glb_bw=None, double=True):
    return Hierarchy("t", (
        MemLevel("rf", rf, ALL, 0.12, 0.12, 16, per_pe=True),
        MemLevel("glb", glb, glb_roles, 6, 6, 16, bandwidth_bits=glb_bw, double_buffered=double),
        MemLevel("dram", None, ALL, 200, 200, 16),
    ), 4, 4, 0.075, 0.035, operand_reuse=reuse)


# GEMM 64^3 (16-bit): m on the 4 rows, n on the 4 cols; RF keeps k 4; GLB tiles k 64, m 16, n 16
GEMM = gemm(64, 64, 64, bits=16, acc_bits=16)
SCHED = Schedule(spatial=((("m", 4),), (("n", 4),)), tiles=(("k", (4, 16)), ("m", (1, 4)), ("n", (1, 4))),
                 orders=(("b", "m", "n", "k"), ("b", "k", "m", "n"), ("b", "m", "n", "k")))


def test_table52_anchor_points_and_interpolation():
    assert table52_pj(16) == pytest.approx(0.03)
    assert table52_pj(512) == pytest.approx(0.96)
    assert table52_pj(32 * 1024) == pytest.approx(6.0)
    assert table52_pj(128 * 1024) == pytest.approx(13.5)
    assert table52_pj(512 * 1024) == pytest.approx(30.375)
    assert table52_pj(8) == pytest.approx(0.015)  # RFs double per doubling, below 16 B too
    sizes = [2 ** i for i in range(3, 21)]
    energies = [table52_pj(s) for s in sizes]
    assert energies == sorted(energies) and len(set(energies)) == len(energies)
    assert 0.96 < table52_pj(4096) < 6.0


def test_positions_put_the_array_below_the_innermost_shared_level():
    assert positions(three_level()) == (("T", 2), ("T", 1), ("S", 0), ("S", 1), ("T", 0))


def test_dim_tiling_is_the_ceil_rule_of_eq_5():
    # seed 002 fig. 5: 100 elements, 17 GLB iterations on 6 PEs, the last on 4
    t = dim_tiling(100, (1, 17, 6), ("T", "T", "S"))
    assert t.factors == ((1, 1), (17, 17), (6, 4)) and t.size == 100 and t.cycles() == 17
    t = dim_tiling(27, (1, 1, 7), ("T", "T", "S"))  # AlexNet Q = 27 as 7 + 7 + 7 + 6
    assert t.factors == ((4, 4), (1, 1), (7, 6)) and t.iterations() == (4, 4, 27)


def test_hand_counted_gemm_accesses():
    ev = Model(GEMM, three_level()).evaluate(SCHED)
    acc = {(lv, r): (rd, wr) for lv, r, rd, wr in ev.accesses}
    macs = 64 ** 3
    # A[m,k]: 4 words per PE, refetched by every loop outside the RF except the GLB's innermost n
    assert acc["rf", "input"] == (macs, 4 * 4 * 4 * 4 * 16 * 4 * 4)
    assert acc["glb", "input"] == (16 * 1024, 64 * 64)  # multicast over the 4 n columns; A read once from DRAM
    assert acc["dram", "input"] == (64 * 64, 0)
    # Y: each MAC reads and writes its partial sum (no read for the first), drained per GLB iteration
    drains = 16 * 4 * 4 * 16 * 16
    assert acc["rf", "output"] == (macs - 64 * 64 + drains, macs + drains - 64 * 64)
    assert acc["dram", "output"] == (0, 64 * 64)
    assert ev.compute_cycles == macs // 16 and ev.utilization == 1.0
    by_level = ev.by_level()
    assert by_level["mac"] == pytest.approx(macs * 0.075)
    assert sum(by_level.values()) == pytest.approx(ev.energy_pj)
    assert sum(ev.by_role().values()) == pytest.approx(ev.energy_pj)


def test_bypass_sends_weights_straight_from_dram():
    ev = Model(GEMM, three_level(glb_roles=("input", "output"))).evaluate(SCHED)
    acc = {(lv, r): (rd, wr) for lv, r, rd, wr in ev.accesses}
    assert ("glb", "weight") not in acc
    rf_fills = acc["rf", "weight"][1]
    assert acc["dram", "weight"][0] == rf_fills / 4  # one DRAM read per word, multicast over the 4 m rows


def test_remainders_cost_only_real_work():
    k = gemm(10, 4, 8, bits=16, acc_bits=16)  # m = 10 on 4 rows: tiles of 4, 4, 2
    s = Schedule(spatial=((("m", 4),), (("n", 4),)), tiles=(("k", (8, 1)),), orders=((), (), ()))
    ev = Model(k, three_level(rf=1024)).evaluate(s)
    assert ev.by_level()["mac"] == pytest.approx(10 * 4 * 8 * 0.075)
    acc = {(lv, r): (rd, wr) for lv, r, rd, wr in ev.accesses}
    assert acc["dram", "input"] == (10 * 8, 0) and acc["dram", "weight"] == (8 * 4, 0)
    assert ev.compute_cycles == 3 * 8  # three m tiles of 8 steps; the last runs on 2 of the 4 rows
    assert ev.utilization == pytest.approx(320 / (24 * 16))


def test_overflow_names_the_level_and_the_size():
    s = Schedule(spatial=((("m", 4),), (("n", 4),)), tiles=(("k", (64, 1)),), orders=((), (), ()))
    ev = Model(GEMM, three_level(rf=64)).evaluate(s)
    assert not ev.valid and ev.need == ("rf", 64 * 2 + 64 * 2 + 2, 64)
    assert ev.reason == "rf: the tile needs 258 B > 64 B"


def test_partitioned_level_checks_each_role():
    h = Hierarchy("p", (MemLevel("rf", None, ALL, 0.1, 0.1, 16, per_pe=True,
                                 partition=(("input", 8), ("output", 4), ("weight", 64))),
                        MemLevel("dram", None, ALL, 200, 200, 16)), 1, 1, 0.075, 0.0)
    k = gemm(4, 4, 4, bits=16, acc_bits=16)
    ok = Schedule(((), ()), (("k", (4,)),), ((), ()))
    assert Model(k, h).evaluate(ok).valid  # A: 4 words = 8 B, Y: 1 word, B: 4 words
    bad = Schedule(((), ()), (("k", (4,)), ("m", (2,))), ((), ()))
    ev = Model(k, h).evaluate(bad)
    assert not ev.valid and ev.need[0] == "rf (input)"


def test_operand_register_skips_rereads_of_the_same_word():
    plain = Model(GEMM, three_level()).evaluate(SCHED)
    reuse = Model(GEMM, three_level(reuse=True)).evaluate(SCHED)
    rf = {(lv, r): rd for lv, r, rd, _ in plain.accesses}
    rf_reuse = {(lv, r): rd for lv, r, rd, _ in reuse.accesses}
    # the RF's innermost loop is k, which indexes both inputs: nothing to skip for them...
    assert rf_reuse["rf", "input"] == rf["rf", "input"]
    # ...but with n innermost at the RF, A[m,k] stays in the MAC's operand register
    s = Schedule(SCHED.spatial, (("k", (1, 64)), ("n", (4, 1)), ("m", (1, 4))),
                 (("b", "k", "m", "n"), ("b", "m", "k", "n"), ("b",)))
    a = {(lv, r): rd for lv, r, rd, _ in Model(GEMM, three_level(rf=512)).evaluate(s).accesses}
    b = {(lv, r): rd for lv, r, rd, _ in Model(GEMM, three_level(rf=512, reuse=True)).evaluate(s).accesses}
    assert b["rf", "input"] == a["rf", "input"] / 4 and b["rf", "weight"] == a["rf", "weight"]


def test_roofline_latency_and_double_buffering():
    fast = Model(GEMM, three_level(glb_bw=1e9)).evaluate(SCHED)
    assert fast.cycles == fast.compute_cycles
    slow = Model(GEMM, three_level(glb_bw=16)).evaluate(SCHED)
    glb_cycles = dict(slow.level_cycles)["glb"]
    assert glb_cycles > slow.compute_cycles and slow.cycles == pytest.approx(glb_cycles, abs=1)
    serial = Model(GEMM, three_level(glb_bw=16, double=False)).evaluate(SCHED)
    assert serial.cycles == pytest.approx(serial.compute_cycles + glb_cycles, abs=1)


def test_window_footprints_share_halos_between_pes():
    k = conv2d(1, 4, 4, 16, 16, 3, 3, pad=1, bits=16, acc_bits=16)
    s = Schedule(spatial=((("kh", 3),), (("oh", 4),)), tiles=(("kw", (3, 1)),), orders=((), (), ()))
    ev = Model(k, three_level(rf=1024)).evaluate(s)
    acc = {(lv, r): (rd, wr) for lv, r, rd, wr in ev.accesses}
    # 3 filter rows x 4 output rows touch 6 input rows, not 12: the GLB serves the union
    assert acc["glb", "input"][0] == acc["rf", "input"][1] * 6 / 12


def test_without_window_forwarding_the_glb_serves_every_pe_fill():
    """AccelForge's reading (arch.window_forwarding=false): PEs share only identical blocks."""
    k = conv2d(1, 4, 4, 16, 16, 3, 3, pad=1, bits=16, acc_bits=16)
    s = Schedule(spatial=((("kh", 3),), (("oh", 4),)), tiles=(("kw", (3, 1)),), orders=((), (), ()))
    h = replace(three_level(rf=1024), window_forwarding=False)
    acc = {(lv, r): (rd, wr) for lv, r, rd, wr in Model(k, h).evaluate(s).accesses}
    assert acc["glb", "input"][0] == acc["rf", "input"][1]  # 12 input rows for 3 x 4 PEs, each its own
    # output channels on the columns do not index the input: one read multicast to the 4 PEs
    s = Schedule(spatial=((("kh", 3),), (("oc", 4),)), tiles=(("kw", (3, 1)),), orders=((), (), ()))
    acc = {(lv, r): (rd, wr) for lv, r, rd, wr in Model(k, h).evaluate(s).accesses}
    assert acc["glb", "input"][0] == acc["rf", "input"][1] / 4


def test_arch_keys_describe_operand_registers_and_window_forwarding():
    base = from_conf(compose(["arch=eyeriss_ruby"]).arch)
    assert base.operand_reuse and base.window_forwarding
    af = from_conf(compose(["arch=eyeriss_ruby", "arch.operand_registers=false", "arch.window_forwarding=false"]).arch)
    assert not af.operand_reuse and not af.window_forwarding
    # ResNet-18 layer4 conv2 row-stationary (3 filter rows x 4 channels | 7 output rows), 4 output
    # channels innermost: with registers a MAC keeps its input word over them, without it reads it
    # every MAC; without forwarding the GLB serves each PE's rows
    k = conv2d(1, 512, 512, 7, 7, 3, 3, pad=1, bits=16)
    s = Schedule(spatial=((("kh", 3), ("ic", 4)), (("oh", 7),)), tiles=(("oc", (4,)), ("kw", (1, 1, 3))),
                 orders=(("oc",), (), (), (), ()))
    on, off = ({(lv, r): (rd, wr) for lv, r, rd, wr in Model(k, h).evaluate(s).accesses} for h in (base, af))
    assert off["ifmap_spad", "input"][0] == k.macs
    assert on["ifmap_spad", "input"][0] == k.macs / 4
    assert off["glb", "input"][0] == off["ifmap_spad", "input"][1] > on["glb", "input"][0]


def test_zigzag_preset_hierarchy():
    arch = compose(["arch=zigzag_eyeriss_like"]).arch
    h = from_conf(arch)
    assert [lv.name for lv in h.levels] == ["rf_64B_A", "rf_16B", "rf_64B_W", "sram_8KB", "sram_64KB", "sram_1M",
                                            "dram"]
    assert h.fanout == 3 and h.pes == 168 and h.mac_pj == 0.5 and h.operand_reuse
    assert h.level("sram_1M").roles == ("input", "output") and h.level("dram").size_bytes is None
    ruby = from_conf(compose(["arch=eyeriss_ruby"]).arch)
    assert ruby.level("glb").read_pj == pytest.approx(13.5 * 64 / 16)  # Table 5.2 at 128 KB, 64-bit port
    assert ruby.level("weight_spad").read_pj == pytest.approx(0.03 * 448 / 16)


def test_orders_no_count_can_tell_apart_are_evaluated_once():
    """Model.order_key: the RF's two loops (k, m) are inside every memory block but the MAC's, and
    without operand registers the MAC reads every operand each step, so their order changes no
    count: both orders share one evaluation, equal to a fresh model's. With operand registers,
    B[k, n] stays in its register across an innermost m: the orders differ, and so do the counts."""
    tiles = (("k", (4, 16)), ("m", (2, 2)), ("n", (1, 4)))
    km, mk = (Schedule(SCHED.spatial, tiles, (rf, ("b", "k", "m", "n"), ()))
              for rf in (("m", "k"), ("k", "m")))
    plain = Model(GEMM, three_level())
    assert plain.order_key(plain._grid(km), km) == plain.order_key(plain._grid(mk), mk)
    assert plain.evaluate(km) is plain.evaluate(mk)
    assert Model(GEMM, three_level()).evaluate(mk) == plain.evaluate(mk)
    reuse = Model(GEMM, three_level(reuse=True))
    assert reuse.order_key(reuse._grid(km), km) != reuse.order_key(reuse._grid(mk), mk)
    rf = {o: {(lv, r): rd for lv, r, rd, _ in reuse.evaluate(s).accesses} for o, s in (("km", km), ("mk", mk))}
    assert rf["mk"]["rf", "weight"] == rf["km"]["rf", "weight"] / 2  # m's 2 trips, B kept across them


def test_a_searchs_memoised_evaluations_equal_fresh_ones():
    """Every schedule RTML with placements asks on a real layer (ResNet-18's layer3.0.conv2 on
    eyeriss_ruby's levels without operand registers, its unrolling searched), evaluated by the
    search's model (memos of tilings, tiles that fit, blocks and loop-order classes) and by a model
    of its own: the same figures, the partial schedules it scores without capacity checks included.
    The memos are used: fewer nests counted than schedules asked."""
    from lego_build.mapping.mapspace import Mapspace, Rules
    from lego_build.mapping.searches import make_search

    arch = compose(["arch=eyeriss_ruby", "arch.operand_registers=false", "arch.window_forwarding=false"]).arch
    h = replace(from_conf(arch), hop_pj=0.0)
    k = conv2d(1, 256, 256, 14, 14, 3, 3, pad=1, bits=16, acc_bits=32)
    m = Model(k, h, 16)
    asked = []
    evaluate = m.evaluate
    m.evaluate = lambda s, capacity=True: asked.append((s, capacity)) or evaluate(s, capacity)
    rules = Rules(axes=(("ic", "kh", "kw"), ("oh", "ow")), max_spatial=4)
    search = make_search("placed", Mapspace(m, "pfm", rules), "energy")
    assert search.run() is not None
    valid = [(s, c) for s, c in asked if evaluate(s, c).valid]
    assert len(valid) > 400 and any(not c for _, c in valid)  # (the partial schedules scored ahead too)
    for s, c in valid:
        assert Model(k, h, 16).evaluate(s, c) == evaluate(s, c)
    assert sum(len(g.nests) for g in m._grids.values()) < 0.75 * len(valid)  # (467 of 721)


def test_a_levels_fit_is_memoised_on_the_dims_its_tensors_depend_on():
    """eyeriss_ruby's ifmap scratchpad holds inputs only: output channels never change its answer."""
    arch = compose(["arch=eyeriss_ruby"]).arch
    k = conv2d(1, 64, 64, 56, 56, 3, 3, pad=1, bits=16, acc_bits=32)
    m = Model(k, from_conf(arch), 16)
    names = [d.name for d in k.dims]
    ifmap = [lv.name for lv in m.h.levels].index("ifmap_spad")
    small = tuple({"ic": 2, "oh": 1, "ow": 2, "kh": 1, "kw": 3}.get(d, 1) for d in names)
    big = tuple({"ic": 2, "oh": 1, "ow": 2, "kh": 1, "kw": 3, "oc": 64}.get(d, 1) for d in names)
    assert m.level_overflow(ifmap, small) is None and m.level_overflow(ifmap, big) is None
    wide = tuple({"ic": 8, "ow": 4, "kw": 3}.get(d, 1) for d in names)  # 8 x 6 inputs > 12 words
    over = m.level_overflow(ifmap, wide)
    assert over is not None and "ifmap_spad" in over.reason
    sizes = tuple(wide[i] for i in m.level_index[ifmap])
    assert m.level_overflow_of(ifmap, sizes) is over
    assert m.level_overflow(ifmap, tuple(64 if d == "oc" else n for d, n in zip(names, wide))) is over
