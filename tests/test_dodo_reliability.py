"""Issue 10: ``doit build`` killed at any point, run twice at once, run twice anywhere.

* Crash safety: a build killed with SIGKILL at a seeded choice of points in every stage
  (at artifact writes, :mod:`lego_build.runtime.crashtest`, and once in the middle of the
  Verilator compile, process group and all); the next build completes and the design
  directory is byte-identical to a clean build's. Two more kill points first run a
  different config of the same design and then go back to the first one: without the
  write-ahead checkpoint (:func:`lego_build.flow.tasks.checkpoint`) doit would call the
  half-rewritten stage up to date.
* Concurrency: two identical builds started together (one waits on the design lock and
  finds the work done), and two designs built in parallel in one ``out/``.
* Determinism: the default build in two fresh directories gives the same bytes.

Compared: everything under ``out/<design>/`` (results only: Verilator's tree is built
outside ``out/``), plus ``out/latest``. Kill points start from a copy of a finished build with
the killed stage and the ones after it removed (outputs and dependency records), so
each costs only the stages it exercises; they run two at a time.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_dodo import make_project, ran

from lego_build.config.compose import compose, design_id
from lego_build.flow.stages import STAGES
from lego_build.runtime.atomic import is_stale
from lego_build.sim.verilator import SCRATCH

# the module's builds are shared fixtures; its tests stay on one xdist worker (--dist loadscope)
pytestmark = pytest.mark.slow

STAGE_NAMES = [s.name for s in STAGES]
RTL = ("target=rtl",)
OTHER = ("target=rtl", "optimizer=delay_only")  # same design, different dag.json and rtl/
SEED = 10
#: write points per stage: (stage, how many, target overrides); 14 in all
PLAN = (("analyze", 2, RTL), ("map", 2, RTL), ("graph", 2, RTL), ("optimize", 2, RTL), ("emit", 2, RTL),
        ("simulate", 2, ()), ("report", 2, RTL))
TIMEOUT = 900


def doit(project: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), *args], cwd=project,
                          capture_output=True, text=True, timeout=TIMEOUT, env={**os.environ, **(env or {})})


def check(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def artifacts(project: Path, overrides: tuple[str, ...]) -> dict[str, bytes]:
    """The design directory by relative path and ``out/latest``."""
    did = design_id(compose(list(overrides)))
    top = project / "out" / did
    state = {"out/latest": os.readlink(project / "out" / "latest").encode()}
    for path in sorted(top.rglob("*")):
        rel = path.relative_to(top).as_posix()
        if path.is_dir():
            continue
        state[rel] = path.read_bytes()
    return state


def stale_files(project: Path) -> list[str]:
    return [p.as_posix() for p in (project / "out").rglob("*") if is_stale(p.name)]


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def unbuild(project: Path, overrides: tuple[str, ...], stage: str) -> None:
    """Undo ``stage`` and every later one: their outputs and their dependency records."""
    did = design_id(compose(list(overrides)))
    top = project / "out" / did
    later = STAGE_NAMES[STAGE_NAMES.index(stage):]
    for s in STAGES:
        if s.name in later:
            for out in s.outputs:
                (top / out).unlink(missing_ok=True)
    if "emit" in later:
        shutil.rmtree(top / "rtl", ignore_errors=True)
    if "simulate" in later:
        shutil.rmtree(top / "sim", ignore_errors=True)
    db = project / "out" / ".doit" / f"{did}.json"
    records = json.loads(db.read_text())
    for name in later:
        records.pop(f"{name}:{did}", None)
    records.pop("build", None)
    db.write_text(json.dumps(records))


def reference(root: Path, overrides: tuple[str, ...]) -> tuple[Path, dict, list[tuple[str, int]]]:
    """A clean build, its artifacts and its write points ``(stage, n)``."""
    project = make_project(root)
    proc = doit(project, "build", *overrides, env={"LEGO_CRASH_TRACE": "1"})
    check(proc)
    points = [(ln.split()[1], int(ln.split()[2])) for ln in proc.stderr.splitlines() if ln.startswith("crash-point ")]
    return project, artifacts(project, overrides), points


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    root = tmp_path_factory.mktemp("refs")
    with ThreadPoolExecutor(max_workers=2) as pool:
        rtl = pool.submit(reference, root / "rtl", RTL)
        sim = pool.submit(reference, root / "sim", ())
        return {RTL: rtl.result(), (): sim.result()}


def kill_points(refs) -> list[tuple[str, int, str, tuple[str, ...]]]:
    rng = random.Random(SEED)
    chosen = []
    for stage, count, overrides in PLAN:
        candidates = sorted({n for s, n in refs[overrides][2] if s == stage})
        assert len(candidates) >= count, (stage, candidates)
        for n in sorted(rng.sample(candidates, count)):
            chosen.append((stage, n, rng.choice(("before", "after")), overrides))
    return chosen


def run_kill_point(root: Path, refs, stage: str, n: int, phase: str, overrides: tuple[str, ...]) -> dict:
    ref_project, ref_artifacts, _ = refs[overrides]
    project = copy(ref_project, root / f"{stage}-{n}-{phase}")
    unbuild(project, overrides, stage)
    killed = doit(project, "build", *overrides, env={"LEGO_CRASH_AT": f"{stage}:{n}:{phase}"})
    again = doit(project, "build", *overrides)
    return {"killed": killed, "again": again, "same": artifacts(project, overrides) == ref_artifacts
            if again.returncode == 0 else False, "stale": stale_files(project)}


@pytest.fixture(scope="module")
def kill_results(refs, tmp_path_factory):
    root = tmp_path_factory.mktemp("kills")
    points = kill_points(refs)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [(p, pool.submit(run_kill_point, root, refs, *p)) for p in points]
    return [(p, f.result()) for p, f in futures]


def test_every_stage_has_kill_points(refs):
    points = kill_points(refs)
    assert len(points) >= 14
    assert {p[0] for p in points} == set(STAGE_NAMES)


@pytest.mark.long  # every kill point (CI: the kill points exist, and the killed-sweep and rollback tests)
def test_killed_builds_recover_to_identical_artifacts(refs, kill_results):
    recovered = 0
    for (stage, n, phase, overrides), r in kill_results:
        where = f"{stage}:{n}:{phase} {' '.join(overrides)}"
        assert r["killed"].returncode == -signal.SIGKILL, f"{where}: not killed\n{r['killed'].stderr[-2000:]}"
        check(r["again"])
        assert "Traceback" not in r["again"].stdout + r["again"].stderr, where
        if ((stage, n) == refs[overrides][2][-1]) and phase == "after":  # after the run's last DB save: done
            assert ran(r["again"].stdout) == set(), where
        else:
            assert stage in ran(r["again"].stdout), f"{where}: the killed stage did not re-run"
        assert r["same"], f"{where}: artifacts differ from a clean build's"
        assert not r["stale"], f"{where}: left {r['stale']}"
        recovered += 1
    print(f"\n{recovered}/{len(kill_results)} kill points recovered to identical artifacts")
    assert recovered == len(kill_results) >= 14


@pytest.mark.parametrize("stage, n, phase", [("optimize", 2, "after"), ("emit", 5, "after")])
def test_killed_build_of_another_config_then_the_first_again(refs, tmp_path, stage, n, phase):
    """The stale-record hazard: a killed re-run must not leave its stage looking up to date."""
    ref_project, ref_artifacts, _ = refs[RTL]
    project = copy(ref_project, tmp_path / "proj")
    killed = doit(project, "build", *OTHER, env={"LEGO_CRASH_AT": f"{stage}:{n}:{phase}"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert artifacts(project, RTL) != ref_artifacts  # the other config did rewrite something
    again = doit(project, "build", *RTL)
    check(again)
    assert artifacts(project, RTL) == ref_artifacts
    assert not stale_files(project)


def test_build_killed_during_the_verilator_compile(refs, tmp_path):
    """SIGKILL to the whole process group (Ctrl-\\, a CI timeout) while Verilator compiles: the next
    build also removes the killed one's scratch tree (Verilator's C++ in the system's temp directory)."""
    ref_project, ref_artifacts, _ = refs[()]
    project = copy(ref_project, tmp_path / "proj")
    unbuild(project, (), "simulate")
    proc = subprocess.Popen([sys.executable, "-u", "-m", "doit", "-f", str(project / "dodo.py"), "build"],
                            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env={**os.environ, "LEGO_CACHE_DIR": "off"})
    for line in proc.stdout:
        if line.startswith(".  simulate"):
            break
    deadline = time.monotonic() + 60  # the compile's scratch tree, once Verilator is writing it
    while not list(Path(tempfile.gettempdir()).glob(f"{SCRATCH}{proc.pid}-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # without the runtime-object cache the compile takes about 6 s
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not (project / "out" / design_id(compose([])) / "sim" / "result.json").exists()
    (left,) = Path(tempfile.gettempdir()).glob(f"{SCRATCH}{proc.pid}-*")  # the killed compile's tree
    again = doit(project, "build")
    check(again)
    assert "simulate" in ran(again.stdout)
    assert artifacts(project, ()) == ref_artifacts
    assert not left.exists()


# --------------------------------------------------------------------------- concurrency
@pytest.fixture(scope="module")
def twin_builds(tmp_path_factory):
    """Two identical default builds started at the same time in one fresh project."""
    project = make_project(tmp_path_factory.mktemp("twins") / "proj")
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = [f.result() for f in [pool.submit(doit, project, "build") for _ in range(2)]]
    return project, procs


def test_two_identical_builds_at_once(twin_builds, refs):
    project, procs = twin_builds
    for proc in procs:
        check(proc)
    ran_sets = sorted((ran(p.stdout) for p in procs), key=len)
    assert ran_sets[0] == set(), "the second build should find the first one's work done"
    assert set(STAGE_NAMES) <= ran_sets[1]
    assert any("waiting for it" in p.stderr for p in procs)
    assert artifacts(project, ()) == refs[()][1]
    assert not stale_files(project)


def test_two_designs_built_in_parallel_keep_to_their_own_files(refs, tmp_path):
    other = (*RTL, "arch.rows=2", "arch.cols=2")
    project = make_project(tmp_path / "shared")
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = [f.result() for f in [pool.submit(doit, project, "build", *o) for o in (RTL, other)]]
    for proc in procs:
        check(proc)
        assert "waiting" not in proc.stderr  # different designs: different locks
    solo = make_project(tmp_path / "solo")
    check(doit(solo, "build", *other))
    latest = os.readlink(project / "out" / "latest").encode()
    assert {**artifacts(project, RTL), "out/latest": b""} == {**refs[RTL][1], "out/latest": b""}
    assert {**artifacts(project, other), "out/latest": b""} == {**artifacts(solo, other), "out/latest": b""}
    assert latest in {design_id(compose(list(RTL))).encode(), design_id(compose(list(other))).encode()}
    dbs = sorted(p.name for p in (project / "out" / ".doit").iterdir())
    assert dbs == sorted(f"{design_id(compose(list(o)))}.json" for o in (RTL, other))


# --------------------------------------------------------------------------- determinism
def test_default_build_is_byte_identical_in_two_fresh_directories(refs, twin_builds):
    first = artifacts(refs[()][0], ())
    second = artifacts(twin_builds[0], ())
    for name in ("adg.json", "dag.json", "mapping.json"):
        assert first[name] == second[name], name
    rtl = sorted(k for k in first if k.startswith("rtl/"))
    assert rtl and rtl == sorted(k for k in second if k.startswith("rtl/"))
    assert all(first[k] == second[k] for k in rtl)
    assert first == second  # and every other artifact, reports included
