"""lego_build: a config-driven build flow that generates spatial tensor accelerators.

The public surface: compose a design's config (:func:`compose`, every group validated),
name it (:func:`design_id`), run the stages (:func:`run_stage`, :func:`run_all`).
"""
from lego_build.config.compose import design_id
from lego_build.config.schema import LegoConfig
from lego_build.errors import ConfigError, InputError, StageError
from lego_build.flow.stages import STAGES, run_all, run_stage
from lego_build.flow.validate import compose

__all__ = ["compose", "design_id", "ConfigError", "InputError", "LegoConfig", "STAGES", "StageError", "run_all",
           "run_stage"]
