"""Dataflow mapping IR: spatial unrolling ``M_S->I`` and a temporal loop nest ``M_T->I``.

Seed 004 eq. 3.2-3.4: ``i = M_T t + M_S s``. Here every kernel dim ``d`` gets one
temporal loop; a dim unrolled on the array over ``R_d`` FUs iterates tiles, so its
loop has stride ``R_d`` and ``i_d = R_d * t_d + s_d``. ``spatial`` lists the virtual
spatial coordinates ``(dim, extent)`` of the dataflow (one dim may appear on both
axes or twice on one: replication; strides are mixed radix, inner fastest).
Loops are listed outer to inner (the lexicographic order of eq. 3.5).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable

from lego_build.ir.workload import Kernel


@dataclass(frozen=True, slots=True)
class Loop:
    dim: str
    bound: int  # trip count
    stride: int  # iteration step per trip (the spatial extent for tiled dims, else 1)


@dataclass(frozen=True, slots=True)
class Mapping:
    spatial: tuple[tuple[str, int], ...]  # (dim, array extent) per array axis
    temporal: tuple[Loop, ...]  # outer -> inner

    @property
    def steps(self) -> int:
        """Temporal steps ``T = prod(bounds)``: one per cycle in the array."""
        return prod(loop.bound for loop in self.temporal)

    def spatial_strides(self) -> tuple[int, ...]:
        v = self.spatial
        return tuple(prod(e for d, e in v[i + 1:] if d == dim) for i, (dim, _) in enumerate(v))

    def iteration(self, kernel: Kernel, t: tuple[int, ...], s: tuple[int, ...]) -> tuple[int, ...]:
        """Eq. 3.4: the iteration executed at temporal point ``t`` on virtual FU coordinates ``s``."""
        it = {d.name: 0 for d in kernel.dims}
        for loop, tv in zip(self.temporal, t):
            it[loop.dim] += loop.stride * tv
        for (dim, _), stride, sv in zip(self.spatial, self.spatial_strides(), s):
            it[dim] += stride * sv
        return tuple(it[d.name] for d in kernel.dims)

    def tensor_levels(self, kernel: Kernel, tensor: str) -> tuple[int, ...]:
        """Temporal levels whose index changes which element of ``tensor`` is used."""
        access = kernel.tensor(tensor)
        return tuple(i for i, loop in enumerate(self.temporal) if access.depends_on(kernel.dim_index(loop.dim)))

    def footprint(self, kernel: Kernel, tensor: str) -> int:
        """Words per buffer bank: one per distinct index of the levels ``tensor`` depends on."""
        return prod(self.temporal[lv].bound for lv in self.tensor_levels(kernel, tensor))

    def to_json(self) -> dict:
        return {
            "spatial": [{"dim": d, "extent": e} for d, e in self.spatial],
            "temporal": [{"dim": lp.dim, "bound": lp.bound, "stride": lp.stride} for lp in self.temporal],
        }

    @staticmethod
    def from_json(data: dict) -> "Mapping":
        return Mapping(
            spatial=tuple((s["dim"], s["extent"]) for s in data["spatial"]),
            temporal=tuple(Loop(t["dim"], t["bound"], t["stride"]) for t in data["temporal"]),
        )


@dataclass(frozen=True, slots=True)
class Schedule:
    """A multi-level mapping on a memory hierarchy (seed 001 Alg. 2, seed 002 eq. 5).

    ``spatial`` is per array axis (rows, cols) the ``(dim, P)`` unrolled on it;
    ``tiles`` is per dim the factor ``P`` of each temporal level, memory levels inner
    -> outer (the outermost level's factor is derived from the bound); ``orders`` is
    per memory level (inner -> outer) the loop order at that level, outer -> inner.
    Remainders are implied by the bounds (:func:`lego_build.mapping.grid.dim_tiling`).
    """

    spatial: tuple[tuple[tuple[str, int], ...], ...]
    tiles: tuple[tuple[str, tuple[int, ...]], ...]
    orders: tuple[tuple[str, ...], ...]

    def to_json(self) -> dict:
        return {
            "spatial": [[{"dim": d, "factor": p} for d, p in axis] for axis in self.spatial],
            "tiles": {d: list(ps) for d, ps in self.tiles},
            "orders": [list(o) for o in self.orders],
        }


def tiled_loops(kernel: Kernel, spatial: tuple[tuple[str, int], ...]) -> dict[str, Loop]:
    """One temporal loop per dim: a dim unrolled on the array is tiled by its extent there
    (``ceil(bound / extent)`` trips, a padded edge tile), every other dim runs whole."""
    extents: dict[str, int] = {}
    for dim, extent in spatial:
        extents[dim] = extents.get(dim, 1) * extent
    loops = {}
    for dim in kernel.dims:
        extent = extents.get(dim.name, 1)
        loops[dim.name] = Loop(dim.name, -(-dim.bound // extent), extent)
    return loops


# ------------------------------------------------------------------ the mapper's closed vocabularies
def _edp(energy_pj: float, cycles: float) -> float:
    return energy_pj * cycles


#: ``mapper.objective``: what a search minimises, from a schedule's energy (pJ) and cycles
OBJECTIVES: dict[str, Callable[[float, float], float]] = {
    "energy": lambda energy_pj, cycles: energy_pj,
    "latency": lambda energy_pj, cycles: float(cycles),
    "edp": _edp,
}

#: ``arch.tiling``: who chooses a layer's tiles on a generated array
TILINGS: dict[str, str] = {
    "search": "the mapper searches the mapspace (mapper.search)",
    "gemmini": "Gemmini's software tiling rule, as its library runs a layer (lego_build.mapping.gemmini)",
}

#: ``mapper.unroll``: where a layer's spatial unrolling comes from
UNROLLS: dict[str, str] = {
    "dataflows": "one of the generated array's dataflows, which the RTL runs (link checks included)",
    "search": "searched over arch.unroll.axes on the model-only levels of arch.memory (no RTL runs it)",
}

#: ``mapper.mapspace`` (seed 002 §3): the level kinds that may carry a partial last tile
#: (a remainder ``R < P``): ``pfm`` none (perfect factors), ``ruby-s`` the spatial levels,
#: ``ruby-t`` the temporal ones, ``ruby`` both
MAPSPACES: dict[str, frozenset[str]] = {
    "pfm": frozenset(),
    "ruby": frozenset({"spatial", "temporal"}),
    "ruby-s": frozenset({"spatial"}),
    "ruby-t": frozenset({"temporal"}),
}


def score(objective: str, energy_pj: float, cycles: float) -> float:
    """The value of ``objective`` (a key of :data:`OBJECTIVES`) for a schedule."""
    return OBJECTIVES[objective](energy_pj, cycles)
