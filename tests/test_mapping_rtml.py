"""RTML pruned mapper (seed 000 §3.2.3-3.2.7): the loop-order trie and tile footprints.

The paper's maximal tiles, unrolling and level search live in ``benchmarks/rtml_paper.py``,
tested in ``tests/test_benchmarks_rtml_levels.py``.
"""
import itertools
from math import factorial

import pytest

from benchmarks.rtml_paper import RESNET_L1, conv1d
from lego_build.analysis.kernels import conv2d, gemm, mttkrp, ttmc
from lego_build.mapping.rtml import _row_distinct, order_trie

# ---------------------------------------------------------------- §3.2.3-3.2.6 loop-order trie

def test_trie_reproduces_fig8_on_the_running_example():
    """Fig. 8: xxRK and xxPK kept; xxCK, xxKR, xxPR pruned by R1; xxxC pruned by R2 (xxCR)."""
    trie = order_trie(conv1d(4, 14, 4, 3))
    assert {c.label for c in trie.candidates} == {"x x r k", "x x p k", "x x c r", "x x x p"}
    rules = {r.prefix: r.rule for r in trie.rejected}
    assert rules[("c", "k")] == rules[("k", "r")] == rules[("p", "r")] == "R1"
    assert rules[("c",)] == "R2" and "x x c r" in next(r.reason for r in trie.rejected if r.prefix == ("c",))
    assert len(trie.candidates) + sum(r.orders for r in trie.rejected) == factorial(4)


def test_batched_conv_orders_5040_to_8():
    """§3.2.6: batched conv (n, oc, ic, oh, ow, kh, kw; g = 1 ignored) 7! = 5040 -> 8 (paper: 10)."""
    trie = order_trie(conv2d(4, 64, 64, 56, 56, 3, 3, 1, 1))
    assert trie.dims == ("n", "oc", "ic", "oh", "ow", "kh", "kw") and trie.ignored == ("g",)
    assert trie.space == 5040 and len(trie.candidates) == 8
    # The 8 kept inner-loop suffixes (outer -> inner), by hand from the reuse of conv2d: the ifmap X
    # (indexed by n, ic, oh+kh, ow+kw) is reused fully over oc and partially over oh, ow, kh, kw;
    # the weights W (oc, ic, kh, kw) fully over n, oh, ow; the ofmap Y (n, oc, oh, ow) fully
    # over ic, kh, kw. A partial-reuse loop ends its tensor's chain (Obs. 1).
    #   innermost oh: W goes on through n and ow. n comes first in kernel order, so the trie
    #     keeps oh <- n <- ow; oh <- ow <- n would give the same reuse (R2 (i)). Every loop
    #     left indexes W.                             nodes: oh; oh n; oh n ow = 3
    #   innermost ow: the same with oh and ow swapped.                         3
    #   innermost kh: Y goes on through ic, then kw (kh <- kw is R2 (i)): kh; kh ic; kh ic kw = 3
    #   innermost kw: the same with kh and kw swapped.                         3
    #   innermost oc: X goes on through any one of oh, ow, kh, kw, and each ends X's chain
    #     (n and ic index X: R1).                     nodes: oc; oc+oh, +ow, +kh, +kw = 5
    #   innermost n (W only) and ic (Y only) are R2: their best reuse is a subset of the
    #     oh- and kh-chains' reuse, which also reuse X.                          0
    # The trie counts a node when it generates it and never generates a pruned one, so its nodes
    # are the distinct inner-side tails of the kept suffixes, 17 by the tally above:
    assert {c.suffix for c in trie.candidates} == {
        ("ow", "n", "oh"), ("oh", "n", "ow"), ("kw", "ic", "kh"), ("kh", "ic", "kw"),
        ("oh", "oc"), ("ow", "oc"), ("kh", "oc"), ("kw", "oc")}
    tails = {c.suffix[i:] for c in trie.candidates for i in range(len(c.suffix))}
    assert trie.late == 0 and trie.nodes == len(tails) == 3 + 3 + 3 + 3 + 5  # no pruned node was ever expanded
    assert len(trie.candidates) + sum(r.orders for r in trie.rejected) == 5040  # every order accounted for
    assert all(r.reason and r.rule in ("R1", "R2", "Obs2") for r in trie.rejected)
    orders = order_trie(conv2d(4, 64, 64, 56, 56, 3, 3, 1, 1)).orders  # what the mapspace takes from the trie
    assert all(o[0] == "g" and sorted(o) == sorted(d.name for d in RESNET_L1.dims) for o in orders)
    assert len(order_trie(RESNET_L1).orders) == 8  # batch 1: n ignored too, 6! = 720 -> 8


@pytest.mark.parametrize("kernel, expected", [
    (gemm(64, 64, 64, batch=4), 3), (mttkrp(8, 8, 8, 8), 7), (ttmc(4, 4, 4, 4, 4), 10),
    (conv2d(2, 32, 64, 28, 28, 1, 1, 2, 0), 3),  # 1x1 stride 2: no window reuse
])
def test_trie_other_kernels(kernel, expected):
    trie = order_trie(kernel)
    assert len(trie.candidates) == expected and trie.late == 0
    assert len(trie.candidates) + sum(r.orders for r in trie.rejected) == trie.space


# ---------------------------------------------------------------- §3.2.7 footprints

def test_row_distinct_matches_brute_force():
    for terms in [((1, 5), (1, 3)), ((2, 4), (1, 3)), ((2, 4), (1, 1)), ((3, 5), (2, 4)), ((2, 7), (1, 2)),
                  ((4, 3), (2, 3)), ((1, 6),), ((2, 3), (3, 2), (1, 2))]:
        brute = {sum(c * i for (c, _), i in zip(terms, it)) for it in itertools.product(*(range(e) for _, e in terms))}
        assert _row_distinct(terms) == len(brute)
