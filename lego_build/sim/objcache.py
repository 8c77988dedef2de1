"""A cache of Verilator's runtime objects (``verilated.o`` and friends) across builds.

Every Verilator build compiles the same runtime library next to the design: about
5 s of the 7 s a small design's simulation build takes on this machine, while the
design itself compiles in about 1 s. The runtime does not depend on the design, only
on the compile command (compiler, flags, trace defines, Verilator's include dir), so
it is compiled once per distinct command and reused:

* the key of an object is the sha256 of the exact command ``make -n`` prints for it
  in the generated ``obj_dir``, the compiler's ``--version`` and the source's size
  and mtime;
* before ``make`` runs, cached objects are copied into ``obj_dir`` (fresh mtime, so
  make takes them as up to date); after it, objects not yet cached are stored with a
  temp file + rename, so concurrent builds and killed builds never see half a file.

A second cache holds whole simulation binaries (:func:`model_key`, :func:`model`,
:func:`store_model`), which run from there (no copy per design): a design whose Verilog,
testbench, Verilator and compiler are the same as an earlier build's (a rebuild after
``target.seed`` or ``target.data`` changes, a second project, a sweep over mapper or
cost-model settings) runs that build's binary instead of verilating and compiling again.
The key is the content, never a path or a time: sha256 of Verilator's resolved path and
``--version``, the compile flags, the testbench, every RTL file's bytes in file-list order
and the compiler's ``--version``.

The caches live in the cache root (:func:`lego_build.runtime.userdirs.cache_root`:
``$LEGO_CACHE_DIR`` or ``~/.cache/lego_build``); ``LEGO_CACHE_DIR=off`` disables them.
Deleting them is safe whenever no build is running.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from lego_build.runtime.tools import content_key, tool_version
from lego_build.runtime.userdirs import cache_root


def runtime_names(obj_dir: Path) -> list[str]:
    """The runtime sources this build compiles: ``VM_GLOBAL_FAST``/``_SLOW`` of ``*_classes.mk``."""
    names: list[str] = []
    for mk in sorted(obj_dir.glob("*_classes.mk")):
        text = mk.read_text().replace("\\\n", " ")
        for m in re.finditer(r"^VM_GLOBAL_(?:FAST|SLOW)\s*\+?=(.*)$", text, flags=re.M):
            names += [n for n in m.group(1).split() if n.startswith("verilated")]
    return names


def cache_dir() -> Optional[Path]:
    """Verilator's runtime objects."""
    root = cache_root()
    return None if root is None else root / "verilator-runtime"


def model_dir() -> Optional[Path]:
    """Whole simulation binaries, by :func:`model_key`."""
    root = cache_root()
    return None if root is None else root / "verilator-models"


def model_key(verilator: str, flags: list[str], testbench: str, rtl_files: list[Path]) -> str:
    """The content key of a simulation binary (see the module docstring)."""
    return content_key([str(Path(verilator).resolve()), tool_version(verilator), "\0".join(flags), testbench,
                        tool_version(os.environ.get("CXX", "c++"))], rtl_files)


def _model_path(key: str) -> Optional[Path]:
    top = model_dir()
    return None if top is None else top / key[:2] / key


def model(key: str) -> Optional[Path]:
    """The cached binary of ``key`` (made executable if a cache written by an older version
    left it not); None when there is none or it cannot be run."""
    cached = _model_path(key)
    if cached is None or not cached.is_file():
        return None
    if not os.access(cached, os.X_OK):
        try:
            cached.chmod(0o755)
        except OSError:  # someone else's, read-only cache: build afresh
            return None
    return cached


def store_model(key: str, binary: Path) -> Optional[Path]:
    """Cache a freshly built binary (temp file + rename); the cached file, or None when the
    cache is off, read-only or full (the build then runs ``binary`` itself)."""
    cached = _model_path(key)
    if cached is None:
        return None
    _store_file(binary, cached, 0o755)
    return model(key)


def _store_file(built: Path, cached: Path, mode: int = 0o644) -> None:
    if cached.is_file() or not built.is_file():
        return
    tmp = None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{cached.name}.", suffix=".tmp", dir=cached.parent)
        os.close(fd)
        shutil.copyfile(built, tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, cached)
    except OSError:  # a read-only or full cache never fails a build
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def keys(obj_dir: Path, makefile: str) -> dict[str, str]:
    """``{"verilated.o": key, ...}`` for the runtime objects this build's makefile would compile."""
    targets = [f"{name}.o" for name in runtime_names(obj_dir)]
    if not targets:
        return {}
    proc = subprocess.run(["make", "-n", "-B", "-k", "-f", makefile, *targets], cwd=obj_dir,
                          capture_output=True, text=True)
    found = {}
    for line in proc.stdout.splitlines():
        m = re.search(r"-o (\S+\.o) (\S+\.cpp)\s*$", line.strip())
        if not m or m.group(1) not in targets:
            continue
        obj, src = m.group(1), Path(m.group(2))
        if not src.is_file():
            continue
        st = src.stat()
        cxx = line.split()[0]
        digest = hashlib.sha256("\0".join([line.strip(), tool_version(cxx), str(st.st_size),
                                           str(st.st_mtime_ns)]).encode()).hexdigest()
        found[obj] = digest
    return found


def prime(obj_dir: Path, makefile: str) -> dict[str, str]:
    """Copy the cached runtime objects into ``obj_dir``; return the keys of all of them."""
    top = cache_dir()
    if top is None:
        return {}
    found = keys(obj_dir, makefile)
    for obj, key in found.items():
        cached = top / key[:2] / f"{key}.o"
        if cached.is_file():
            tmp = obj_dir / f".{obj}.tmp"
            shutil.copyfile(cached, tmp)
            os.replace(tmp, obj_dir / obj)  # fresh mtime: newer than the runtime sources
    return found


def store(obj_dir: Path, found: dict[str, str]) -> None:
    """Cache the runtime objects this build compiled (atomic per object; errors only skip)."""
    top = cache_dir()
    if top is None:
        return
    for obj, key in found.items():
        _store_file(obj_dir / obj, top / key[:2] / f"{key}.o")
