"""Find external tools: an environment variable overrides, else the first name on PATH."""
from __future__ import annotations

import os
import shutil

from lego_build.errors import StageError


def require_tool(env: str, names: tuple[str, ...], hint: str) -> str:
    """Path of the tool; a one-line :class:`StageError` saying how to get it if missing.

    ``$env`` may name a path or a command on PATH; one that does not resolve to an
    executable is an error naming the variable (a typo there must not fall back silently).
    """
    override = os.environ.get(env)
    if override:
        found = shutil.which(override)
        if not found:
            raise StageError(f"{env}={override}: no such executable; fix or unset {env} ({hint})")
        return found
    tool = next((p for p in map(shutil.which, names) if p), None)
    if not tool:
        raise StageError(f"{names[0]} not found: {hint} (or set {env})")
    return tool
