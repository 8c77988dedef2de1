"""Progress of long stages: a redrawn one-line bar on a terminal (stderr); with ``lines=True``,
a plain line per step on stdout otherwise (build logs, CI), and nothing without it."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, label: str, total: int, stream=None, width: int = 24, lines: bool = False):
        self.label, self.total, self.width = label, max(total, 1), width
        self.stream = stream if stream is not None else sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.lines = lines and not self.live
        self.start = time.monotonic()
        self.done = 0

    def step(self, what: str = "") -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        if self.lines:
            print(f"{self.label}: [{self.done}/{self.total}] {elapsed:.1f} s {what}".rstrip(), flush=True)
            return
        if not self.live:
            return
        filled = self.width * self.done // self.total
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {what[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\r" + " " * (len(self.label) + self.width + 60) + "\r")
            self.stream.flush()
