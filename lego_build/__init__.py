"""lego_build: a config-driven build flow that generates spatial tensor accelerators."""
from .flow.config import compose, design_id
from .flow.schema import ConfigError, LegoConfig
from .flow.stages import STAGES, StageError, run_all, run_stage

__all__ = ["compose", "design_id", "ConfigError", "LegoConfig", "STAGES", "StageError", "run_all", "run_stage"]
