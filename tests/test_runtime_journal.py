"""lego_build.runtime.journal, .atomic (stale files), .doitdb and .lock, one process at a time.

The end-to-end behaviour (kills, rollbacks through doit, two builds at once) is in
test_bad_inputs.py and test_dodo_reliability.py; these pin down each piece.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from lego_build.flow.doitdb import AtomicJsonDB
from lego_build.runtime import atomic, journal
from lego_build.runtime.lock import lock_dir


@pytest.fixture
def active_journal(monkeypatch):
    jnl = journal.Journal()
    monkeypatch.setattr(journal, "_ACTIVE", jnl)
    return jnl


def tree(root: Path) -> dict[str, bytes | None]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def test_rollback_restores_replaced_files_and_removes_created_ones(tmp_path, active_journal):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "a.json").write_text("old a\n")
    before = tree(tmp_path)
    atomic.write_text(tmp_path / "old" / "a.json", "new a\n")
    atomic.write_text(tmp_path / "old" / "a.json", "newer a\n")  # the first undo link is kept
    atomic.write_text(tmp_path / "new" / "deep" / "b.json", "b\n")
    assert (tmp_path / "old" / ".a.json.undo").read_text() == "old a\n"
    active_journal.rollback()
    assert tree(tmp_path) == before
    assert active_journal.rolled_back


def test_commit_drops_the_undo_links_and_keeps_the_new_bytes(tmp_path, active_journal):
    (tmp_path / "a.json").write_text("old\n")
    atomic.write_text(tmp_path / "a.json", "new\n")
    active_journal.commit()
    assert tree(tmp_path) == {"a.json": b"new\n"}


def test_rollback_keeps_directories_holding_files_it_did_not_write(tmp_path, active_journal):
    atomic.write_text(tmp_path / "d" / "a.json", "a\n")
    (tmp_path / "d" / "work.o").write_bytes(b"\0")  # e.g. a compiler's output, not journaled
    active_journal.rollback()
    assert tree(tmp_path) == {"d": None, "d/work.o": b"\0"}


def test_rollback_of_a_write_stopped_before_its_rename(tmp_path, active_journal, monkeypatch):
    """An interrupt between the undo link and the rename leaves two links to one file;
    rename() between them does nothing, so the rollback drops the spare link itself."""
    (tmp_path / "a.json").write_text("old\n")
    before = tree(tmp_path)

    def interrupt(phase, path):
        if phase == "before":
            raise KeyboardInterrupt

    monkeypatch.setattr(atomic.crashtest, "point", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_text(tmp_path / "a.json", "new\n")
    assert (tmp_path / ".a.json.undo").exists()  # the undo link, same inode as a.json
    active_journal.rollback()
    assert tree(tmp_path) == before


def test_work_tree_is_moved_aside_and_put_back(tmp_path, active_journal):
    """A tree a stage removes or rebuilds from scratch (the ``sim/build`` Verilator tree of older
    versions): a failed build restores the old one."""
    build = tmp_path / "sim" / "build"
    (build / "obj_dir").mkdir(parents=True)
    (build / "obj_dir" / "Vlego_top").write_bytes(b"old binary")
    before = tree(tmp_path)
    atomic.replace_dir(build)
    assert not build.exists() and (tmp_path / "sim" / ".build.undo" / "obj_dir" / "Vlego_top").exists()
    (build / "obj_dir").mkdir(parents=True)
    atomic.write_text(build / "tb.cpp", "new\n")
    atomic.replace_dir(build)  # a second rebuild in the same run keeps the first backup
    (build / "x").mkdir(parents=True)
    active_journal.rollback()
    assert tree(tmp_path) == before
    atomic.replace_dir(build)
    build.mkdir()
    (build / "new").write_text("kept")
    active_journal.commit()
    assert tree(tmp_path) == {"sim": None, "sim/build": None, "sim/build/new": b"kept"}


def test_install_file_is_journaled(tmp_path, active_journal):
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "wave.fst").write_bytes(b"old wave")
    before = tree(tmp_path)
    (tmp_path / "w.tmp").write_bytes(b"new wave")
    atomic.install_file(tmp_path / "w.tmp", tmp_path / "sim" / "wave.fst")
    assert (tmp_path / "sim" / "wave.fst").read_bytes() == b"new wave"
    active_journal.rollback()
    assert tree(tmp_path) == before


def test_a_tool_writes_next_to_the_artifact_then_it_is_installed(tmp_path, active_journal):
    """The simulator writes its waveform under :func:`atomic.temp_for`'s name in ``sim/`` (made,
    journaled), then it is installed; a killed build's temp is a stale leftover."""
    before = tree(tmp_path)
    wave = tmp_path / "sim" / "wave.fst"
    written = atomic.temp_for(wave)
    assert written.parent == wave.parent and written.parent.is_dir() and atomic.is_stale(written.name)
    written.write_bytes(b"new wave")
    atomic.install_file(written, wave)
    assert tree(tmp_path) == {"sim": None, "sim/wave.fst": b"new wave"}
    active_journal.rollback()
    assert tree(tmp_path) == before


def test_sweep_stale_removes_work_trees_of_killed_builds(tmp_path):
    (tmp_path / "sim" / ".build.undo" / "obj_dir").mkdir(parents=True)
    (tmp_path / "sim" / "build").mkdir()
    removed = atomic.sweep_stale(tmp_path)
    assert removed == [tmp_path / "sim" / ".build.undo"]
    assert (tmp_path / "sim" / "build").is_dir()


def test_without_a_journal_writes_leave_nothing_extra(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "_ACTIVE", None)
    (tmp_path / "a.json").write_text("old\n")
    atomic.write_json(tmp_path / "a.json", {"b": 1, "a": 2})
    assert tree(tmp_path) == {"a.json": b'{\n  "a": 2,\n  "b": 1\n}\n'}


def test_sweep_stale_removes_only_leftovers(tmp_path):
    keep = ["analysis.json", ".hidden", "rtl/lego_top.v", "sim/wave.fst"]
    stale = [".analysis.json.k3j4.tmp", ".mapping.json.undo", "rtl/.lego_top.v.abcd.tmp", "sim/.wave.fst.4242.tmp"]
    for name in keep + stale:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    removed = atomic.sweep_stale(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in removed) == sorted(stale)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == sorted(keep)


def test_sweep_stale_of_one_file_leaves_other_designs_alone(tmp_path):
    for name in (".a.json.x1.tmp", ".a.json.undo", ".b.json.x2.tmp", "a.json"):
        (tmp_path / name).write_text("x")
    atomic.sweep_stale_of(tmp_path / "a.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".b.json.x2.tmp", "a.json"]


class _Codec:
    encode, decode = staticmethod(json.dumps), staticmethod(json.loads)


def test_doit_db_saves_atomically_and_reads_a_damaged_file_as_empty(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(journal, "_ACTIVE", None)
    path = tmp_path / "db" / "d.json"
    db = AtomicJsonDB(str(path), _Codec())
    db.set("map:d", "_values_:", {"x": 1})
    db.dump()
    assert json.loads(path.read_text()) == {"map:d": {"_values_:": {"x": 1}}}
    assert sorted(p.name for p in path.parent.iterdir()) == ["d.json"]
    path.write_text('{"map:d": {"_val')  # cut short by something outside lego_build
    again = AtomicJsonDB(str(path), _Codec())
    assert again.get("map:d", "_values_:") is None
    assert "stages will re-run" in capsys.readouterr().err


def test_doit_db_is_not_saved_after_a_rollback(tmp_path, active_journal):
    path = tmp_path / "d.json"
    path.write_text("{}")
    db = AtomicJsonDB(str(path), _Codec())
    db.set("map:d", "x", 1)
    active_journal.rollback()
    db.dump()
    assert path.read_text() == "{}"


def test_lock_dir_waits_for_the_holder(tmp_path, capsys):
    first = lock_dir(tmp_path / "design", lambda p: p.mkdir(parents=True, exist_ok=True))
    got = []

    def second():
        fd = lock_dir(tmp_path / "design", lambda p: p.mkdir(parents=True, exist_ok=True))
        got.append(time.monotonic())
        os.close(fd)

    t = threading.Thread(target=second)
    t.start()
    time.sleep(1.0)
    assert not got  # still waiting
    released = time.monotonic()
    fcntl.flock(first, fcntl.LOCK_UN)
    os.close(first)
    t.join(5)
    assert got and got[0] >= released
    assert "another build of" in capsys.readouterr().err


def test_lock_dir_relocks_a_directory_replaced_while_waiting(tmp_path):
    design = tmp_path / "design"
    first = lock_dir(design, lambda p: p.mkdir(parents=True, exist_ok=True))
    fds = []
    t = threading.Thread(target=lambda: fds.append(lock_dir(design, lambda p: p.mkdir(parents=True, exist_ok=True),
                                                            wait_note=False)))
    t.start()
    time.sleep(1.0)
    shutil.rmtree(design)  # e.g. doit clean, or a rolled-back first build
    os.close(first)  # releases the lock on the removed directory
    t.join(5)
    assert fds and os.fstat(fds[0]).st_ino == os.stat(design).st_ino
    os.close(fds[0])


def test_point_symlink_clears_temp_links_of_dead_builds(tmp_path):
    dead = 2 ** 22 + 12345  # above the default pid_max: no such process
    os.symlink("x", tmp_path / f".latest.{dead}.tmp")
    os.symlink("y", tmp_path / f".latest.{os.getppid()}.tmp")  # a live process's: left alone
    atomic.point_symlink(tmp_path / "latest", "design-a")
    assert os.readlink(tmp_path / "latest") == "design-a"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["latest", f".latest.{os.getppid()}.tmp"])
