"""What lego_build keeps outside ``out/``: the cache root, the logs of failed builds, scratch trees.

* The cache root is ``$LEGO_CACHE_DIR``, else ``$XDG_CACHE_HOME/lego_build`` or
  ``~/.cache/lego_build``; ``LEGO_CACHE_DIR=off`` means none. Deleting it is always safe.
* A failure's full log (a Verilator compile's output, a bug's traceback) goes to
  ``<cache root>/logs/`` (the system's temp directory with the cache off or unwritable), never
  into ``out/``, which a failed build leaves byte-identical; the newest :data:`KEEP_LOGS` stay.
* A tool's scratch tree (Verilator's C++ and objects, a simulation's coverage files) lives in
  the system's temp directory while a stage needs it and is removed when the stage ends, on a
  failure and an interrupt too; one a killed process (SIGKILL) left is removed by the next.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional

#: the failure logs kept in ``<cache root>/logs`` (the oldest beyond these are removed)
KEEP_LOGS = 50


def cache_root() -> Optional[Path]:
    """The cache root (see the module docstring); None with ``LEGO_CACHE_DIR=off``."""
    env = os.environ.get("LEGO_CACHE_DIR")
    if env == "off":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lego_build"


def write_log(name: str, text: str) -> Path:
    """Write ``text`` to a new log file ``<name>-<time>-*.log`` in ``<cache root>/logs`` (the
    system's temp directory when that cannot be written); its path."""
    root = cache_root()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    if root is not None:
        logs = root / "logs"
        try:
            logs.mkdir(parents=True, exist_ok=True)
            path = _write_new(logs, f"{name}-{stamp}-", text)
        except OSError:  # a read-only or full cache: the log still has to go somewhere
            pass
        else:
            _prune(logs)
            return path
    return _write_new(Path(tempfile.gettempdir()), f"lego_build-{name}-{stamp}-", text)


def _write_new(directory: Path, prefix: str, text: str) -> Path:
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=".log", dir=directory)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return Path(path)


def _prune(logs: Path) -> None:
    found = []
    for p in logs.glob("*.log"):
        with contextlib.suppress(OSError):  # removed meanwhile by another build's prune
            found.append((p.stat().st_mtime, p.name, p))
    for _, _, p in sorted(found)[:-KEEP_LOGS]:
        p.unlink(missing_ok=True)


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A new directory ``<temp>/<prefix><pid>-*`` for the block, removed when it ends (also on an
    exception or Ctrl-C); first removes those of ``prefix`` whose process is gone (killed)."""
    top = Path(tempfile.gettempdir())
    for old in top.glob(f"{prefix}*"):
        pid = old.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=top))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
