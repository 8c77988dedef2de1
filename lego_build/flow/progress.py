"""A one-line progress bar on stderr for long stages (only on a terminal, so logs stay clean)."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, label: str, total: int, stream=None, width: int = 24):
        self.label, self.total, self.width = label, max(total, 1), width
        self.stream = stream if stream is not None else sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self.done = 0

    def step(self, what: str = "") -> None:
        self.done += 1
        if not self.live:
            return
        filled = self.width * self.done // self.total
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.monotonic() - self.start
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {what[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\r" + " " * (len(self.label) + self.width + 60) + "\r")
            self.stream.flush()
