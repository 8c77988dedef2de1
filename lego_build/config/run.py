"""The ``run`` group's schema: how to run a build, not what to build (no stage hashes it)."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from lego_build.config.checks import check_finite, check_positive
from lego_build.errors import ConfigError


@dataclass
class RunConf:
    """How to run a build, not what to build: no stage hashes this group, so changing it re-runs
    nothing (lego_build.flow.stages).

    ``jobs``: whole layers simulated at once (processes, joblib; 0: one per core), or as Ray
    tasks on ``ray_address`` (``local`` starts one; workers need the design directory on a
    shared file system, since each runs the design's one Verilator build). ``map_jobs``:
    processes exploring the convs of ``mapper.search=tso`` in parallel.
    ``max_memory_gb`` / ``max_minutes``: the estimated peak memory and time of a build
    (lego_build.flow.budget) above which it stops before any work unless ``confirm=true``
    (0: the machine's available memory / no time limit).
    """

    name: str = "default"
    jobs: int = 1
    ray_address: str = ""  # "local" (a Ray of its own), "host:port" or "auto"
    map_jobs: int = 1
    max_memory_gb: float = 0.0
    max_minutes: float = 30.0
    confirm: bool = False

    def __post_init__(self) -> None:
        check_finite("run", self, "max_memory_gb", "max_minutes")
        check_positive("run", self, "map_jobs")
        if self.jobs < 0:
            raise ConfigError(f"run.jobs={self.jobs}: must be >= 0 (0: one process per core)")
        if self.ray_address and importlib.util.find_spec("ray") is None:
            raise ConfigError(f"run.ray_address={self.ray_address}: Ray is not installed; install the extra "
                              "(pip install -e '.[ray]') or unset it to run layers with joblib")
        if self.max_memory_gb < 0 or self.max_minutes < 0:
            raise ConfigError(f"run.max_memory_gb={self.max_memory_gb}, run.max_minutes={self.max_minutes}: "
                              "must be >= 0 (0: no limit of your own)")
