"""Cyclic garbage collection paused while a search runs.

A mapper's search allocates millions of small objects (schedules, tilings, memo entries) and
keeps many of them alive in its memos; CPython's cycle collector then rescans the growing
heap at every generation-2 threshold, which cost about a fifth of the map stage's CPU time
(ResNet-18 on ``eyeriss_ruby``). The searches make no reference cycles (a recursive closure is
one: the cost model's, the order trie's and the latency model's are written without), so
reference counting frees everything they drop; ``tests/test_runtime_gcpause.py`` checks that no
layer's search leaves a cycle. The collector runs again once the searches are over.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused() -> Iterator[None]:
    """Disable the cycle collector for the block (as it was before, after it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
