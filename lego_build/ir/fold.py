"""Bank folding: the banks a dataflow leaves idle deepen the banks it reads.

Every data node of a tensor has its own bank (a *lane*). A dataflow that reads a tensor
at ``U`` of its ``N`` lanes (the others are fed by links, or hold nothing under it) would
keep ``N - U`` banks idle and fit its tiles in ``U`` banks. Folded, each used lane ``u``
owns ``G = 2**floor(log2(N // U))`` banks: its own (slice 0) and ``G - 1`` idle ones
(slices ``1 .. G-1``, idle lanes in lane order, ``G - 1`` per used lane in lane order).
The word at the lane's *logical* address ``a`` lives in slice ``a mod G`` at bank row
``a // G`` (low address bits select the slice, so no bank depth needs to be a power of
two): a tile may hold ``G`` times the words of one bank per lane. The slice's bank is read
at the used lane's address and time, and its word multiplexed into the lane; nothing else
reads an idle bank under that dataflow, so a fold never conflicts with a read.

The same lane packs (:mod:`lego_build.frontend.packing`: ``-1`` where a dataflow does not
use a lane) decide the fold for the RTL (:mod:`lego_build.emit.top`), the mapper's bank
capacity and the simulator's tile fit.
"""
from __future__ import annotations


def fold_factor(pack: tuple[int, ...]) -> int:
    """``G``: banks per used lane under a dataflow whose lanes are ``pack`` (-1: unused)."""
    used = sum(1 for p in pack if p >= 0)
    if not used:
        return 1
    share = len(pack) // used
    return 1 << (share.bit_length() - 1)


def fold_groups(pack: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    """Per used lane, its banks by slice: itself, then its ``G - 1`` idle lanes."""
    g = fold_factor(pack)
    idle = [j for j, p in enumerate(pack) if p < 0]
    used = [j for j, p in enumerate(pack) if p >= 0]
    return {u: (u, *idle[i * (g - 1):(i + 1) * (g - 1)]) for i, u in enumerate(used)}


def fold_bits(packs: tuple[tuple[int, ...], ...]) -> int:
    """Address bits a tensor's lanes gain over one bank: log2 of its largest ``G``."""
    return max((fold_factor(p) for p in packs), default=1).bit_length() - 1
