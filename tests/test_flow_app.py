"""The ``lego-build`` Hydra application (lego_build.flow.app) and sweep summaries (flow.sweep)."""
from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lego_build.flow.app import expand
from lego_build.flow.sweep import pareto_front, sweep_name

ACCEPTANCE = ["-m", "arch=eyeriss,nvdla", "workload=resnet18,mobilenetv2", "hydra/launcher=joblib",
              "hydra.launcher.n_jobs=2"]


def lego_build(cwd: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    exe = shutil.which("lego-build")
    cmd = [exe] if exe else [sys.executable, "-m", "lego_build.flow.app"]
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def stage_tasks_run(stdout: str) -> dict[str, int]:
    """Per design, how many stage tasks doit ran (from the app's one line per job)."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("lego-build: ") and " task(s) ran" in line:
            design = line.split()[1]
            out[design] = int(line.split(", ")[1].split()[0])
    return out


def test_sweep_expansion_and_names():
    assert expand(["arch=eyeriss,nvdla", "workload=resnet18", "hydra/launcher=joblib"]) == [
        ["arch=eyeriss", "workload=resnet18"], ["arch=nvdla", "workload=resnet18"]]
    assert expand(["arch.rows=range(2,5)"]) is None  # left to Hydra's sweeper
    assert sweep_name(["arch=eyeriss,nvdla", "workload=lenet"]) == sweep_name(["arch=eyeriss,nvdla", "workload=lenet",
                                                                              "hydra.launcher.n_jobs=2"])
    assert sweep_name(["arch=eyeriss"]).startswith("arch-")


def test_pareto_front():
    pts = [(1.0, 5.0), (2.0, 2.0), (3.0, 3.0), (5.0, 1.0), (2.0, 2.0)]
    assert pareto_front(pts) == [0, 1, 3, 4]


def test_acceptance_sweep_writes_summary_and_reuses_finished_designs(tmp_path):
    """Issue 9 acceptance 1: 2 arches x 2 networks on the joblib launcher, then the same sweep again."""
    first = lego_build(tmp_path, *ACCEPTANCE)
    assert first.returncode == 0, first.stdout + first.stderr
    sweeps = list((tmp_path / "out" / "sweeps").iterdir())
    assert len(sweeps) == 1
    rows = list(csv.DictReader((sweeps[0] / "summary.csv").open()))
    assert sorted((r["arch"], r["workload"]) for r in rows) == [
        ("eyeriss", "mobilenetv2"), ("eyeriss", "resnet18"), ("nvdla", "mobilenetv2"), ("nvdla", "resnet18")]
    assert all(r["status"] == "ok" and r["simulation"] == "pass" and float(r["energy_pj"]) > 0 for r in rows)
    png = (sweeps[0] / "pareto.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert set(stage_tasks_run(first.stdout).values()) == {8}  # 7 stages + build
    start = time.monotonic()
    again = lego_build(tmp_path, *ACCEPTANCE)
    took = time.monotonic() - start
    assert again.returncode == 0, again.stdout + again.stderr
    assert max(stage_tasks_run(again.stdout).values()) <= 1  # at most out/latest moves: no stage re-runs
    assert len(list(csv.DictReader((sweeps[0] / "summary.csv").open()))) == 4
    print(f"re-run of the finished sweep: {took:.1f} s")


def test_killed_sweep_resumes_with_the_remaining_designs_only(tmp_path):
    """Issue 9 acceptance 5: stop the (sequential) sweep after its first design, then run it again."""
    args = ["-m", "workload=gemm,conv2d,lenet", "target=rtl"]
    exe = shutil.which("lego-build") or sys.executable
    proc = subprocess.Popen([exe, *args] if exe != sys.executable else [exe, "-m", "lego_build.flow.app", *args],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    jobs = tmp_path / "out" / "sweeps"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not list(jobs.glob("*/jobs/*.json")):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = {p.stem for p in jobs.glob("*/jobs/*.json")}
    assert len(done) == 1
    again = lego_build(tmp_path, *args)
    assert again.returncode == 0, again.stdout + again.stderr
    ran = stage_tasks_run(again.stdout)
    assert len(ran) == 3 and sorted(ran.values())[0] <= 1  # the finished design: nothing re-runs
    assert sum(1 for v in ran.values() if v >= 7) == 2  # the two others run their stages
    rows = list(csv.DictReader(next(jobs.iterdir()).joinpath("summary.csv").open()))
    assert len(rows) == 3 and all(r["status"] == "ok" for r in rows)


def test_bad_sweep_value_is_one_line_and_writes_nothing(tmp_path):
    proc = lego_build(tmp_path, "-m", "arch=eyeriss,nope", "workload=lenet", timeout=120)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: arch=nope: unknown arch preset")
    assert not (tmp_path / "out").exists()


def test_ray_launcher_against_a_local_ray_instance(tmp_path):
    """Issue 9 acceptance 2: the 2-parallel-job sweep on a Ray instance the test starts on loopback."""
    pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="the ray extra is not installed: "
                        "pip install -e '.[ray]'")
    ray = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    port = 20000 + os.getpid() % 20000
    short = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    start = subprocess.run([ray, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
                            "--include-dashboard=false", f"--temp-dir={short}"],
                           capture_output=True, text=True, env=env, timeout=180)
    assert start.returncode == 0, start.stdout + start.stderr
    try:
        args = ["-m", "arch=eyeriss,nvdla", "workload=resnet18,mobilenetv2", "target=rtl", "hydra/launcher=ray",
                f"+hydra.launcher.ray.init.address=127.0.0.1:{port}", "+hydra.launcher.ray.init.object_store_memory=null"]
        exe = shutil.which("lego-build")
        proc = subprocess.run([exe, *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=900)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Ray Launcher is launching 4 jobs" in proc.stdout + proc.stderr
        rows = list(csv.DictReader(next((tmp_path / "out" / "sweeps").iterdir()).joinpath("summary.csv").open()))
        assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    finally:
        subprocess.run([ray, "stop", "--force"], capture_output=True, env=env, timeout=120)
        shutil.rmtree(short, ignore_errors=True)


def test_memory_hierarchy_sweep_reproduces_the_thesis_result(tmp_path):
    """Issue 9 acceptance 4: RF 16-512 B x buffer 32-512 KB on AlexNet (seed 001 §5.3), stopped after map."""
    proc = lego_build(tmp_path, "--sweep", "memory", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    print(proc.stdout[proc.stdout.index("whole-network energy"):])
    assert ("small RFs (16-64 B) with a 128-256 KB buffer beat the 512 B RF at the same buffer: yes; "
            "the best of them beats every 512 B configuration: yes") in proc.stdout
    (sweep,) = (tmp_path / "out" / "sweeps").iterdir()
    assert sweep.name.startswith("memory-")
    rows = list(csv.DictReader((sweep / "summary.csv").open()))
    assert len(rows) == 30 and all(r["status"] == "ok" for r in rows)
    assert (sweep / "heatmap.png").read_bytes().startswith(b"\x89PNG")
    # the map stage only: no RTL was generated
    assert not list((tmp_path / "out").glob("*/rtl"))


def test_two_level_register_file_sweep(tmp_path):
    """Seed 001 Fig. 5.11: inner x outer RF per PE under a 256 KB buffer; the thesis's best pair is 16 B + 256 B."""
    proc = lego_build(tmp_path, "--sweep", "memory2", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout[proc.stdout.index("whole-network energy"):]
    print(table)
    assert "best: 16 B + 256 B" in table
    (sweep,) = (tmp_path / "out" / "sweeps").iterdir()
    assert len(list(csv.DictReader((sweep / "summary.csv").open()))) == 12
