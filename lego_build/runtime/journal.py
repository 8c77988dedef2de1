"""Undo journal of one build process: bad input leaves ``out/`` byte-identical.

A build can meet bad input only after earlier stages have written (``doit build``
runs ``analyze`` before ``map`` finds that no tile fits a buffer). While a journal is
active, every artifact write (:mod:`lego_build.runtime.atomic`) first records what it
replaces: a hard link to the old file (``.<name>.undo``, same inode, no copy) or
"did not exist", and every directory it creates; a directory tree a stage removes
(the Verilator tree older versions kept in ``sim/build``) is moved aside whole
(:meth:`Journal.replace_dir`). :meth:`Journal.rollback` puts all of it back and marks
the journal so the dependency DB is not saved either (:mod:`lego_build.flow.doitdb`);
:meth:`Journal.commit` (at process exit) drops the undo links. A build killed by SIGKILL leaves
undo links behind; the next build removes them (:func:`lego_build.runtime.atomic.sweep_stale`) and, since the killed
run saved no dependency records, re-runs its stages.

One journal per process (:func:`start`), because the writers are the stages' own
``write_json`` calls several frames below the doit action that decides to roll back.
"""
from __future__ import annotations

import atexit
import os
import shutil
from pathlib import Path
from typing import Optional

UNDO_SUFFIX = ".undo"


def undo_path(path: Path) -> Path:
    return path.with_name(f".{path.name}{UNDO_SUFFIX}")


class Journal:
    def __init__(self) -> None:
        self._files: dict[Path, Optional[Path]] = {}  # artifact -> undo link (None: created); write order
        self._dirs: list[Path] = []  # created by this run, outermost first
        self._trees: dict[Path, Optional[Path]] = {}  # work tree -> its old tree moved aside (None: new)
        self.rolled_back = False

    def makedirs(self, path: Path) -> None:
        """``mkdir -p`` that records each directory it creates."""
        path = Path(path)
        missing = []
        probe = path
        while not probe.exists() and probe != probe.parent:
            missing.append(probe)
            probe = probe.parent
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:  # created meanwhile by a build of another design (out/ itself)
                continue
            self._dirs.append(d)

    def will_write(self, path: Path) -> None:
        """Call before replacing ``path``: keeps its old bytes reachable until commit."""
        path = Path(path)
        if path in self._files:
            return
        backup = None
        if path.is_file() and not path.is_symlink():
            backup = undo_path(path)
            backup.unlink(missing_ok=True)
            os.link(path, backup)
        self._files[path] = backup

    def replace_dir(self, path: Path) -> None:
        """Call before a stage rebuilds the directory tree ``path`` from scratch: the old tree
        is moved aside (``.<name>.undo``) until commit, and ``path`` no longer exists."""
        path = Path(path)
        self.makedirs(path.parent)
        if path in self._trees:
            shutil.rmtree(path, ignore_errors=True)
            return
        backup = None
        if path.is_dir() and not path.is_symlink():
            backup = undo_path(path)
            shutil.rmtree(backup, ignore_errors=True)
            os.replace(path, backup)
        self._trees[path] = backup

    def rollback(self) -> None:
        """Restore every recorded file and tree and remove what this run created."""
        for path, backup in reversed(self._files.items()):
            if backup is None:
                path.unlink(missing_ok=True)
            elif path.exists() and os.path.samefile(backup, path):  # stopped before its rename: rename()
                backup.unlink()  # of two links to one file does nothing, so drop the spare link
            else:
                os.replace(backup, path)
        for path, backup in reversed(self._trees.items()):
            shutil.rmtree(path, ignore_errors=True)
            if backup is not None:
                os.replace(backup, path)
        for d in reversed(self._dirs):
            try:
                d.rmdir()
            except OSError:  # not empty: something outside the journal (a stage's work files) lives there
                pass
        self._files.clear()
        self._trees.clear()
        self._dirs.clear()
        self.rolled_back = True

    def commit(self) -> None:
        for backup in self._files.values():
            if backup is not None:
                backup.unlink(missing_ok=True)
        for backup in self._trees.values():
            if backup is not None:
                shutil.rmtree(backup, ignore_errors=True)
        self._files.clear()
        self._trees.clear()
        self._dirs.clear()


_ACTIVE: Optional[Journal] = None


def start() -> Journal:
    """Begin journaling this process's writes (dodo.py, once the config is valid)."""
    global _ACTIVE
    if _ACTIVE is None:
        _ACTIVE = Journal()
        atexit.register(_ACTIVE.commit)
    return _ACTIVE


def active() -> Optional[Journal]:
    return _ACTIVE
