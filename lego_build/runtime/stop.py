"""A soft stop for long searches (issue 22): the first Ctrl-C during the map stage asks each
layer's search to end with the best mapping it has found (the rest of the layers each keep
their first valid one), so the build goes on with what the mapper has; a second Ctrl-C
abandons the build as any interrupt does (:func:`lego_build.flow.tasks.on_signal`).

A signal is process state, so the request is one event of the process; the map stage clears
it when it ends, so a later stage's interrupt rolls the build back as before.
"""
from __future__ import annotations

import threading

_REQUESTED = threading.Event()


def request() -> None:
    _REQUESTED.set()


def requested() -> bool:
    return _REQUESTED.is_set()


def clear() -> None:
    _REQUESTED.clear()
