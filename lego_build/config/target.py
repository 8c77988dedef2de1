"""The ``target`` group's schema: what the simulate stage does with the emitted RTL."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

from lego_build.config.checks import MAX_MHZ, check_choice, check_finite, check_positive, check_seed
from lego_build.errors import ConfigError
from lego_build.ir.testdata import GENERATED, PATTERNS

#: what the simulate stage runs in RTL: representative tiles through the array's host port,
#: or whole layers (the representative ones, or every array layer of the network) through
#: the memory system (lego_build.sim.memsys); ``none``: nothing (``target.flow=asic`` then
#: prices every net at ``target.activity``)
SCOPES: tuple[str, ...] = ("tiles", "layers", "network", "none")
#: the most placement seeds ``target.fpga_seeds`` may try (each a place and route of minutes)
MAX_FPGA_SEEDS = 16
#: what ``target.flow=asic`` synthesises: the design with its memory system (``lego_soc``), or the
#: array alone (``lego_top``, every module then run by the simulated tiles)
ASIC_TOPS = {"soc": "lego_soc", "array": "lego_top"}


@dataclass
class TargetConf:
    """What the simulate stage does with the emitted RTL: ``flow`` names a registered target
    (:data:`lego_build.targets.TARGETS`: ``verilator`` lints and simulates, ``rtl`` emits only,
    ``yosys`` counts cells, ``asic`` runs the standard-cell flow, or a plugin's; checked by
    :func:`lego_build.flow.validate.check_names`); the other keys are the targets' settings.

    ``data``: the test-data sets every simulated tile runs with, in order
    (lego_build.sim.golden: ``random`` seeded by ``seed``; the extremes ``min``, ``max``,
    ``mixed``, ``alternating``; ``file``: the arrays of the ``.npz`` file ``data_file``).
    ``scope``: :data:`SCOPES`; whole layers run through the memory system with the first
    data set of ``data`` and every output element compared (how many at once: ``run.jobs``,
    ``run.ray_address``). ``library`` ... ``pnr``: the ``asic`` target's standard-cell flow;
    ``device``, ``fpga_top``, ``fpga_seeds``: the ``fpga`` target's part, what it places and how many
    placement seeds it tries.
    """

    name: str = "verilator"
    flow: str = "verilator"
    library: str = "osu018"  # its Liberty file: a qflow technology name or a .lib path
    node_nm: float = 0.0  # the library's feature size (0: from an OSU library's name)
    asic_mhz: float = 100.0  # the clock its power is reported at (STA checks arch.clock_mhz, the design's target)
    activity: float = 0.1  # the toggle rate of every net (a stated default, not a measurement)
    asic_top: str = "soc"  # ASIC_TOPS: the design with its memory system, or the array alone
    pnr: bool = False  # asic: also place and route the array (graywolf, qrouter) and time it again (minutes)
    device: str = "ecp5-85f"  # fpga: the part (lego_build.targets.fpga_parts.PARTS, checked by the target)
    fpga_top: str = "soc"  # fpga: ASIC_TOPS, what is placed (out of context)
    fpga_seeds: int = 1  # fpga: place and route with seeds seed .. seed + fpga_seeds - 1, keep the fastest
    waveform: bool = False
    seed: int = 1
    data: List[str] = field(default_factory=lambda: list(GENERATED))
    data_file: str = ""
    max_cycles: int = 10_000_000
    tile_steps: int = 20_000
    scope: str = "tiles"

    def __post_init__(self) -> None:
        check_finite("target", self, "node_nm", "asic_mhz", "activity")
        check_positive("target", self, "max_cycles", "tile_steps", "asic_mhz")
        check_seed("target", self)
        if self.asic_mhz > MAX_MHZ:
            raise ConfigError(f"target.asic_mhz={self.asic_mhz:g}: a clock above {MAX_MHZ:g} MHz; give the power's "
                              "clock in MHz, e.g. target.asic_mhz=100")
        if self.node_nm < 0:
            raise ConfigError(f"target.node_nm={self.node_nm}: must be the library's feature size in nm, or 0")
        if not 0 < self.activity <= 1:
            raise ConfigError(f"target.activity={self.activity}: must be a toggle rate per net and cycle in (0, 1], "
                              "e.g. 0.1")
        check_choice("target", "scope", self.scope, SCOPES)
        check_choice("target", "asic_top", self.asic_top, tuple(ASIC_TOPS))
        check_choice("target", "fpga_top", self.fpga_top, tuple(ASIC_TOPS))
        if not 1 <= self.fpga_seeds <= MAX_FPGA_SEEDS or isinstance(self.fpga_seeds, bool):
            raise ConfigError(f"target.fpga_seeds={self.fpga_seeds}: must be how many placement seeds to try, "
                              f"1 to {MAX_FPGA_SEEDS}, e.g. target.fpga_seeds=3")
        if self.fpga_seeds > 1 and self.flow != "fpga":
            raise ConfigError(f"target.fpga_seeds={self.fpga_seeds}: only target.flow=fpga places with seeds (this is "
                              f"{self.flow}); use target=fpga target.fpga_seeds={self.fpga_seeds}")
        if self.pnr and self.flow != "asic":
            raise ConfigError(f"target.pnr=true: only target.flow=asic places and routes (this is {self.flow}); "
                              "use target=asic target.pnr=true")
        if not self.data:
            raise ConfigError("target.data=[]: give at least one test-data set, e.g. target.data=[random]")
        for pattern in self.data:
            check_choice("target", "data", pattern, PATTERNS)
        if len(set(self.data)) != len(self.data):
            raise ConfigError(f"target.data={list(self.data)}: a data set is listed twice; list each once")
        if ("file" in self.data) != bool(self.data_file):
            raise ConfigError("target.data_file: give the .npz file together with 'file' in target.data, "
                              "e.g. target.data=[file] target.data_file=operands.npz")
