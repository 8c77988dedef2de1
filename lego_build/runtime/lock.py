"""One build of a design at a time: an exclusive ``flock`` on its directory.

``dodo.py`` takes the lock as soon as the config is valid, before doit reads the
design's dependency DB, and holds it until the process ends (the kernel drops it
even on SIGKILL). A second build of the same design waits (and says so), then
finds the first one's work up to date; builds of other designs lock other
directories and run in parallel.

The lock is on the directory itself, not on a lock file: nothing extra appears in
``out/``. If the directory is removed and re-created while we wait (``doit clean``,
a rolled-back build), the lock we got is on a dead inode, so we take it again.
"""
from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from typing import Callable


def lock_dir(path: Path, makedirs: Callable[[Path], None], wait_note: bool = True) -> int:
    """Create ``path`` (with ``makedirs``), lock it exclusively, return the open descriptor."""
    path = Path(path)
    noted = False
    while True:
        makedirs(path)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if wait_note and not noted:
                sys.stderr.write(f"note: another build of {path.as_posix()} is running; waiting for it\n")
                sys.stderr.flush()
                noted = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the directory was replaced while we waited: lock the new one
