"""What the cost model (:mod:`.model`) evaluates schedules on, apart from the counting: a
hierarchy's logical positions, a dim's ceil-rule Ruby tiling over them (:func:`dim_tiling`,
:class:`DimTiling`), what evaluations of one spatial unrolling and tiling share (:class:`Grid`),
and the answer of an evaluation (:class:`Evaluation`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import ceil, prod

from lego_build.ir.mapping import score
from lego_build.ir.memory import Hierarchy
from lego_build.ir.workload import Kernel, TensorAccess
from lego_build.mapping.tiling import Level, Tiling

MAC = -1  # the pseudo-level below every memory


def role(kernel: Kernel, tensor: TensorAccess) -> str:
    if tensor.role == "out":
        return "output"
    return "input" if tensor is kernel.inputs[0] else "weight"


def positions(h: Hierarchy) -> tuple[tuple[str, int], ...]:
    """Logical levels outer -> inner: ``("T", memory level)`` or ``("S", array axis)``."""
    top, f = len(h.levels) - 1, h.fanout
    return (tuple(("T", i) for i in range(top, f - 1, -1)) + (("S", 0), ("S", 1))
            + tuple(("T", i) for i in range(f - 1, -1, -1)))


@lru_cache(maxsize=1 << 16)
def dim_tiling(D: int, factors: tuple[int, ...], kinds: tuple[str, ...]) -> Tiling:
    """The ceil-rule Ruby tiling of ``D``: ``factors`` outer -> inner (the first is derived).
    Pure and asked again for the same factors by every search step: memoised."""
    inner = [prod(factors[k + 1:]) for k in range(len(factors))]
    top = ceil(D / inner[0])
    pairs, rest = [(top, top)], D - (top - 1) * inner[0]
    for k in range(1, len(factors)):
        r = ceil(rest / inner[k])
        pairs.append((factors[k], r))
        rest -= (r - 1) * inner[k]
    parents = 1
    for k, (p, r) in enumerate(pairs):  # canonical: a level whose parent runs once has P = R
        if parents == 1:
            pairs[k] = (r, r)
        parents = (parents - 1) * pairs[k][0] + pairs[k][1]
    return Tiling(tuple(Level("spatial" if kd == "S" else "temporal") for kd in kinds), tuple(pairs))


def in_order(movers: tuple[str, ...], order: tuple[str, ...]) -> tuple[str, ...]:
    """The loops ``movers`` of a level (dims order) outer -> inner under its listed ``order``: the
    listed ones first as listed, the rest after in dims order (no order: as they are)."""
    if not order:
        return movers
    return (*(d for d in order if d in movers), *(d for d in movers if d not in order))


class DimTiling:
    """One dim's :class:`Tiling` under a model's positions and its full factor per position;
    on demand (:meth:`derived`) its iterations, average trips and time steps, and the block
    extents per set of positions (memoised: many schedules share a dim's tiling)."""

    __slots__ = ("tiling", "full", "inward", "_derived", "_extents", "_moving")

    def __init__(self, tiling: Tiling):
        self.tiling = tiling
        self.full = tuple(p for p, _ in tiling.factors)
        inward, acc = [1] * len(self.full), 1  # per position: the full extent of it and all inside it
        for j in range(len(self.full) - 1, -1, -1):
            acc *= self.full[j]
            inward[j] = acc
        self.inward = tuple(inward)
        self._derived: tuple | None = None
        self._extents: dict[tuple[int, bool], tuple[int, float]] = {}  # per (start, spatial): extent()
        self._moving: tuple[int, ...] | None = None

    def moving(self, positions: tuple[int, ...]) -> tuple[int, ...]:
        """Those of ``positions`` (the model's temporal ones, always the same) where the dim iterates."""
        if self._moving is None:
            trip = self.derived()[1]
            self._moving = tuple(j for j in positions if trip[j] != 1.0)
        return self._moving

    def derived(self) -> tuple[tuple[int, ...], tuple[float, ...], int]:
        """(iterations, average trips, time steps) per position."""
        if self._derived is None:
            iters = self.tiling.iterations()
            self._derived = (iters, tuple(t / (iters[j - 1] if j else 1) for j, t in enumerate(iters)),
                             self.tiling.cycles())
        return self._derived

    def extent(self, key, inside: tuple[int, ...]) -> tuple[int, float]:
        """(full, average) extent of a block made of the positions ``inside`` (named ``key``: the
        model's ``(start, spatial)``)."""
        if (e := self._extents.get(key)) is None:
            trip = self.derived()[1]
            e = self._extents[key] = (prod(self.full[j] for j in inside), prod(trip[j] for j in inside))
        return e


@dataclass(slots=True)
class Grid:
    """What evaluations of a schedule's spatial unrolling and tiles share, whatever the loop
    orders (a search tries several per tiling): each dim's :class:`DimTiling`, the rejection if a
    tile does not fit, the dims that iterate at each position (dims order; an array axis: its
    own), the average active PEs per step, the controller runs (outermost iterations) and time
    steps, the tilings as reported, and memos of block extents and words (``blocks``) and of
    evaluations per class of loop orders (``nests``, :meth:`Model.order_key`)."""

    dims: dict[str, DimTiling]
    trip: dict[str, tuple[float, ...]]
    overflow: Evaluation | None | bool  # False: not checked yet (a search's capacity-free estimates skip it)
    movers: tuple[tuple[str, ...], ...]
    fanout: float
    tiles: int
    steps: int
    tilings: tuple[tuple[str, Tiling], ...]
    blocks: dict
    nests: dict
    reach: tuple[tuple[int, int, tuple[frozenset, ...]], ...]  # (level, position, dims of each stationary tensor)
    runs: dict  # Model.order_key's part per (level, order)


@dataclass(frozen=True, slots=True)
class Evaluation:
    valid: bool
    reason: str = ""
    need: tuple[str, int, int] | None = None  # (level, bytes needed, bytes available) when a tile overflows
    energy_pj: float = 0.0
    breakdown: tuple[tuple[str, str, float], ...] = ()  # (level | "mac" | "network", role, pJ)
    accesses: tuple[tuple[str, str, float, float], ...] = ()  # (level, role, reads, writes) in words
    compute_cycles: int = 0
    level_cycles: tuple[tuple[str, float], ...] = ()
    cycles: int = 0
    utilization: float = 0.0
    tilings: tuple[tuple[str, Tiling], ...] = ()

    def objective(self, name: str) -> float:
        return score(name, self.energy_pj, self.cycles)

    def by_level(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for level, _, pj in self.breakdown:
            out[level] = out.get(level, 0.0) + pj
        return out

    def by_role(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for _, r, pj in self.breakdown:
            out[r] = out.get(r, 0.0) + pj
        return out
