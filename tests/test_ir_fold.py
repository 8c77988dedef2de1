"""Bank folding (lego_build.ir.fold): which idle banks deepen which used lane."""
from __future__ import annotations

import random

from lego_build.ir.fold import fold_bits, fold_factor, fold_groups


def test_sixteen_roots_of_256_lanes_get_sixteen_banks_each():
    # an MN dataflow on a 16x16 array reading the input at one FU per row (links forward it)
    pack = tuple(r if c == 0 else -1 for r in range(16) for c in range(16))
    assert fold_factor(pack) == 16
    groups = fold_groups(pack)
    assert sorted(groups) == [16 * r for r in range(16)]
    assert groups[0] == (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
    assert groups[16][:2] == (16, 17)


def test_worked_examples():
    assert fold_factor((0, 1, 2, 3)) == 1  # every lane used: nothing to fold
    assert fold_factor((-1, -1, -1)) == 1  # a tensor the dataflow does not read
    assert fold_factor((0, -1, 1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)) == 4  # 16 // 3 = 5 -> 4
    assert fold_groups((0, -1, 1, -1, -1, 2, -1, -1)) == {0: (0, 1), 2: (2, 3), 5: (5, 4)}
    assert fold_bits(((0, 1, 2, 3), (0, -1, -1, -1))) == 2


def test_groups_are_disjoint_and_start_with_their_lane():
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(1, 64)
        pack = tuple(rng.choice((-1, 0)) for _ in range(n))
        g = fold_factor(pack)
        groups = fold_groups(pack)
        banks = [j for group in groups.values() for j in group]
        assert len(banks) == len(set(banks)) <= n
        assert all(len(group) == g and group[0] == u for u, group in groups.items())
        assert all(pack[j] < 0 for group in groups.values() for j in group[1:])
        assert g & (g - 1) == 0 and (not groups or g * len(groups) <= n < 2 * g * len(groups))
