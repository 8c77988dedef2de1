"""The ``mapper`` group's schema: how the ``map`` stage searches."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from lego_build.config.checks import check_choice, check_positive, check_seed
from lego_build.errors import ConfigError
from lego_build.ir.mapping import MAPSPACES, OBJECTIVES, UNROLLS


@dataclass
class MapperConf:
    """How the ``map`` stage searches (lego_build.mapping.searches).

    ``mapspace``: ``pfm`` (perfect factors), ``ruby-s`` / ``ruby-t`` / ``ruby`` (a
    partial last tile at spatial / temporal / all levels, seed 002). On a generated
    array the spatial unrolling is the dataflow's; its address generators run a partial
    last tile (idle FUs), which is Ruby-S's (the default preset), so ``pfm`` and ``ruby-t``
    leave a dataflow unused for a layer whose dim it would split with a remainder.
    ``search``: ``rtml`` (seed 000 pruned), ``placed`` (RTML that also offers each maximal tile
    with one loop over a dim its level does not store left to the levels above: lower energy on
    per-tensor scratchpads, about twice the CPU), ``random`` (Timeloop-style: stops after
    ``patience`` non-improving valid mappings; ``seed``), ``exhaustive`` (small layers).
    ``gap``: stop a layer's search once its best is within this fraction of the layer's
    lower bound (lego_build.mapping.bounds; e.g. 0.05), ``budget``: at most this many
    candidates per layer and dataflow (both unset: the search runs to its own end).
    ``beam`` (``rtml``, ``placed``): the partial schedules kept into the outermost on-chip level,
    ``beam // 2`` (at least 2) at the levels inside it, one per tile choice
    (:meth:`lego_build.mapping.searches.Rtml._walk`; a wider beam lets an inner level's
    second-best tile meet the outer level that suits it: 8 maps ResNet-18 on eyeriss_ruby at
    16 bits in 6,611 uJ, its layer1.0.conv2 in 282.8 uJ; 4 in 6,955 and 307.5 uJ; 16 as 8).
    ``unroll``: ``dataflows`` (the array's, which the RTL runs) or ``search``
    (the unrolling searched over ``arch.unroll`` on the model-only levels of ``arch.memory``;
    seed 002 §V).
    """

    name: str = "ruby_s"
    objective: str = "energy"
    mapspace: str = "ruby-s"
    search: str = "rtml"
    patience: int = 300
    seed: int = 0
    # search=tso (seed 003, on arch.multicore): burst-aware or not, fixed cluster partition / core schedule
    burst: bool = True
    partition: str = "auto"
    schedule: str = "auto"
    gap: Optional[float] = None
    budget: Optional[int] = None
    unroll: str = "dataflows"
    beam: int = 8  # search=rtml or placed: partial schedules kept into the outermost on-chip level

    def __post_init__(self) -> None:
        if self.gap is not None and not 0 < self.gap < 1:
            raise ConfigError(f"mapper.gap={self.gap}: a tolerance between 0 and 1 (e.g. 0.05 stops within 5 % of "
                              "the lower bound); leave it unset to search to the end")
        if self.budget is not None and self.budget <= 0:
            raise ConfigError(f"mapper.budget={self.budget}: the candidates a layer's search may evaluate must be "
                              "a positive integer; leave it unset for no limit")
        check_choice("mapper", "objective", self.objective, tuple(OBJECTIVES))
        check_choice("mapper", "mapspace", self.mapspace, tuple(MAPSPACES))
        check_choice("mapper", "unroll", self.unroll, tuple(UNROLLS))
        check_choice("mapper", "partition", self.partition, ("auto", "KS", "KS&OFM", "OFM"))
        check_choice("mapper", "schedule", self.schedule, ("auto", "IS", "OS", "WS"))
        check_positive("mapper", self, "patience", "beam")
        check_seed("mapper", self)
