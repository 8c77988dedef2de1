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

A second cache holds whole simulation binaries (:func:`model_key`, :func:`fetch_model`,
:func:`store_model`): a design whose Verilog, testbench, Verilator and compiler are the
same as an earlier build's (a rebuild after ``target.seed`` or ``target.data`` changes,
a second project, a sweep over mapper or cost-model settings) runs that build's binary
instead of verilating and compiling again. The key is the content, never a path or a
time: sha256 of Verilator's resolved path and ``--version``, the compile flags, the
testbench, every RTL file's bytes in file-list order and the compiler's ``--version``.

The caches live in ``$LEGO_CACHE_DIR`` or ``~/.cache/lego_build`` (``$XDG_CACHE_HOME``);
``LEGO_CACHE_DIR=off`` disables them. Deleting them is always safe.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional


def runtime_names(obj_dir: Path) -> list[str]:
    """The runtime sources this build compiles: ``VM_GLOBAL_FAST``/``_SLOW`` of ``*_classes.mk``."""
    names: list[str] = []
    for mk in sorted(obj_dir.glob("*_classes.mk")):
        text = mk.read_text().replace("\\\n", " ")
        for m in re.finditer(r"^VM_GLOBAL_(?:FAST|SLOW)\s*\+?=(.*)$", text, flags=re.M):
            names += [n for n in m.group(1).split() if n.startswith("verilated")]
    return names


def _cache_root() -> Optional[Path]:
    env = os.environ.get("LEGO_CACHE_DIR")
    if env == "off":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lego_build"


def cache_dir() -> Optional[Path]:
    """Verilator's runtime objects."""
    root = _cache_root()
    return None if root is None else root / "verilator-runtime"


def model_dir() -> Optional[Path]:
    """Whole simulation binaries, by :func:`model_key`."""
    root = _cache_root()
    return None if root is None else root / "verilator-models"


@functools.cache
def _version_of(cxx: str) -> str:
    try:
        return subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def model_key(verilator: str, flags: list[str], testbench: str, rtl_files: list[Path]) -> str:
    """The content key of a simulation binary (see the module docstring)."""
    h = hashlib.sha256()
    for part in (str(Path(verilator).resolve()), _version_of(verilator), "\0".join(flags), testbench,
                 _version_of(os.environ.get("CXX", "c++"))):
        h.update(part.encode() + b"\0\1")
    for path in rtl_files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0\1")
    return h.hexdigest()


def _model_path(key: str) -> Optional[Path]:
    top = model_dir()
    return None if top is None else top / key[:2] / key


def fetch_model(key: str, binary: Path) -> bool:
    """Copy the cached binary of ``key`` to ``binary``; False when there is none."""
    cached = _model_path(key)
    if cached is None or not cached.is_file():
        return False
    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.parent / f".{binary.name}.tmp"
    shutil.copyfile(cached, tmp)
    tmp.chmod(0o755)
    os.replace(tmp, binary)
    return True


def store_model(key: str, binary: Path) -> None:
    """Cache a freshly built binary (temp file + rename; a read-only or full cache only skips)."""
    cached = _model_path(key)
    if cached is not None:
        _store_file(binary, cached)


def _store_file(built: Path, cached: Path) -> None:
    if cached.is_file() or not built.is_file():
        return
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{cached.name}.", suffix=".tmp", dir=cached.parent)
        os.close(fd)
        shutil.copyfile(built, tmp)
        os.replace(tmp, cached)
    except OSError:  # a read-only or full cache never fails a build
        return


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
        digest = hashlib.sha256("\0".join([line.strip(), _version_of(cxx), str(st.st_size),
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
