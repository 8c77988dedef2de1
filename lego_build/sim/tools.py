"""Find external tools: an environment variable overrides, else the first name on PATH."""
from __future__ import annotations

import os
import shutil

from lego_build.flow.stages import StageError


def require_tool(env: str, names: tuple[str, ...], hint: str) -> str:
    """Path of the tool; a one-line :class:`StageError` saying how to get it if missing."""
    tool = os.environ.get(env) or next((p for p in map(shutil.which, names) if p), None)
    if not tool:
        raise StageError(f"{names[0]} not found: {hint} (or set {env})")
    return tool
