"""Seed 002 (Ruby) mapspaces: Table I counts, the Fig. 5 example, validity and inclusion."""
import itertools

import pytest

from lego_build.mapping.tiling import (
    SPACES,
    TABLE1_PAPER,
    TABLE1_SIZES,
    Level,
    Tiling,
    best_tiling,
    count_tilings,
    enumerate_tilings,
    table1_count,
    table1_levels,
)

FIG5 = (("temporal", None), ("temporal", 1024), ("spatial", 6))  # DRAM, GLB (1 KiB), 6 PEs

# This module's (canonical) Table I rows: distinct tilings within fanout 9 and tile 1024.
CANONICAL = {
    "pfm": (3, 22, 24, 52, 43),
    "ruby-s": (4, 42, 57, 119, 93),
    "ruby-t": (5, 146, 228, 2297, 2903),
    "ruby": (6, 232, 366, 3711, 7716),
}


def _set(D, levels, space):
    return {t.factors for t in enumerate_tilings(D, levels, space)}


def test_table1_pfm_row_and_the_inner_tile_cap():
    assert tuple(table1_count(D, "pfm") for D in TABLE1_SIZES) == TABLE1_PAPER["pfm"]
    assert count_tilings(4096, table1_levels(capacity=None), "pfm") == 46


def test_table1_canonical_rows_against_the_paper():
    rows = {s: tuple(table1_count(D, s) for D in TABLE1_SIZES) for s in SPACES}
    for s in SPACES:
        print(f"{s:7s} canonical {rows[s]}  paper {TABLE1_PAPER[s]}")
    assert rows == CANONICAL
    assert all(s >= p for s, p in zip(rows["ruby-s"], rows["pfm"]))
    levels = table1_levels()
    for D in TABLE1_SIZES:
        pfm, rs, rt, ruby = (_set(D, levels, s) for s in ("pfm", "ruby-s", "ruby-t", "ruby"))
        assert pfm <= rs <= ruby and pfm <= rt <= ruby
        assert rs & rt == pfm  # imperfect only at spatial and only at temporal levels: perfect


def test_fig5_ruby_s_saves_three_cycles_over_the_best_pfm():
    ruby_s, pfm = best_tiling(100, FIG5, "ruby-s"), best_tiling(100, FIG5, "pfm")
    assert ruby_s.factors == ((1, 1), (17, 17), (6, 4))
    assert ruby_s.iterations() == (1, 17, 100) and ruby_s.schedule()[2] == (16, 6, 4)
    assert (ruby_s.cycles(), pfm.cycles()) == (17, 20)
    assert pfm.factors[2] == (5, 5) and pfm.utilization(2) == pytest.approx(5 / 6)
    assert ruby_s.utilization(2) == pytest.approx(100 / (17 * 6))
    assert min(t.cycles() for t in enumerate_tilings(100, FIG5, "ruby")) == 17


def _brute(D, levels, space):
    """Every (P, R) combination with P <= D, kept when valid: an independent check of the generator."""
    levels = tuple(Level(*lv) for lv in levels)
    pairs = [(p, r) for p in range(1, D + 1) for r in range(1, p + 1)]
    out = set()
    for combo in itertools.product(pairs, repeat=len(levels)):
        t = Tiling(levels, combo)
        if t.is_valid(D) and t.in_space(space):
            out.add(combo)
    return out


@pytest.mark.parametrize("levels", [
    (("temporal", None), ("spatial", 3), ("temporal", 4)),
    (("spatial", 4), ("temporal", 6), ("spatial", None)),
    (("temporal", 5), ("temporal", None), ("spatial", 2)),
])
@pytest.mark.parametrize("D", [1, 7, 10])
def test_enumeration_is_exactly_the_valid_canonical_set(levels, D):
    for space in SPACES:
        got = list(enumerate_tilings(D, levels, space))
        keys = [t.factors for t in got]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert all(t.is_valid(D) and t.in_space(space) for t in got)
        assert set(keys) == _brute(D, levels, space), space


def test_every_table1_tiling_reconstructs_D_within_bounds():
    levels = table1_levels()
    for D in (64, 100, 1000):
        for space in SPACES:
            for t in enumerate_tilings(D, levels, space):
                assert t.size == D and t.respects_bounds() and t.is_canonical()
                assert t.factors[1][0] <= 9 and t.tile(2) <= 1024
                assert space != "pfm" or t.is_perfect
                assert space != "ruby-s" or all(t.kinds[i] == "spatial" for i in t.imperfect_levels())
                assert space != "ruby-t" or all(t.kinds[i] == "temporal" for i in t.imperfect_levels())


def _simulate(t):
    """Expand the loop nest: (leaf count, time) with temporal levels in sequence, spatial in parallel."""
    def go(i, last):
        if i == len(t.levels):
            return 1, 1
        p, r = t.factors[i]
        n = r if last else p
        kids = [go(i + 1, last and k == n - 1) for k in range(n)]
        combine = sum if t.levels[i].kind == "temporal" else max
        return sum(k[0] for k in kids), combine(k[1] for k in kids)
    return go(0, True)


def test_cycles_match_an_expanded_loop_nest():
    levels = (("temporal", None), ("spatial", 4), ("temporal", None), ("spatial", 3))
    tilings = list(enumerate_tilings(50, levels, "ruby"))
    assert len(tilings) > 100
    for t in tilings:
        assert _simulate(t) == (50, t.cycles())


def test_bad_inputs():
    with pytest.raises(ValueError):
        list(enumerate_tilings(10, FIG5, "imperfect"))
    with pytest.raises(ValueError):
        Level("pipeline", 2)
    with pytest.raises(ValueError):
        best_tiling(10, FIG5, "ruby").utilization(0)


@pytest.mark.parametrize("space, ic, reason", [
    ("pfm", 64, "mapper.mapspace=pfm: ic = 64 is not a multiple of the 12 the array unrolls under dataflow ic_ohoc"),
    ("ruby-t", 64, "mapper.mapspace=ruby-t: ic = 64"),
    ("pfm", 48, ""),  # 4 full steps of 12 rows
    ("pfm", 8, ""),  # fewer channels than rows: P = R = 8, a perfect factor on part of the axis
    ("ruby-s", 64, ""),  # 5 steps of 12 rows and a last one of 4: Ruby-S's remainder
    ("ruby", 64, ""),
])
def test_a_fixed_unrolling_with_a_remainder_is_outside_pfm(space, ic, reason):
    """Issue 22 / seed 002 §III: the generated array runs a partial last spatial tile; that tile
    is in Ruby-S's space, not PFM's (nor Ruby-T's, remainders at temporal levels only)."""
    from lego_build import compose
    from lego_build.analysis.kernels import conv2d
    from lego_build.mapping.hierarchy import from_conf
    from lego_build.mapping.mapspace import Mapspace, Rules
    from lego_build.mapping.model import Model

    arch = compose(["arch=eyeriss_ruby"]).arch
    kernel = conv2d(1, ic, 64, 56, 56, 1, 1, bits=16)  # a ResNet-50 1x1 layer
    ms = Mapspace(Model(kernel, from_conf(arch), 16), space, Rules(spatial=((("ic", 12),), (("oc", 2), ("oh", 7)))))
    got = ms.remainder_reason("ic_ohoc")
    assert got.startswith(reason) if reason else got == ""


def _eyeriss_unroll_space(kernel, **rules):
    from lego_build import compose
    from lego_build.mapping.hierarchy import from_conf
    from lego_build.mapping.mapspace import Mapspace, Rules
    from lego_build.mapping.model import Model

    arch = compose(["arch=eyeriss_ruby"]).arch
    rules = {"axes": (("ic", "kh", "kw"), ("oh", "ow")), "max_spatial": 12, **rules}
    return Mapspace(Model(kernel, from_conf(arch), 16), "pfm", Rules(**rules))


def test_a_square_conv_is_symmetric_under_one_swap_and_its_mirror_unrollings_are_left_out():
    """ResNet-18's layer4 conv2 (512 x 512, 7 x 7, 3 x 3): kh<->kw with oh<->ow maps the layer and
    the axes onto themselves; each unrolling left out is the renaming of one kept."""
    from lego_build.analysis.kernels import conv2d
    from lego_build.mapping.mapspace import Rules, _unordered, mirror, symmetries

    k = conv2d(1, 512, 512, 7, 7, 3, 3, pad=1, bits=16, acc_bits=32)
    axes = (("ic", "kh", "kw"), ("oh", "ow"))
    (swap,) = symmetries(k, Rules(axes=axes))
    assert swap == {"oh": "ow", "ow": "oh", "kh": "kw", "kw": "kh"}
    ms = _eyeriss_unroll_space(k)
    kept, mirrored = ms.spatial_options(), ms.mirrored()
    assert len(kept) == len(mirrored) == 6  # the 12 best unrollings come in pairs
    for sp, twin, by in mirrored:
        assert by == swap and twin in kept and sp not in kept
        assert _unordered(mirror(sp, swap)) == _unordered(twin)
    # not symmetric: a non-square image, a stride in one direction, axes or rules that tell them apart
    assert symmetries(conv2d(1, 64, 64, 56, 28, 3, 3, pad=1), Rules(axes=axes)) == ()
    assert symmetries(conv2d(1, 64, 64, 56, 56, 3, 3, stride=(2, 1), pad=1), Rules(axes=axes)) == ()
    assert symmetries(conv2d(1, 64, 64, 56, 56, 3, 1, pad=(1, 1, 0, 0)), Rules(axes=axes)) == ()
    assert symmetries(k, Rules(axes=(("ic", "kh"), ("oh", "ow")))) == ()
    assert symmetries(k, Rules(axes=axes, required=("kh", "oh"))) == ()
    assert symmetries(k, Rules(axes=axes, required=("kh", "kw"))) == (swap,)
    # a strided 1 x 1 layer (ResNet-50's layer4.0.downsample): oh<->ow alone, the filter's dims are 1
    assert symmetries(conv2d(1, 1024, 2048, 14, 14, 1, 1, stride=2, bits=16, acc_bits=32), Rules(axes=axes)) == (
        {"oh": "ow", "ow": "oh"},)
