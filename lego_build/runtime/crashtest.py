"""Fault injection for the crash-safety tests (issue 10): a build kills itself at a chosen write.

Every state change of a build is an artifact write (:func:`lego_build.runtime.atomic.write_bytes`:
temp file, then rename) or a dependency-DB save (also such a write), so killing the
process just before or just after each rename reaches every distinct on-disk state a
SIGKILL can leave; between two writes a kill is equivalent to one at the next.

* ``LEGO_CRASH_AT=<stage>:<n>:<before|after>[:<INT|TERM>]``: SIGKILL (or, with a
  fourth field, SIGINT or SIGTERM: an interrupt the build handles) at the ``n``-th
  write of ``stage`` (the write-ahead DB save that opens a stage is its write 1),
  before the temp file is renamed over the artifact or just after.
* ``LEGO_CRASH_TRACE=1``: print every write point (``crash-point <stage> <n> <path>``)
  on stderr, so a test can choose among them.

Unset (always, outside the tests) both cost an environment lookup per write.
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

_AT = "LEGO_CRASH_AT"
_TRACE = "LEGO_CRASH_TRACE"
_state = {"stage": "load", "n": 0}


def enter(stage: str) -> None:
    """A stage's action starts: its writes count from 1."""
    _state["stage"], _state["n"] = stage, 0


def point(phase: str, path: Path) -> None:
    """Called by the atomic writer ``before`` and ``after`` its rename."""
    at, trace = os.environ.get(_AT), os.environ.get(_TRACE)
    if not at and not trace:
        return
    if phase == "before":
        _state["n"] += 1
        if trace:
            sys.stderr.write(f"crash-point {_state['stage']} {_state['n']} {Path(path).as_posix()}\n")
            sys.stderr.flush()
    if at and at.split(":")[:3] == [_state["stage"], str(_state["n"]), phase]:
        sig = at.split(":")[3] if at.count(":") >= 3 else "KILL"
        os.kill(os.getpid(), getattr(signal, f"SIG{sig}"))
