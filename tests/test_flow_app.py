"""The ``lego-build`` Hydra application (lego_build.flow.app) and sweep summaries (flow.sweep)."""
from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lego_build.flow.app import expand, output_dirs
from lego_build.flow.sweep import pareto_figure, pareto_front, sweep_name

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

ACCEPTANCE = ["-m", "arch=eyeriss,nvdla", "workload=resnet18,mobilenetv2", "hydra/launcher=joblib",
              "hydra.launcher.n_jobs=2"]


def lego_build(cwd: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    exe = shutil.which("lego-build")
    cmd = [exe] if exe else [sys.executable, "-m", "lego_build.flow.app"]
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def sweep_dirs(project: Path) -> list[Path]:
    """The sweeps under ``out/sweeps/`` (``latest`` is a link to the last one)."""
    return [p for p in (project / "out" / "sweeps").iterdir() if not p.is_symlink()]


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


def test_pareto_plot_draws_a_front_per_workload_and_hides_no_point():
    """Issue 16 item 6: a visible front line per workload, and a legend that covers no design."""
    import matplotlib.pyplot as plt
    import numpy as np

    table = [dict(energy_pj=e * 1e6, cycles=c, cells="", register_bits=100 + i, arch=a, workload=w, mapper="pfm")
             for i, (e, c, a, w) in enumerate([(10, 1e6, "eyeriss", "resnet18"), (8, 2e6, "nvdla", "resnet18"),
                                                (12, 3e6, "tpu", "resnet18"), (5, 5e5, "eyeriss", "mobilenetv2"),
                                                (6, 4e5, "nvdla", "mobilenetv2"), (30, 9e6, "x", "mobilenetv2")])]
    fig = pareto_figure(table, "t")
    ax = fig.axes[0]
    fronts = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()}
    assert fronts == {"Pareto front, mobilenetv2 (2 of 3)": ([4e5, 5e5], [6.0, 5.0]),
                      "Pareto front, resnet18 (2 of 3)": ([1e6, 2e6], [10.0, 8.0])}
    assert all(line.get_linewidth() >= 2 and line.get_zorder() > 2 for line in ax.get_lines())
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    points = ax.transData.transform(np.array([[r["cycles"], r["energy_pj"] / 1e6] for r in table]))
    assert not any(box.contains(x, y) for x, y in points)
    inside = ax.get_window_extent()
    assert all(inside.contains(x, y) for x, y in points)  # margins keep every marker inside the axes
    plt.close(fig)


def test_pareto_labels_are_readable():
    """Issue 42 item 4: a dozen designs in a tight cluster: every marker's number lies inside the
    axes (not under the colour bar), covers no other number and no marker; the key names each design."""
    import matplotlib.pyplot as plt
    import numpy as np

    archs = ["eyeriss", "nvdla", "tpu", "systolic", "shidiannao", "gemmini_like"]
    table = [dict(energy_pj=(8 + 0.15 * (i % 4)) * 1e6, cycles=1e6 * (1 + 0.02 * (i // 4)) if i < 12 else 1.9e6,
                  cells="", register_bits=100 + 10 * i, arch=archs[i % 6], workload="resnet18", mapper="ruby_s",
                  evidence=("rtl", "model", "roofline")[i % 3]) for i in range(13)]
    fig = pareto_figure(table, "t")
    ax, bar = fig.axes
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_text().isdigit()]
    assert sorted(int(t.get_text()) for t in labels) == list(range(1, 14))
    boxes = [t.get_window_extent(renderer) for t in labels]
    inside, colour_bar = ax.get_window_extent(renderer), bar.get_window_extent(renderer)
    assert all(inside.x0 <= b.x0 and b.x1 <= inside.x1 and inside.y0 <= b.y0 and b.y1 <= inside.y1 for b in boxes)
    assert not any(b.overlaps(colour_bar) for b in boxes)
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    points = ax.transData.transform(np.array([[r["cycles"], r["energy_pj"] / 1e6] for r in table]))
    assert not any(b.contains(x, y) for b in boxes for x, y in points)
    key = fig.texts[-1].get_text()
    assert " 1  eyeriss/resnet18 ruby_s (RTL)" in key and "13  eyeriss/resnet18 ruby_s (RTL)" in key
    assert "(mapper's roofline)" in key
    plt.close(fig)


@pytest.mark.long  # 4 whole networks; the baseline and killed sweeps run the launcher in CI
def test_acceptance_sweep_writes_summary_and_reuses_finished_designs(tmp_path):
    """Issue 9 acceptance 1: 2 arches x 2 networks on the joblib launcher, then the same sweep again."""
    first = lego_build(tmp_path, *ACCEPTANCE)
    assert first.returncode == 0, first.stdout + first.stderr
    sweeps = sweep_dirs(tmp_path)
    assert len(sweeps) == 1
    rows = list(csv.DictReader((sweeps[0] / "summary.csv").open()))
    assert sorted((r["arch"], r["workload"]) for r in rows) == [
        ("eyeriss", "mobilenetv2"), ("eyeriss", "resnet18"), ("nvdla", "mobilenetv2"), ("nvdla", "resnet18")]
    assert all(r["status"] == "ok" and r["simulation"] == "pass" and float(r["energy_pj"]) > 0 for r in rows)
    png = (sweeps[0] / "pareto.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert set(stage_tasks_run(first.stdout).values()) == {7}  # 7 stages; build leaves out/latest alone
    assert not (tmp_path / "out" / "latest").exists()  # a sweep's jobs do not point it
    start = time.monotonic()
    again = lego_build(tmp_path, *ACCEPTANCE)
    took = time.monotonic() - start
    assert again.returncode == 0, again.stdout + again.stderr
    assert max(stage_tasks_run(again.stdout).values()) == 0  # nothing re-runs
    assert len(list(csv.DictReader((sweeps[0] / "summary.csv").open()))) == 4
    print(f"re-run of the finished sweep: {took:.1f} s")


def test_sweep_with_the_baseline_writes_the_comparison(tmp_path):
    """Issue 20 item 7: a sweep over gemmini_like and lego_mnicoc on one depthwise layer writes
    the comparison against the baseline: LEGO's OH-OW dataflow against Gemmini's one channel
    on one FU (the end-to-end cycles of both designs' summaries). Issue 42 item 4: the sweep's
    report holds the table, the Pareto plot and the comparison; out/latest stays where it was."""
    (tmp_path / "out").mkdir()
    os.symlink("by-hand-00000000", tmp_path / "out" / "latest")
    run = lego_build(tmp_path, "-m", "arch=gemmini_like,lego_mnicoc", "workload=depthwise", "target=rtl")
    assert run.returncode == 0, run.stdout + run.stderr
    (sweep,) = sweep_dirs(tmp_path)
    rows = {r["arch"]: r for r in csv.DictReader((sweep / "summary.csv").open())}
    speed = int(rows["gemmini_like"]["cycles_end_to_end"]) / int(rows["lego_mnicoc"]["cycles_end_to_end"])
    assert speed > 4
    text = (sweep / "comparison.md").read_text()
    assert f"| depthwise | {rows['lego_mnicoc']['design']} | {rows['gemmini_like']['design']} |" in text
    assert f"{speed:.2f}x" in text
    assert (sweep / "comparison.png").read_bytes().startswith(b"\x89PNG")
    assert "comparison.md" in run.stdout
    assert os.readlink(tmp_path / "out" / "latest") == "by-hand-00000000"
    assert os.readlink(tmp_path / "out" / "sweeps" / "latest") == sweep.name
    report = (sweep / "report.md").read_text()
    for r in rows.values():  # the headline figures and where they come from
        assert f"| {r['design']} | ruby_s | ok | {int(r['cycles']):,} | {r['cycles_source']} |" in report
        assert r["evidence"] in ("model", "roofline") and r["simulated_mac_share"] == ""  # target=rtl
    assert "![energy against latency](pareto.png)" in report and f"{speed:.2f}x" in report
    page = (sweep / "report.html").read_text()
    assert page.count("<svg") == 2 and '<section id="comparison">' in page and "https://" not in page
    assert "<script" not in page and rows["lego_mnicoc"]["design"] in page


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
    rows = list(csv.DictReader(sweep_dirs(tmp_path)[0].joinpath("summary.csv").open()))
    assert len(rows) == 3 and all(r["status"] == "ok" for r in rows)


def test_bad_sweep_value_is_one_line_and_writes_nothing(tmp_path):
    proc = lego_build(tmp_path, "-m", "arch=eyeriss,nope", "workload=lenet", timeout=120)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: arch=nope: unknown arch preset")
    assert not (tmp_path / "out").exists()


def test_output_directories_stay_in_the_project(tmp_path):
    """Issue 16 acceptance 3: Hydra's run and sweep directories outside the project are refused."""
    for bad in ("hydra.run.dir=/", "hydra.sweep.dir=../elsewhere", "hydra.sweep.subdir=../../x",
                "hydra.output_subdir=/etc"):
        proc = lego_build(tmp_path, bad, "target=rtl", timeout=120)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"error: {bad.split('=')[0]}=") and "inside" in line
    assert list(tmp_path.iterdir()) == []
    assert not Path("/.hydra").exists() and not Path("/app.log").exists()
    dirs = output_dirs(["hydra.sweep.dir=out/mine"], tmp_path, tmp_path / "out" / "sweeps" / "x")
    assert dirs == {"hydra.sweep.dir": tmp_path / "out" / "mine", "hydra.run.dir": tmp_path / "out" / "mine"}


@pytest.mark.long  # a local Ray cluster (the [ray] extra); the joblib launcher's sweeps run in CI
class TestRayLauncher:
    """Its own xdist scope (``--dist loadscope``): runs beside the module's other sweeps."""

    def test_ray_launcher_against_a_local_ray_instance(self, tmp_path, repo_root):
        """Issue 9 acceptance 2 and issue 16 acceptance 3: the 2-parallel-job sweep on a Ray head this
        test starts on loopback from another directory. Every job's files (records, logs, Hydra's
        ``.hydra`` and ``app.log``) land in the project's ``out/``, none in the head's directory or in
        this checkout; the test stops its own head (its process group), not every Ray on the machine."""
        pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="the ray extra is not installed: "
                            "pip install -e '.[ray]'")
        from test_dodo import snapshot

        ray = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
        env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
        port = 20000 + os.getpid() % 20000
        short = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # Ray's socket paths must stay short
        head_cwd = short / "head"
        head_cwd.mkdir()
        project = tmp_path / "project"
        project.mkdir()
        checkout_out = snapshot(repo_root / "out")
        head = subprocess.Popen([ray, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
                                 "--num-cpus=2", "--include-dashboard=false", f"--temp-dir={short / 't'}"],
                                cwd=head_cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 180
            while subprocess.run([ray, "status", f"--address=127.0.0.1:{port}"], capture_output=True, env=env,
                                 timeout=60).returncode != 0:
                assert head.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
                time.sleep(2)
            # the launcher is under test, not the stages (the joblib acceptance sweep builds these designs):
            # every job stops after the mapper
            args = ["--task", "map", "-m", "arch=eyeriss,nvdla", "workload=resnet18,mobilenetv2", "hydra/launcher=ray",
                    f"+hydra.launcher.ray.init.address=127.0.0.1:{port}",
                    "+hydra.launcher.ray.init.object_store_memory=null"]
            exe = shutil.which("lego-build")
            proc = subprocess.run([exe, *args], cwd=project, capture_output=True, text=True, env=env, timeout=900)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "Ray Launcher is launching 4 jobs" in proc.stdout + proc.stderr
            (sweep,) = sweep_dirs(project)
            rows = list(csv.DictReader(sweep.joinpath("summary.csv").open()))
            assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
            assert len(list(sweep.glob("[0-9]/.hydra/config.yaml"))) == 4  # Hydra's job dirs, numbered 0..3
            assert sorted(p.name for p in project.iterdir()) == ["out"]
            assert list(head_cwd.iterdir()) == []  # nothing relative to the head's working directory
            assert snapshot(repo_root / "out") == checkout_out
            # issue 18: a whole network's layers as Ray tasks on the same head, every output compared
            design = tmp_path / "lenet"
            script = ("import sys; from lego_build import compose, run_all; "
                      "run_all(compose(sys.argv[2:]), sys.argv[1])")
            proc = subprocess.run([sys.executable, "-c", script, str(design), "workload=lenet", "target.scope=network",
                                   f"run.ray_address=127.0.0.1:{port}"], capture_output=True, text=True, env=env,
                                  timeout=600)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
            result = json.loads((design / "sim" / "result.json").read_text())
            assert result["network"]["runner"] == "ray" and result["status"] == "pass"
            assert len(result["layers"]) == 5 and all(r["mismatches"] == 0 for r in result["layers"])
        finally:
            os.killpg(head.pid, signal.SIGTERM)  # this head and the processes it started, no other Ray
            try:
                head.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(head.pid, signal.SIGKILL)  # ray's gcs_server outlives a SIGTERM of the group
            head.wait()
            shutil.rmtree(short, ignore_errors=True)
