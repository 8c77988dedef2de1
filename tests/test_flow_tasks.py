"""Every failure path of a stage (lego_build.flow.tasks.run_stage_action) goes through the journal's
rollback: a simulation timeout, a Verilator compile failure, an interrupt inside a stage or
between stages, an unexpected exception. Each real ``doit build`` case starts from an earlier
build's ``out/`` and must end with one ``error:`` line, no traceback, and ``out/`` byte-identical;
the next build then runs exactly what the failed one would have."""
from __future__ import annotations

import os
import shutil
import stat
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_dodo import doit, make_project, ran, snapshot

from lego_build import compose
from lego_build.flow import stages, tasks
from lego_build.runtime import journal

# the module's builds are shared fixtures; its tests stay on one xdist worker (--dist loadscope)
pytestmark = pytest.mark.slow

FAKE_VERILATOR = """#!/bin/sh
# lints and answers --version like verilator-cli, but its C++ generation fails
case "$*" in
  *--cc*) echo "%Error: injected failure of the C++ generation" >&2; exit 1;;
  *) exec "{real}" "$@";;
esac
"""

#: (case id, extra overrides, extra environment, expected exit status, words the error line has)
CASES = (
    ("max-cycles", ("target.max_cycles=1",), {}, 1, "target.max_cycles=1"),
    # a whole layer (505 cycles measured) over a limit its lower bound (320) is under: the message names the layer
    ("max-cycles-whole-layer", ("target.scope=layers", "target.max_cycles=400"), {}, 1,
     "target.max_cycles=400 cycles before layer gemm finished"),
    ("verilator-compile", ("target.seed=5",), {"LEGO_VERILATOR": "<fake>", "LEGO_CACHE_DIR": "<cache>"}, 1,
     "Verilator build failed"),
    # a target setting does not re-run emit (it reads the bus width alone); another optimizer does
    ("sigint-in-emit", ("optimizer=greedy",), {"LEGO_CRASH_AT": "emit:2:before:INT"}, 130, "stage emit interrupted"),
    ("sigterm-in-simulate", ("target.seed=6",), {"LEGO_CRASH_AT": "simulate:3:before:TERM"}, 130,
     "stage simulate interrupted"),
    ("sigint-in-report", ("target.seed=6",), {"LEGO_CRASH_AT": "report:2:after:INT"}, 130, "stage report interrupted"),
    # the last DB save happens after the build task, outside every stage: the handler rolls back itself
    ("sigint-between-stages", ("target.seed=6",), {"LEGO_CRASH_AT": "report:6:before:INT"}, 130, "build interrupted"),
)


@pytest.fixture(scope="module")
def failures(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("failures")
    from lego_build.sim.verilator import require_verilator

    fake = root / "fake-verilator"
    fake.write_text(FAKE_VERILATOR.format(real=require_verilator()))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)

    built = make_project(root / "built")  # one earlier build, copied into each case's project
    first = doit(built, "build")
    assert first.returncode == 0, first.stdout + first.stderr

    def run(case):
        cid, overrides, env, _, _ = case
        project = root / cid
        shutil.copytree(built, project, symlinks=True)
        before = snapshot(project / "out")
        cache = root / f"{cid}-cache"  # a case's own cache root (outside its project)
        extra = {k: {"<fake>": str(fake), "<cache>": str(cache)}.get(v, v) for k, v in env.items()}
        proc = _doit_env(project, extra, "build", *overrides)
        after = snapshot(project / "out")
        again = doit(project, "build", *overrides) if cid.startswith("sig") else None
        return {"proc": proc, "same": after == before, "again": again, "cache": cache}

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip((c[0] for c in CASES), pool.map(run, CASES)))


def _doit_env(project: Path, env: dict, *args: str):
    import subprocess

    cmd = [sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), *args]
    return subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=900, env={**os.environ, **env})


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_failure_rolls_back_out(failures, case):
    cid, _, _, code, words = case
    proc, same = failures[cid]["proc"], failures[cid]["same"]
    report = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-1500:]}\nstderr:\n{proc.stderr[-1500:]}"
    assert proc.returncode == code, report
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], report
    assert "Traceback" not in proc.stdout + proc.stderr, report
    assert same, f"out/ changed\n{report}"
    again = failures[cid]["again"]
    if again is not None:  # an interrupted build is finished by the next one, which runs the remaining stages
        assert again.returncode == 0, again.stdout + again.stderr
        last = ("emit", "simulate", "report")
        stopped = case[2]["LEGO_CRASH_AT"].split(":")[0]
        assert ran(again.stdout) >= set(last[last.index(stopped):])


@pytest.mark.slow
def test_a_failed_compile_keeps_its_log_in_the_cache_root(failures):
    """The full log of a failed Verilator compile goes to ``<cache root>/logs``, where neither the
    rollback of ``out/`` nor the scratch tree's removal takes it, nor into the system's temp directory."""
    case = failures["verilator-compile"]
    line = case["proc"].stderr.strip()
    log = Path(line.split("the full log is ", 1)[1].split(";", 1)[0])
    assert log.parent == case["cache"] / "logs" and log.name.startswith("verilator-")
    assert "injected failure of the C++ generation" in log.read_text()


def test_unexpected_exception_rolls_back_and_keeps_the_traceback(tmp_path, monkeypatch, capsys):
    (tmp_path / "lego_buggy_stage_mod.py").write_text(
        "def run(cfg, design_dir, inputs):\n"
        "    return {}['no such key']\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("LEGO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(stages.STAGE_BY_NAME, "buggy",
                        stages.Stage("buggy", (), (), ("x.json",), "lego_buggy_stage_mod:run"))
    rolled = []
    monkeypatch.setattr(journal, "active", lambda: type("J", (), {"rollback": lambda self: rolled.append(1)})())
    with pytest.raises(SystemExit) as stop:
        tasks.run_stage_action("buggy", compose(), str(tmp_path / "design"))
    assert stop.value.code == 1 and rolled == [1]
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: stage buggy failed with KeyError: 'no such key'; this is a bug in lego_build")
    log = Path(line.rsplit("traceback in ", 1)[1])
    assert log.parent == tmp_path / "cache" / "logs" and log.name.startswith("buggy-traceback-")
    assert "lego_buggy_stage_mod.py" in log.read_text() and "KeyError" in log.read_text()


def test_memory_error_and_interrupt_in_a_stage(tmp_path, monkeypatch, capsys):
    (tmp_path / "lego_hungry_stage_mod.py").write_text(
        "def run(cfg, design_dir, inputs):\n"
        "    raise MemoryError\n"
        "def stop(cfg, design_dir, inputs):\n"
        "    raise KeyboardInterrupt\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(stages.STAGE_BY_NAME, "hungry",
                        stages.Stage("hungry", (), (), ("x.json",), "lego_hungry_stage_mod:run"))
    monkeypatch.setitem(stages.STAGE_BY_NAME, "stopped",
                        stages.Stage("stopped", (), (), ("x.json",), "lego_hungry_stage_mod:stop"))
    monkeypatch.setattr(journal, "active", lambda: None)
    with pytest.raises(SystemExit) as stop:
        tasks.run_stage_action("hungry", compose(), str(tmp_path / "d"))
    assert stop.value.code == 1 and "ran out of memory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        tasks.run_stage_action("stopped", compose(), str(tmp_path / "d"))
    assert stop.value.code == tasks.INTERRUPTED_EXIT == 130 and "stage stopped interrupted" in capsys.readouterr().err
    assert not tasks._RUNNING  # the signal handler knows no stage is running any more


def test_first_ctrl_c_of_the_map_stage_only_ends_its_searches(monkeypatch, capsys):
    """on_signal: during ``map`` the first SIGINT asks the searches to stop with their best
    (lego_build.runtime.stop) and returns; the second, or any in another stage, or SIGTERM,
    interrupts."""
    import signal

    from lego_build.runtime import stop

    monkeypatch.setattr(tasks, "_RUNNING", ["map"])
    try:
        tasks.on_signal(signal.SIGINT, None)
        assert stop.requested() and "Ctrl-C again abandons the build" in capsys.readouterr().err
        with pytest.raises(KeyboardInterrupt):
            tasks.on_signal(signal.SIGINT, None)
        stop.clear()
        with pytest.raises(KeyboardInterrupt):
            tasks.on_signal(signal.SIGTERM, None)
        monkeypatch.setattr(tasks, "_RUNNING", ["simulate"])
        with pytest.raises(KeyboardInterrupt):
            tasks.on_signal(signal.SIGINT, None)
        assert not stop.requested()
    finally:
        stop.clear()


def test_ctrl_c_during_map_keeps_the_best_mappings(tmp_path):
    """A real ``doit map`` with long random searches, interrupted once: exit 0, every layer mapped
    with the best its search had, the ones cut short marked in ``mapping.json``."""
    import json
    import signal
    import subprocess
    import time

    project = make_project(tmp_path / "proj")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), "map", "workload=resnet18",
                             "arch=eyeriss", "mapper=random", "mapper.patience=1000000"],
                            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:  # the map task has started
        if line.startswith(".  map:"):
            break
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "map: interrupted: " in out and "Ctrl-C again abandons" in err
    layers = json.loads(next((project / "out").glob("eyeriss-resnet18-*/mapping.json")).read_text())["layers"]
    assert all(e["status"] == "mapped" for e in layers)  # 12 distinct layers: about 2 s of search each
    assert layers[-1]["stopped"].startswith("interrupted (Ctrl-C): the best of ")
