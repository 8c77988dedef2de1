"""``arch.tiling=gemmini``: a layer tiled the way Gemmini's software library tiles it.

Gemmini (Genc et al., DAC 2021) does not search: its C library (``gemmini.h`` of
gemmini-rocc-tests) picks each layer's tiles with a fixed greedy rule and runs the tiles in
a fixed loop nest. The baseline of seed 004 §6 is that library on a 16 x 16 weight-stationary
array, so ``arch=gemmini_like`` maps with this rule instead of a search. Our reading of it,
in units of the array side ``DIM`` (16), for a conv2d-family layer (dims n, g, oc, ic, oh, ow,
kh, kw; Gemmini holds weights with input channels on the array rows and output channels on
the columns, one matmul per kernel tap, no im2col):

* **convolutions** (``tiled_conv_auto``): start from the whole layer, ``args = (n, oh, ow, oc,
  kh, kw, ic)``; while the tile overflows, shrink the largest arg (ties to the earlier one;
  ``ow`` is skipped while it is at most DIM and ``oh > 1``, to keep the array's rows busy),
  channels by a whole DIM (first down to a multiple of DIM), others by one; then grow ``ow``
  one at a time, then round-robin every arg by one, while it fits. Tiles run in the order
  ``n, oh, ow, oc, kh, kw, ic`` (outermost first).
* **depthwise** (``tiled_conv_dw_auto``): the same rule over ``(n, oh, ow, 1, kh, kw, 1)``,
  every channel on its own (``g`` outermost, one at a time): one array column and one row.
  Gemmini's first-layer optimisation can pack up to ``DIM / ic`` kernel columns onto the
  rows (three for a 3 x 3 depthwise layer); the generated WS array has no such addressing,
  so this baseline runs depthwise taps one row at a time (a 3x slower depthwise at most).
* **matmuls** (``tiled_matmul_auto``; GEMMs lowered to conv2d: M = oh, N = oc, K = ic, batch = g):
  start at ``I = J = min(blocks, floor(sqrt(acc_rows / DIM)))``, ``K = min(blocks,
  spad_rows / DIM / I_max)`` in DIM blocks; then repeatedly grow J, I, K by one block while
  they fit; tiles run ``g, i, j, k`` (k innermost: a partial sum stays in the accumulator).

"Fits" is Gemmini's test, ``A + B`` rows within the scratchpad's half and ``C`` rows within
the accumulator's half (it double-buffers both), applied to the generated banks: the input
and weight banks' halves together are the scratchpad, the output banks' half the accumulator
(``arch.onchip_split`` sizes them as Gemmini does). A tile the cost model still finds too big
for one bank shrinks further by the same rule. Each tile size becomes the balanced tile with the
same trip count (``ceil(D / ceil(D / t))``): Gemmini runs a smaller last tile instead, the same
number of tiles and array passes. Within a tile the array's own controller order applies
(reduction loops innermost: the generated array accumulates in place).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil, isqrt

from lego_build.ir.mapping import Schedule
from lego_build.mapping.grid import in_order
from lego_build.mapping.mapspace import Mapspace, per_dim_spatial
from lego_build.mapping.searches import Search

CONV_ARGS = ("n", "oh", "ow", "oc", "kh", "kw", "ic")
CHANNELS = ("oc", "ic")


def _window(kernel) -> tuple[int, int]:
    """(stride, dilation) of the output rows in the input rows (X's row index ``s*oh + d*kh - p``)."""
    x = kernel.inputs[0]
    row = x.matrix[2]
    return row[kernel.dim_index("oh")], row[kernel.dim_index("kh")]


@dataclass(frozen=True)
class Limits:
    """Gemmini's capacity test in rows of DIM elements: scratchpad (A + B) and accumulator (C) halves."""

    dim: int
    spad_rows: int
    acc_rows: int

    @classmethod
    def of(cls, space: Mapspace, dim: int) -> "Limits":
        part = dict(space.h.levels[space.h.fanout].partition)
        acc_bytes = space.m.kernel.output.bits // 8
        spad = part.get("input", 0) + part.get("weight", 0)
        return cls(dim, spad // dim, part.get("output", 0) // (dim * acc_bytes))


def conv_rows(t: dict[str, int], stride: int, dil: int, dim: int) -> tuple[int, int]:
    """``tiled_conv_total_spad_rows``: (A + B rows, C rows) of a conv tile (the input halo counted)."""
    irows = t["oh"] * stride + (t["kh"] + (dil - 1) * (t["kh"] - 1)) - 1
    icols = t["ow"] * stride + (t["kw"] + (dil - 1) * (t["kw"] - 1)) - 1
    a = ceil(t["ic"] / dim) * t["n"] * irows * icols
    b = ceil(t["oc"] / dim) * t["kh"] * t["kw"] * t["ic"]
    c = ceil(t["oc"] / dim) * t["n"] * t["oh"] * t["ow"]
    return a + b, c


def conv_tile(bound: dict[str, int], stride: int, dil: int, lim: Limits, depthwise: bool,
              fits=lambda t: True) -> dict[str, int]:
    """``tiled_conv_auto`` / ``tiled_conv_dw_auto``: the shrink-then-grow rule (module docstring)."""
    top = {a: (1 if depthwise and a in CHANNELS else bound[a]) for a in CONV_ARGS}
    t = dict(top)

    def ok(x: dict[str, int]) -> bool:
        spad, acc = conv_rows(x, stride, dil, lim.dim)
        return spad <= lim.spad_rows and acc <= lim.acc_rows and fits(x)

    while not ok(t):
        cands = [a for a in CONV_ARGS if not (a == "ow" and t[a] <= lim.dim and t["oh"] > 1)]
        a = max(cands, key=lambda k: (t[k], -CONV_ARGS.index(k)))
        if t[a] == 1:
            break  # nothing left to shrink: the model reports why the smallest tile overflows
        if a in CHANNELS:
            t[a] = max(1, t[a] // lim.dim * lim.dim if t[a] % lim.dim else t[a] - lim.dim)
        else:
            t[a] -= 1
    while t["ow"] < top["ow"] and ok({**t, "ow": t["ow"] + 1}):
        t["ow"] += 1
    grown = True
    while grown:
        grown = False
        for a in CONV_ARGS:
            if t[a] < top[a] and ok({**t, a: t[a] + 1}):
                t[a] += 1
                grown = True
    return t


def matmul_tile(bound: dict[str, int], lim: Limits, fits=lambda t: True) -> dict[str, int]:
    """``tiled_matmul_auto`` in DIM blocks: I (M = oh), J (N = oc), K (K = ic); returns element tiles."""
    d = lim.dim
    blocks = {"oh": ceil(bound["oh"] / d), "oc": ceil(bound["oc"] / d), "ic": ceil(bound["ic"] / d)}
    max_ij = max(1, isqrt(lim.acc_rows // d))
    max_k = max(1, lim.spad_rows // d // max_ij)
    t = {"oh": min(blocks["oh"], max_ij), "oc": min(blocks["oc"], max_ij), "ic": min(blocks["ic"], max_k)}

    def elems(x):
        return {k: min(bound[k], v * d) for k, v in x.items()}

    def ok(x) -> bool:
        spad = (x["oh"] * x["ic"] + x["ic"] * x["oc"]) * d
        return spad <= lim.spad_rows and x["oh"] * x["oc"] * d <= lim.acc_rows and fits(elems(x))

    while not ok(t) and max(t.values()) > 1:  # the start point overflows the generated banks
        big = max(t, key=lambda k: t[k])
        t[big] -= 1
    grown = True
    while grown:
        grown = False
        for k in ("oc", "oh", "ic"):
            if t[k] < blocks[k] and ok({**t, k: t[k] + 1}):
                t[k] += 1
                grown = True
    return elems(t)


def is_matmul(bound: dict[str, int]) -> bool:
    """A GEMM lowered to conv2d (``lowering.lower``): one column, a 1 x 1 window, batch 1."""
    return bound["ow"] == 1 and bound["kh"] == 1 and bound["kw"] == 1 and bound["n"] == 1


def is_depthwise(bound: dict[str, int]) -> bool:
    return bound["g"] > 1 and bound["ic"] == 1 and bound["oc"] == 1 and not is_matmul(bound)


@dataclass
class GemminiTiling(Search):
    """One candidate: the tile Gemmini's rule picks (shrunk by the same rule until the model's
    banks hold it), in Gemmini's tile order; every step logged with its reason."""

    dim: int = 16

    def __post_init__(self):
        self._done = False

    def _schedule(self, tile: dict[str, int], order: tuple[str, ...]) -> Schedule:
        ms = self.space
        (spatial,) = ms.spatial_options()
        sp = per_dim_spatial(spatial)
        tiles = {}
        for d in ms.dims:
            D, s = ms.bound[d], sp.get(d, (1, 1))
            per = s[0] * s[1]
            t = max(per, min(D, tile.get(d, 1)))
            t = ceil(D / ceil(D / t))  # balanced tile, same trip count
            inner = tuple(1 for _ in range(ms.h.fanout))
            tiles[d] = inner + (max(1, ceil(t / per)),) + (1,) * (ms.top - ms.h.fanout - 1)
        base = ms.schedule(spatial, tiles, {})
        f = ms.h.fanout
        orders = {}
        for lv in range(f, ms.n_levels):
            moving = ms.moving(base, lv)
            if lv == f:
                cands = ms.orders(lv, moving, True, self.reject)
                orders[lv] = cands[0] if cands else moving
            else:
                orders[lv] = in_order(moving, order)
        return ms.schedule(spatial, tiles, orders)

    def ask(self) -> Schedule | None:
        if self._done:
            return None
        self._done = True
        ms = self.space
        b = dict(ms.bound)
        lim = Limits.of(ms, self.dim)

        def fits(t: dict[str, int]) -> bool:
            over = ms.m.overflow(self._schedule(t, ()))
            if over is not None:
                self.reject(f"gemmini rule: tile {t} does not fit the generated banks ({over.reason}); shrinking")
            return over is None

        if is_matmul(b):
            tile = {**matmul_tile(b, lim, fits), "g": 1}
            order = ("g", "oh", "oc", "ic")
            kind = "tiled_matmul_auto"
        else:
            stride, dil = _window(ms.m.kernel)
            dw = is_depthwise(b)
            tile = {**conv_tile(b, stride, dil, lim, dw, fits), "g": 1}
            order = ("g", *CONV_ARGS)
            kind = "tiled_conv_dw_auto" if dw else "tiled_conv_auto"
        self.rule = {"rule": kind, "tile": tile}
        return self._schedule(tile, order)
