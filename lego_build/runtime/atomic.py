"""Atomic artifact writes: a temp file in the same directory, then ``os.replace``.

A killed build never leaves a half-written artifact under its final name; what it
can leave are its temp files (``.<name>.*.tmp``) and undo links (``.<name>.undo``,
:mod:`lego_build.runtime.journal`), which :func:`sweep_stale` removes before the next
build of the design starts. While a journal is active every write is recorded, so a
build stopped by bad input can put the old bytes back.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from lego_build.runtime import crashtest, journal
from lego_build.runtime.userdirs import alive

TMP_SUFFIX = ".tmp"


def write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    jnl = journal.active()
    if jnl is not None:
        jnl.makedirs(path.parent)
        jnl.will_write(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        crashtest.point("before", path)
        os.replace(tmp, path)
        crashtest.point("after", path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def dumps_json(obj: Any) -> str:
    """Canonical JSON for artifacts: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def write_json(path: Path, obj: Any) -> None:
    write_text(path, dumps_json(obj))


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def replace_dir(path: Path) -> None:
    """Remove the directory tree ``path`` (before a stage rebuilds it, or for good); journaled, so
    a failed build puts the old tree back (:meth:`lego_build.runtime.journal.Journal.replace_dir`)."""
    jnl = journal.active()
    if jnl is not None:
        jnl.replace_dir(Path(path))
    elif Path(path).exists():
        shutil.rmtree(path)


def install_file(src: Path, dst: Path) -> None:
    """Move ``src`` (a file a tool wrote, on the same file system) to ``dst`` as an artifact write."""
    dst = Path(dst)
    jnl = journal.active()
    if jnl is not None:
        jnl.makedirs(dst.parent)
        jnl.will_write(dst)
    else:
        dst.parent.mkdir(parents=True, exist_ok=True)
    crashtest.point("before", dst)
    os.replace(src, dst)
    crashtest.point("after", dst)


def temp_for(path: Path) -> Path:
    """A temp name next to ``path`` (its directory made, journaled) for a tool to write before
    :func:`install_file` moves it into place; a killed build's is removed by :func:`sweep_stale`."""
    path = Path(path)
    jnl = journal.active()
    if jnl is not None:
        jnl.makedirs(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")


def point_symlink(link: Path, target: str) -> None:
    """Atomically make ``link`` a relative symlink to ``target``."""
    link = Path(link)
    for old in link.parent.glob(f".{link.name}.*{TMP_SUFFIX}"):  # left by killed builds (their pid is gone)
        pid = old.name[len(link.name) + 2: -len(TMP_SUFFIX)]
        if pid.isdigit() and not alive(int(pid)):
            old.unlink(missing_ok=True)
    tmp = link.with_name(f".{link.name}.{os.getpid()}{TMP_SUFFIX}")  # per process: builds may race here
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, link)


def is_stale(name: str) -> bool:
    """A leftover of a killed write: ``.<name>.<random>.tmp`` or ``.<name>.undo``."""
    return name.startswith(".") and (name.endswith(TMP_SUFFIX) or name.endswith(journal.UNDO_SUFFIX))


def sweep_stale_of(path: Path) -> list[Path]:
    """Remove the leftovers of killed writes of one file (e.g. the design's DB in the shared ``out/.doit``)."""
    path = Path(path)
    if not path.parent.is_dir():
        return []
    removed = sorted(p for p in path.parent.glob(f".{path.name}.*") if is_stale(p.name))
    for p in removed:
        p.unlink(missing_ok=True)
    return removed


def sweep_stale(top: Path) -> list[Path]:
    """Remove the temp files and undo links a killed build left under ``top``.

    Call only while holding the design's lock (:mod:`lego_build.runtime.lock`): a
    running build's temp files look the same.
    """
    removed = []
    top = Path(top)
    if not top.is_dir():
        return removed
    for root, dirs, files in os.walk(top):
        for name in [d for d in dirs if is_stale(d)]:  # a work tree moved aside by a killed build
            shutil.rmtree(Path(root) / name, ignore_errors=True)
            removed.append(Path(root) / name)
        dirs[:] = [d for d in dirs if not is_stale(d)]
        for name in files:
            if is_stale(name):
                path = Path(root) / name
                path.unlink(missing_ok=True)
                removed.append(path)
    return sorted(removed)
