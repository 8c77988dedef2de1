"""Find external tools: an environment variable overrides, else the first name on PATH."""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class Tool:
    """An external program, declared once where it is used (a target's ``tools``,
    :mod:`lego_build.targets`): what it is called, the variable that overrides it, the
    executables looked up on PATH and how to install it (said when it is missing)."""

    name: str
    env: str
    names: tuple[str, ...]
    install: str

    def path(self) -> str:
        """The tool's path; a one-line :class:`StageError` naming the install if missing
        (:func:`require_tool`)."""
        return require_tool(self.env, self.names, self.install)

    def missing(self) -> str | None:
        """Why the tool cannot be used (one line), or ``None`` when it is there."""
        try:
            self.path()
        except StageError as exc:
            return str(exc)
        return None


@functools.cache
def tool_version(tool: str, flag: str = "--version") -> str:
    """What ``tool flag`` prints (its version, for cache keys); empty when it cannot run."""
    try:
        return subprocess.run([tool, flag], capture_output=True, text=True).stdout
    except OSError:
        return ""


def content_key(parts: list[str], files: list[Path]) -> str:
    """The SHA-256 key of a tool run's inputs: its ``parts`` (tool path and version, flags,
    scripts) and the name and bytes of each of its ``files``; the caches of built models and
    netlists key their entries by it."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0\1")
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0\1")
    return h.hexdigest()
