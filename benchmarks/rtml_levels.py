"""Seed 000's RTML figures (AFRL-RY-WP-TR-2023-0021 §3.2.6-3.2.10) reproduced by the paper's
level-by-level search (:mod:`benchmarks.rtml_paper`), each beside the paper's.

    python -m benchmarks.rtml_levels [--quick]

Loop orders kept by the trie, maximal tiles (Fig. 9), the share of L1 tiles and unrollings
pruned, and the level search's early stop against the exhaustive one. ``--quick`` leaves out the
unrolling count over ResNet-18 and the 20-layer level search (the two slow rows).
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/rtml_levels.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.rtml_levels)

import time
from typing import Sequence

from benchmarks import harness
from benchmarks.rtml_paper import (
    BATCHED_CONV,
    ENERGY,
    RESNET_L1,
    AccessModel,
    conv1d,
    loop_orders,
    maximal_tiles,
    real_layers,
    search_levels,
    temporal_reuse_dims,
    tile_search,
    unroll_candidates,
)
from lego_build.analysis.networks import network
from lego_build.mapping.rtml import order_trie

# ---------------------------------------------------------------- the seed-000 figures

def unroll_pruning(rows: int = 14, cols: int = 12, threshold: float = 0.5) -> tuple[int, int]:
    """§3.2.8 on ResNet-18: (unrollings, kept) over its distinct conv shapes x their trie orders."""
    total = kept = 0
    for k in dict.fromkeys(layer.kernel for layer in network("resnet18") if layer.op == "conv2d"):
        for cand in order_trie(k).candidates:
            res = unroll_candidates(k, rows, cols, avoid=temporal_reuse_dims(cand), threshold=threshold)
            total, kept = total + res.total, kept + len(res.kept)
    return total, kept


def level_search_counts(capacities: Sequence[int] = (64, 2048)) -> dict[str, tuple[int, int]]:
    """§3.2.10 over :func:`real_layers`: (early stop, exhaustive) L1 tiles searched, L2 tiles
    evaluated and cost calls, summed over the layers."""
    out = {"searched": [0, 0], "evaluated": [0, 0], "calls": [0, 0]}
    for _, k in real_layers(12):
        model = AccessModel(k, ENERGY)
        for i, early in enumerate((True, False)):
            res = search_levels(k, capacities, model.cost, model.lower_bound, early_stop=early)
            out["searched"][i] += res.searched[0]
            out["evaluated"][i] += res.evaluated[1]
            out["calls"][i] += res.cost_calls
    return {key: (a, b) for key, (a, b) in out.items()}


def _fewer(part: int, whole: int) -> str:
    return f"{1 - part / whole:.1%} fewer ({part:,} vs {whole:,} exhaustive)"


def table(quick: bool = False) -> list[tuple[str, str, str]]:
    """(figure, seed 000, here): each figure the paper's search reproduces beside the paper's."""
    rows = []
    orders = loop_orders(BATCHED_CONV)
    rows.append(("§3.2.6 batched-conv loop orders", "7! = 5040 -> 10",
                 f"{order_trie(BATCHED_CONV).space} -> {len(orders)}"))
    for R in (3, 4):  # Fig. 9: caption R = 3, text R = 4
        k = conv1d(4, 14, 4, R)
        tiles = maximal_tiles(k, 8)
        node2 = any(t["c"] == t["p"] == 2 and t["k"] == t["r"] == 1 for t in tiles)
        node1 = any(t == (("k", 1), ("p", 1), ("c", 2), ("r", 1)) and r.startswith("Obs. 4")
                    for t, r in tile_search(k, 8).rejected)
        seen2, seen1 = "kept" if node2 else "MISSING", "pruned (Obs. 4)" if node1 else "NOT pruned"
        here = f"{len(tiles)} maximal; C=P=2 {seen2}, C=2 {seen1}"
        rows.append((f"Fig. 9 maximal L1 tiles, R={R}, 8 words", "node 2 (C=P=2) kept, node 1 (C=2) pruned", here))
    for capacity in (64, 1024):
        search = tile_search(RESNET_L1, capacity, log=False)
        kept, fitting = len(search.maximal), search.fitting
        rows.append((f"§3.2.7 L1 tiles pruned, ResNet-18 layer1 3x3 conv, {capacity} words", "up to 80%",
                     f"{1 - kept / fitting:.1%} ({kept:,} maximal of {fitting:,} fitting)"))
    if quick:
        return rows
    total, kept = unroll_pruning()
    rows.append(("§3.2.8 unrollings pruned, ResNet-18 convs, 14x12", "> 90%",
                 f"{1 - kept / total:.1%} ({total - kept:,} of {total:,} pruned)"))
    counts = level_search_counts()
    rows.append(("§3.2.10 L1 tiles searched, 20 layers shrunk to <= 12", "50-80% fewer", _fewer(*counts["searched"])))
    rows.append(("§3.2.10 L2 tiles evaluated, 20 layers shrunk to <= 12", "60-90% fewer", _fewer(*counts["evaluated"])))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__).parse_args(argv)
    start = time.perf_counter()
    found = table(args.quick)
    rows = [("figure", "seed 000", "here"), *found]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    wall = time.perf_counter() - start
    note = f"L1 = 64 words, L2 = 2048 words for §3.2.10; fill energies {ENERGY} (assumed: seed 000 gives none)"
    print(f"\n{note}; {wall:.1f} s")
    figures = {"headline": {"wall (s)": round(wall, 1)},
               "tables": [harness.table("seed 000's figures: the paper's (seed 000 column) and ours (here)",
                                        ["figure", "seed 000 (paper)", "here"], [list(r) for r in found], note)]}
    harness.write_results("rtml_levels", figures, quick=args.quick, out=args.out, argv=argv,
                          title="seed 000's level-by-level RTML search: pruning counts",
                          paper={"source": "seed 000 (AFRL-RY-WP-TR-2023-0021) §3.2.6-3.2.10, in the table's "
                                 "seed 000 column"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
