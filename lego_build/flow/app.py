"""``lego-build``: a Hydra application over ``conf/`` that runs the doit task graph per design.

    lego-build arch=eyeriss workload=resnet18                     # one design, like ``doit build``
    lego-build -m arch=eyeriss,nvdla workload=resnet18,mobilenetv2 hydra/launcher=joblib hydra.launcher.n_jobs=2
    lego-build --task map -m mapper=pfm,ruby_s arch=eyeriss workload=resnet50 # stop every job after a stage

Each Hydra job composes one design and runs ``doit build`` for it in a subprocess;
``dodo.py`` gives every design its own dependency database (``out/.doit/<design>.json``)
and locks the design directory, so jobs of different designs share nothing but
``out/``, and jobs of the same design (say two mappers) run in turn. Every stage
writes atomically, so a sweep stopped with Ctrl-C (or killed) and started again
re-runs only what did not finish; finished designs are up to date in doit and cost
a second each.

The sweep lives in ``out/sweeps/<name>/`` (``<name>``: the swept keys and a hash of the
command, or ``hydra.sweep.dir``): one record per job (``jobs/*.json``, with the build log
next to it), then ``summary.csv``, ``pareto.png`` and ``report.md`` / ``report.html``
(:mod:`lego_build.flow.sweep`); ``out/sweeps/latest`` names the last multirun. A
multirun's jobs leave ``out/latest`` where it was (it names a design built by hand).
Launchers: Hydra's basic one (in turn), ``hydra/launcher=joblib`` (local processes) and
``hydra/launcher=ray`` (the ``ray`` extra).
"""
from __future__ import annotations

import fcntl
import itertools
import os
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from lego_build.config.compose import CONF_DIR, _register, design_id, searchpath_overrides
from lego_build.errors import ConfigError
from lego_build.flow.stages import STAGES
from lego_build.flow.sweep import is_hydra, job_key, record_job, sweep_name, write_summary
from lego_build.flow.tasks import KEEP_LATEST_ENV
from lego_build.flow.validate import compose
from lego_build.report.summary import design_summary
from lego_build.runtime.atomic import point_symlink

DODO = CONF_DIR.parent / "dodo.py"
TASKS = ("build", *(stage.name for stage in STAGES))
OUT = Path("out")
_SWEEP_ENV = "LEGO_SWEEP_DIR"
_PROJECT_ENV = "LEGO_PROJECT_DIR"
_TASK_ENV = "LEGO_TASK"
_TOTAL_ENV = "LEGO_SWEEP_JOBS"
_START_ENV = "LEGO_SWEEP_START"


def expand(overrides: list[str]) -> list[list[str]] | None:
    """The jobs of a comma sweep (Hydra's basic sweeper syntax), or None for syntax we leave to Hydra."""
    axes = []
    for o in overrides:
        key, _, value = o.partition("=")
        if is_hydra(o):
            continue
        if re.search(r"[\[\](){}]|\b(range|choice|glob|interval)\(", value):
            return None
        axes.append([f"{key}={v}" for v in value.split(",")] if "," in value else [o])
    return [list(combo) for combo in itertools.product(*axes)]


@contextmanager
def _job_lock(sweep_dir: Path, did: str):
    """The sweep's jobs of one design directory one at a time, build and summary read together.
    Jobs that differ only in what the design id leaves out (the cost model: ``arch.energy``,
    ``arch.memory``, ...; the mapper) share a directory; ``dodo.py``'s lock covers one build, and
    a sibling job's build could otherwise rewrite ``mapping.json`` before this job reads it. The
    lock file lives in the sweep's directory, not in ``out/``."""
    path = sweep_dir / "jobs" / "locks" / f"{did}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_design(overrides: list[str], sweep_dir: Path, project: Path, task: str = "build",
                 point_latest: bool = True) -> str:
    """Run ``doit build`` for one composed design under its lock; record the job; return its status.
    ``point_latest=False`` (a multirun's job) leaves ``out/latest`` where it is."""
    start = time.monotonic()
    try:
        cfg = compose(overrides)
    except ConfigError as exc:
        record_job(sweep_dir, overrides, "-", "config error", time.monotonic() - start, None, str(exc))
        return "config error"
    did = design_id(cfg)
    ddir = project / OUT / did
    log = sweep_dir / "jobs" / f"{job_key(overrides)}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "doit", "-f", str(DODO), "-d", str(project), task, *overrides]
    env = None if point_latest else {**os.environ, KEEP_LATEST_ENV: "1"}
    with _job_lock(sweep_dir, did):  # the build and the read of its results, before a sibling job rebuilds
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=project, env=env)  # dodo.py locks the design
        summary = design_summary(ddir, cfg) if proc.returncode == 0 else None
    log.write_text(proc.stdout + proc.stderr)
    errors = [line[len("error: "):] for line in proc.stderr.splitlines() if line.startswith("error: ")]
    status = "ok" if proc.returncode == 0 else ("bad input" if proc.returncode == 2 else "failed")
    record_job(sweep_dir, overrides, did, status, time.monotonic() - start, summary,
               errors[0] if errors else ("" if status == "ok" else proc.stderr.strip()[-300:]))
    ran = sum(1 for line in proc.stdout.splitlines() if line.startswith(".  "))
    print(f"lego-build: {did} [{' '.join(overrides)}]: {status}, {ran} task(s) ran, "
          f"{time.monotonic() - start:.1f} s {_progress(sweep_dir)}", flush=True)
    return status


def output_dirs(overrides: list[str], project: Path, default: Path) -> dict[str, Path]:
    """``hydra.sweep.dir`` and ``hydra.run.dir`` as absolute paths inside ``project`` (given ones
    resolved against it, the rest ``default``); ``ValueError`` (one line) for a directory outside."""
    given = {o.split("=", 1)[0].lstrip("+~"): o.split("=", 1)[1] for o in overrides if "=" in o}
    dirs = {}
    for key in ("hydra.sweep.dir", "hydra.run.dir"):
        value = given.get(key, given.get("hydra.sweep.dir", str(default)))
        path = (project / value).resolve()
        if project not in path.parents:
            raise ValueError(f"{key}={value}: not inside the project's directory {project.name}/; give a "
                             "directory inside it, e.g. out/sweeps/mine")
        dirs[key] = path
    for key in ("hydra.sweep.subdir", "hydra.output_subdir"):
        value = given.get(key, "")
        if value.startswith("/") or ".." in Path(value).parts:
            raise ValueError(f"{key}={value}: must stay inside the job's directory; give a relative name "
                             "without '..'")
    return dirs


def _progress(sweep_dir: Path) -> str:
    """``[done/total]`` of this run: job records written since it started (any launcher, any process)."""
    total, since = os.environ.get(_TOTAL_ENV), float(os.environ.get(_START_ENV, "0"))
    done = sum(1 for p in (sweep_dir / "jobs").glob("*.json") if p.stat().st_mtime >= since)
    return f"[{done}/{total}]" if total else ""


def _job(cfg) -> str:
    """The Hydra task function: the job's own overrides are the design."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hydra_cfg = HydraConfig.get()
    overrides = [o for o in hydra_cfg.overrides.task if not is_hydra(o)]
    # set for the job by hydra.job.env_set: launchers on other processes or hosts see them too
    return build_design(overrides, Path(os.environ[_SWEEP_ENV]), Path(os.environ[_PROJECT_ENV]),
                        os.environ.get(_TASK_ENV, "build"), point_latest=hydra_cfg.mode != RunMode.MULTIRUN)


def main(argv: list[str] | None = None) -> int:
    """Console entry point: validate every job's config, run the jobs, summarise a multirun."""
    import hydra

    argv = list(sys.argv[1:] if argv is None else argv)
    task = "build"
    while "--task" in argv:
        i = argv.index("--task")
        if i + 1 >= len(argv):
            print("error: --task needs a value", file=sys.stderr)
            return 2
        task = argv[i + 1]
        del argv[i:i + 2]
    if task not in TASKS:
        print(f"error: --task {task}: one of {', '.join(TASKS)}", file=sys.stderr)
        return 2
    flags = [a for a in argv if a.startswith("-")]
    overrides = [a for a in argv if not a.startswith("-")]
    multirun = "-m" in flags or "--multirun" in flags
    jobs = expand(overrides) if multirun else [[o for o in overrides if not is_hydra(o)]]
    for job in jobs or []:
        try:
            compose(job)
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    name = sweep_name(overrides)
    project = Path.cwd().resolve()
    try:
        dirs = output_dirs(overrides, project, project / OUT / "sweeps" / name)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sweep_dir = dirs["hydra.sweep.dir"]
    # absolute, so a launcher whose workers run elsewhere (Ray) still writes into the project
    overrides = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") not in dirs]
    extra = [f"{key}={value}" for key, value in dirs.items()] + searchpath_overrides()
    extra += [f"+hydra.job.env_set.{_SWEEP_ENV}={sweep_dir}",
              f"+hydra.job.env_set.{_PROJECT_ENV}={project}", f"+hydra.job.env_set.{_TASK_ENV}={task}",
              f"+hydra.job.env_set.{_START_ENV}={time.time() - 1:.0f}"]
    if jobs:
        extra.append(f"+hydra.job.env_set.{_TOTAL_ENV}={len(jobs)}")
    if jobs:
        print(f"lego-build: {len(jobs)} design job(s) -> {sweep_dir.relative_to(project)}", flush=True)
    _register()
    app = hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")(_job)
    saved = sys.argv
    sys.argv = [saved[0], *flags, *overrides, *extra]
    try:
        app()
    finally:
        sys.argv = saved
    csv_path, plot = write_summary(sweep_dir)
    print(f"lego-build: {csv_path.relative_to(project)}" + (f", {plot.relative_to(project)}" if plot else "")
          + f", {(sweep_dir / 'report.md').relative_to(project)}, report.html")
    if multirun:  # out/latest stays on the last design built by hand; out/sweeps/latest names this sweep
        sweeps = project / OUT / "sweeps"
        sweeps.mkdir(parents=True, exist_ok=True)
        point_symlink(sweeps / "latest", os.path.relpath(sweep_dir, sweeps))
    if (sweep_dir / "comparison.md").is_file():  # a baseline and other designs on one workload
        print(f"lego-build: {(sweep_dir / 'comparison.md').relative_to(project)}, "
              f"{(sweep_dir / 'comparison.png').relative_to(project)} (against the baseline)")
    failed = [r for r in _statuses(sweep_dir) if r != "ok"]
    return 1 if failed else 0


def _statuses(sweep_dir: Path) -> list[str]:
    from lego_build.flow.sweep import rows

    return [r["status"] for r in rows(sweep_dir)]


def cli() -> None:
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    cli()
