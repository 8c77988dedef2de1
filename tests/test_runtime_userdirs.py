"""lego_build.runtime.userdirs: the cache root, failure logs and scratch trees outside ``out/``."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from lego_build.runtime import userdirs


def test_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "c"))
    assert userdirs.cache_root() == tmp_path / "c"
    monkeypatch.setenv("LEGO_CACHE_DIR", "off")
    assert userdirs.cache_root() is None
    monkeypatch.delenv("LEGO_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert userdirs.cache_root() == tmp_path / "xdg" / "lego_build"


def test_logs_go_to_the_cache_root_else_the_temp_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "cache"))
    log = userdirs.write_log("verilator", "%Error: x\n")
    assert log.parent == tmp_path / "cache" / "logs" and log.name.startswith("verilator-")
    assert log.suffix == ".log" and log.read_text() == "%Error: x\n"
    assert userdirs.write_log("verilator", "again") != log  # never overwrites an earlier log
    monkeypatch.setenv("LEGO_CACHE_DIR", "off")
    off = userdirs.write_log("simulate-traceback", "tb")
    assert off.parent == tmp_path / "temp" and off.name.startswith("lego_build-simulate-traceback-")
    (tmp_path / "file").write_text("")  # a cache root that cannot be a directory: the temp dir too
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "file"))
    assert userdirs.write_log("verilator", "x").parent == tmp_path / "temp"


def test_only_the_newest_logs_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(userdirs, "KEEP_LOGS", 3)
    logs = []
    for i in range(5):
        logs.append(userdirs.write_log("verilator", str(i)))
        os.utime(logs[-1], (1000 + i, 1000 + i))  # in write order, whatever the clock's resolution
    assert sorted((tmp_path / "logs").iterdir()) == sorted(logs[2:])


def test_a_scratch_tree_is_removed_on_success_error_and_interrupt(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with userdirs.scratch("lego_build-t-") as work:
        assert work.parent == tmp_path and work.name.startswith(f"lego_build-t-{os.getpid()}-")
        (work / "obj_dir").mkdir()
    assert not work.exists()
    for exc in (RuntimeError, KeyboardInterrupt):
        with pytest.raises(exc), userdirs.scratch("lego_build-t-") as work:
            (work / "big.o").write_bytes(b"0" * 1000)
            raise exc
        assert not work.exists()


def test_a_killed_process_scratch_tree_is_removed_by_the_next(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()  # a process that has exited
    dead = tmp_path / f"lego_build-t-{gone}-abc"
    live = tmp_path / f"lego_build-t-{os.getppid()}-abc"  # a running process's: kept
    other = tmp_path / f"lego_build-u-{gone}-abc"  # another prefix's: not this kind's to remove
    for d in (dead, live, other):
        (d / "obj_dir").mkdir(parents=True)
    with userdirs.scratch("lego_build-t-"):
        assert not dead.exists() and live.is_dir() and other.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])


def test_alive():
    assert userdirs.alive(os.getpid())
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert not userdirs.alive(proc.pid)
    assert userdirs.alive(1)  # init, often someone else's: still a process
