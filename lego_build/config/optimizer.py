"""The ``optimizer`` group's schema: the back end's passes and their settings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

from lego_build.config.checks import check_choice, check_finite
from lego_build.errors import ConfigError


@dataclass
class OptimizerConf:
    """Which back-end passes run, in order, and how (pass and solver names are checked against the
    back end's registries by :func:`lego_build.flow.validate.check_names`)."""

    name: str = "lego"
    passes: List[str] = field(default_factory=lambda: ["reduction_tree", "pin_reuse", "fifo_sizing", "bitwidth",
                                                         "acc_fusion", "delay_matching", "broadcast_rewiring",
                                                         "power_gating", "delay_elaboration"])
    delay_matching: str = "lp"
    solver: str = "cbc"
    time_limit_s: float = 60.0

    def __post_init__(self) -> None:
        check_choice("optimizer", "delay_matching", self.delay_matching, ("lp", "greedy"))
        check_finite("optimizer", self, "time_limit_s")
        if self.time_limit_s <= 0:
            raise ConfigError(f"optimizer.time_limit_s={self.time_limit_s}: must be > 0 seconds")
