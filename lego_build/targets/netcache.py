"""The netlist cache: a synthesis's netlists kept under the content key of its inputs (Yosys,
its script, the ABC script, the Liberty file and every Verilog file), in the cache root's
``netlists/`` (:func:`lego_build.runtime.userdirs.cache_root`). A flattened netlist of a 16x16
design is hundreds of MB, so the cache keeps the most recently used entries up to
:data:`LIMIT_BYTES` (``LEGO_NETLIST_CACHE_MB`` overrides) and removes the others; deleting it is
always safe."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from lego_build.runtime.tools import content_key, tool_version
from lego_build.runtime.userdirs import cache_root

#: the cache's size after a store (the entry just stored is kept whatever its size)
LIMIT_BYTES = 2 * 1024 ** 3


def key(yosys: str, steps: list[str], abc_script: str, inputs: list[Path]) -> str:
    """The content key of a synthesis: Yosys's resolved path and version, its script (paths
    written as placeholders), the ABC script and the bytes of every input file."""
    return content_key([str(Path(yosys).resolve()), tool_version(yosys, "-V"), "\n".join(steps), abc_script], inputs)


def entry(k: str) -> Path | None:
    """The directory of key ``k`` (None with the cache off)."""
    root = cache_root()
    return None if root is None else root / "netlists" / k[:2] / k


def take(cached: Path | None, files: tuple[str, ...], out: Path) -> bool:
    """Copy a cached synthesis's ``files`` into ``out``; False when there is none. A hit marks
    the entry as recently used."""
    if cached is None or not all((cached / f).is_file() for f in files):
        return False
    for f in files:
        shutil.copyfile(cached / f, out / f)
    try:
        os.utime(cached)
    except OSError:  # someone else's, read-only cache
        pass
    return True


def store(out: Path, cached: Path, files: tuple[str, ...]) -> None:
    """Keep a synthesis's netlists under its key: written beside, then renamed into place (a
    concurrent build's copy, or a read-only or full cache, only skips); then the least recently
    used entries go until the cache is within its limit (:func:`evict`)."""
    if cached.is_dir():
        return
    tmp = None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{cached.name}.", dir=cached.parent))
        for f in files:
            shutil.copyfile(out / f, tmp / f)
        os.replace(tmp, cached)
    except OSError:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        return
    evict(cached.parent.parent, keep=cached)


def limit_bytes() -> int:
    mb = os.environ.get("LEGO_NETLIST_CACHE_MB", "")
    return int(mb) * 1024 ** 2 if mb.isdigit() else LIMIT_BYTES


def evict(root: Path, keep: Path, limit: int | None = None) -> list[Path]:
    """Remove the least recently used entries under ``root`` (by their directory's time) until the
    rest, ``keep`` included, is at most ``limit`` bytes; the removed entries."""
    limit = limit_bytes() if limit is None else limit
    entries = []
    for d in root.glob("*/*"):
        if d.is_dir() and not d.name.startswith("."):
            try:
                entries.append((d.stat().st_mtime, sum(f.stat().st_size for f in d.iterdir()), d))
            except OSError:  # removed by a concurrent eviction
                continue
    total = sum(size for _, size, _ in entries)
    removed = []
    for _, size, d in sorted(entries, key=lambda e: (e[0], str(e[2]))):
        if total <= limit:
            break
        if d == keep:
            continue
        shutil.rmtree(d, ignore_errors=True)
        total -= size
        removed.append(d)
    return removed
