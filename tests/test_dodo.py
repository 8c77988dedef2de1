"""dodo.py and its helpers (lego_build.flow.tasks): doit runs in a subprocess from a temp dir.

dodo.py finds ``conf/`` through the package (``lego_build.config.compose.CONF_DIR``),
so a copy of it in an empty directory builds into that directory's ``out/``.

Timings (a no-op rebuild targets < 2 s) are measured by ``benchmarks/build_times.py``, not here.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lego_build.config.compose import compose, design_id
from lego_build.config.schema import GROUPS
from lego_build.flow import tasks
from lego_build.flow.stages import STAGES

# the module's builds are shared fixtures; its tests stay on one xdist worker (--dist loadscope)
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
DODO = REPO_ROOT / "dodo.py"
STAGE_NAMES = [s.name for s in STAGES]
ALL_TASKS = set(STAGE_NAMES) | {"build"}
BASE = ["target=rtl"]  # emit-only target: skips the Verilator run where possible
BUILD_TIMEOUT_S = 1800


# --------------------------------------------------------------------------- helpers
def make_project(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    shutil.copy(DODO, path / "dodo.py")
    return path


def doit(project: Path, *args: str, timeout: float = BUILD_TIMEOUT_S) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), *args]
    return subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=timeout)


def task_status(stdout: str) -> dict[str, str]:
    """``{stage: "run" | "uptodate"}`` from doit's verbosity-2 report (``.  task`` / ``-- task``)."""
    status = {}
    for line in stdout.splitlines():
        if line.startswith(".  "):
            state, name = "run", line[3:].strip()
        elif line.startswith("-- "):
            state, name = "uptodate", line[3:].strip()
        else:
            continue
        status[name.split(":", 1)[0]] = state
    return status


def ran(stdout: str) -> set[str]:
    return {name for name, state in task_status(stdout).items() if state == "run"}


def check_ok(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, f"doit exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


def snapshot(directory: Path) -> dict[str, tuple] | None:
    """Everything under ``directory``: files by bytes, symlinks by text; None if it does not exist."""
    if not directory.exists() and not directory.is_symlink():
        return None
    state: dict[str, tuple] = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = Path(root) / name
            rel = path.relative_to(directory).as_posix()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                state[rel] = ("dir",)
            else:
                state[rel] = ("file", path.read_bytes())
    return state


def copy_project(src: Path, dst: Path, keep_mtimes: bool) -> Path:
    """Copy a project with its out/ (symlinks kept as links); without mtimes it is like a fresh clone + cp -r."""
    shutil.copytree(src, dst, symlinks=True, copy_function=shutil.copy2 if keep_mtimes else shutil.copy)
    return dst


def reads_key(stage, key: str) -> bool:
    """Whether ``stage`` declares ``key``: the key itself, a key above it (``mapper`` covers
    ``mapper.objective``) or below it (``optimizer=greedy`` changes every ``optimizer.*``)."""
    return any(key == r or key.startswith(f"{r}.") or r.startswith(f"{key}.") for r in stage.reads)


def affected(key: str) -> tuple[set[str], set[str]]:
    """From the stage table: (stages that must re-run, stages that may re-run) when ``key`` changes.

    A stage must re-run if it reads the key; it may re-run if it reads the key or
    an artifact written by a stage that may re-run (doit compares file_dep by content).
    """
    must = {s.name for s in STAGES if reads_key(s, key)}
    may = set(must)
    changed = True
    while changed:
        changed = False
        for stage in STAGES:
            if stage.name in may:
                continue
            writers = {o for s in STAGES if s.name in may for o in s.outputs}
            if writers & set(stage.inputs):
                may.add(stage.name)
                changed = True
    return must, may


def base_design_id() -> str:
    return design_id(compose(BASE))


# --------------------------------------------------------------------------- (a) bad config
BAD = [
    ("workload=nope", "workload"),
    ("workload.M=-3", "workload.M"),
    ("arch.rows=abc", "arch.rows"),
]


@pytest.mark.parametrize("override, key", BAD)
@pytest.mark.parametrize("with_out", [False, True], ids=["no-out", "existing-out"])
def test_bad_config_exits_2_with_one_line(tmp_path, override, key, with_out):
    project = make_project(tmp_path / "proj")
    out = project / "out"
    if with_out:
        (out / "systolic-gemm-00000000").mkdir(parents=True)
        (out / "systolic-gemm-00000000" / "analysis.json").write_text("{}\n")
        (out / ".doit").mkdir()
        (out / ".doit" / "systolic-gemm-00000000.json").write_text('{"x": {}}')
        os.symlink("systolic-gemm-00000000", out / "latest")
    before = snapshot(out)

    proc = doit(project, "build", override, timeout=120)

    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert key in lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert snapshot(out) == before
    if not with_out:
        assert not out.exists()


MODEL_ERRORS = [
    ("onnx", "missing.onnx", None, "workload.path=missing.onnx: no such onnx file"),
    ("onnx", "bad.onnx", b"\x08\x07garbage" * 10, "workload.path=bad.onnx"),
    ("tflite", "bad.tflite", b"\x00" * 64, "workload.path=bad.tflite"),
    ("timeloop", "bad.yaml", b"problem: [1, 2", "workload.path=bad.yaml"),
]


@pytest.mark.parametrize("kind, name, content, message", MODEL_ERRORS, ids=[m[1] for m in MODEL_ERRORS])
def test_bad_model_file_exits_2_and_leaves_out_untouched(tmp_path, kind, name, content, message):
    project = make_project(tmp_path / "proj")
    (project / "out").mkdir()
    (project / "out" / "keep.txt").write_text("unchanged\n")
    if content is not None:
        (project / name).write_bytes(content)
    before = snapshot(project / "out")
    proc = doit(project, "analyze", f"workload={kind}", f"workload.path={name}", timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {message}")
    assert "Traceback" not in proc.stdout + proc.stderr
    assert snapshot(project / "out") == before


def test_unknown_preset_error_lists_presets(tmp_path):
    project = make_project(tmp_path / "proj")
    proc = doit(project, "build", "workload=nope", timeout=120)
    assert proc.returncode == 2
    assert "gemm" in proc.stderr and "conv2d" in proc.stderr


def test_bad_config_fails_list_too(tmp_path):
    project = make_project(tmp_path / "proj")
    proc = doit(project, "list", "arch.rows=abc", timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: arch.rows")


# --------------------------------------------------------------------------- (b)-(d) builds
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One full ``doit build target=rtl`` in a fresh project; tests that change state copy it first."""
    project = make_project(tmp_path_factory.mktemp("built") / "proj")
    first = doit(project, "build", *BASE)
    check_ok(first)
    return project, first


@pytest.mark.slow
def test_first_build_runs_every_stage(built):
    _, first = built
    assert ran(first.stdout) == ALL_TASKS, first.stdout


@pytest.mark.slow
def test_build_writes_every_stage_output(built):
    project, _ = built
    design_dir = project / "out" / base_design_id()
    missing = [f"{s.name}: {o}" for s in STAGES for o in s.outputs if not (design_dir / o).is_file()]
    assert not missing
    assert (project / "out" / ".doit" / f"{base_design_id()}.json").is_file()


@pytest.mark.slow
def test_latest_points_at_design_dir(built):
    project, _ = built
    latest = project / "out" / "latest"
    assert latest.is_symlink()
    assert os.readlink(latest) == base_design_id()  # relative link
    assert latest.resolve() == (project / "out" / base_design_id()).resolve()


@pytest.mark.slow
def test_repeat_build_is_noop(built):
    project, _ = built
    proc = doit(project, "build", *BASE)
    check_ok(proc)
    status = task_status(proc.stdout)
    assert set(status) == ALL_TASKS, proc.stdout
    assert ran(proc.stdout) == set(), proc.stdout


def rebuild_table() -> list[tuple[str, set[str]]]:
    """The README's "what a change re-runs" table: (override, stages)."""
    text = (REPO_ROOT / "README.md").read_text().split("| change | stages that run again |", 1)[1]
    rows = []
    for line in text.splitlines()[2:]:
        if not line.startswith("|"):
            break
        change, stages = (c.strip() for c in line.strip("|").split("|"))
        override = change.split("`")[1] if "`" in change else ""
        names = set() if stages == "none" else {w.strip() for w in stages.split("(")[0].split(",")}
        rows.append((override, names))
    return rows


def test_readme_rebuild_table_is_complete():
    rows = dict(rebuild_table())
    assert set(rows) == {"", "run.jobs=2", "target.seed=2", "arch.energy.mac_pj=0.1", "mapper.objective=latency",
                         "optimizer=greedy", "arch.rows=2", "workload.M=24"}
    assert all(names <= set(STAGE_NAMES) for names in rows.values())
    for override, names in rows.items():  # each row is what the stage table says
        if not override or override.startswith("run.") and "run" not in GROUPS:
            continue
        if design_id(compose([*BASE, override])) != base_design_id():
            assert names == set(STAGE_NAMES), override  # a new design directory: every stage
        else:
            must, may = affected(override.split("=")[0])
            assert must <= names <= may, (override, must, names, may)


@pytest.mark.slow
@pytest.mark.parametrize("override,stages", rebuild_table(), ids=lambda v: v if isinstance(v, str) else None)
def test_readme_rebuild_table_holds(built, tmp_path, override, stages):
    """Issue 17 acceptance 5, issue 43 acceptance 3: each documented change, made on a default build,
    re-runs exactly those stages: a run setting none, a target setting not emit, a cost-model energy
    only map and what reads the mapping, with the same Verilog; out/latest moves only to a new design."""
    project, _ = built
    work = copy_project(project, tmp_path / "proj", keep_mtimes=True)
    rtl = snapshot(work / "out" / base_design_id() / "rtl")
    proc = doit(work, "build", *BASE, *([override] if override else []))
    check_ok(proc)
    assert ran(proc.stdout) - {"build"} == stages, proc.stdout
    new_design = design_id(compose([*BASE, *([override] if override else [])])) != base_design_id()
    assert ("build" in ran(proc.stdout)) == new_design, proc.stdout  # out/latest is already right
    if "emit" not in stages:
        assert snapshot(work / "out" / base_design_id() / "rtl") == rtl


@pytest.mark.slow
def test_dep_db_holds_no_absolute_paths(built):
    project, _ = built
    text = (project / "out" / ".doit" / f"{base_design_id()}.json").read_text()
    for absolute in {str(project), str(project.resolve()), str(REPO_ROOT), str(Path.home())}:
        assert absolute not in text


@pytest.mark.slow
def test_copied_out_at_other_path_reruns_nothing(built, tmp_path):
    project, _ = built
    other = copy_project(project, tmp_path / "elsewhere" / "clone", keep_mtimes=False)
    proc = doit(other, "build", *BASE)
    check_ok(proc)
    assert set(task_status(proc.stdout)) == ALL_TASKS, proc.stdout
    assert ran(proc.stdout) == set(), proc.stdout


@pytest.mark.slow
def test_mapper_change_reruns_map_and_its_readers(built, tmp_path):
    project, _ = built
    work = copy_project(project, tmp_path / "proj", keep_mtimes=True)
    mapping = work / "out" / base_design_id() / "mapping.json"
    before = mapping.read_bytes()
    proc = doit(work, "build", *BASE, "mapper.objective=latency")
    check_ok(proc)
    executed = ran(proc.stdout)
    must, may = affected("mapper.objective")
    assert "map" in must, must
    assert must <= executed, proc.stdout
    assert executed <= may, proc.stdout
    assert not executed & {"analyze", "graph", "optimize", "emit", "build"}, proc.stdout
    if mapping.read_bytes() != before:
        # mapping.json is a file_dep of every stage reading it
        readers = {s.name for s in STAGES if "mapping.json" in s.inputs}
        assert readers <= executed, proc.stdout


@pytest.mark.slow
def test_arch_change_makes_new_design_and_moves_latest(built, tmp_path):
    project, _ = built
    work = copy_project(project, tmp_path / "proj", keep_mtimes=True)
    overrides = [*BASE, "arch.rows=2", "arch.cols=2"]
    new_id = design_id(compose(overrides))
    assert new_id != base_design_id()
    proc = doit(work, "build", *overrides)
    check_ok(proc)
    assert ran(proc.stdout) == ALL_TASKS, proc.stdout
    assert os.readlink(work / "out" / "latest") == new_id
    assert (work / "out" / base_design_id()).is_dir()  # the old design stays


@pytest.mark.slow
def test_clean_removes_targets_and_latest(built, tmp_path):
    project, _ = built
    work = copy_project(project, tmp_path / "proj", keep_mtimes=True)
    proc = doit(work, "clean", *BASE)
    check_ok(proc)
    out = work / "out"
    assert not (out / "latest").is_symlink()
    assert not (out / base_design_id()).exists()
    assert (out / ".doit" / f"{base_design_id()}.json").is_file()


@pytest.mark.slow
def test_clean_one_stage_removes_only_its_outputs(built, tmp_path):
    project, _ = built
    work = copy_project(project, tmp_path / "proj", keep_mtimes=True)
    design_dir = work / "out" / base_design_id()
    proc = doit(work, "clean", f"emit:{base_design_id()}", *BASE)
    check_ok(proc)
    assert not (design_dir / "rtl").exists()
    for stage in STAGES:
        if stage.name != "emit":
            for output in stage.outputs:
                assert (design_dir / output).is_file(), output
    rebuilt = doit(work, "build", *BASE)
    check_ok(rebuilt)
    assert "emit" in ran(rebuilt.stdout)
    assert not ran(rebuilt.stdout) & {"analyze", "map", "graph", "optimize"}


# --------------------------------------------------------------------------- doit verbs, load cost
def test_list_shows_every_stage(tmp_path):
    project = make_project(tmp_path / "proj")
    proc = doit(project, "list", timeout=120)
    check_ok(proc)
    listed = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert set(listed) == ALL_TASKS | {"calibrate"}  # build runs the stages; calibrate is asked for by name
    for stage in STAGES:  # each described by the stage table
        assert stage.what[:40] in listed[stage.name], listed[stage.name]


def test_list_all_shows_design_subtasks(tmp_path):
    project = make_project(tmp_path / "proj")
    proc = doit(project, "list", "--all", *BASE, timeout=120)
    check_ok(proc)
    for name in STAGE_NAMES:
        assert f"{name}:{base_design_id()}" in proc.stdout


def test_info_build(tmp_path):
    project = make_project(tmp_path / "proj")
    proc = doit(project, "info", "build", timeout=120)
    # doit info exits 1 when the task is not up to date (nothing is built here)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr == ""
    assert "status" in proc.stdout
    for name in STAGE_NAMES:
        assert f"{name}:{design_id(compose())}" in proc.stdout


@pytest.mark.slow
def test_info_build_up_to_date_after_build(built):
    project, _ = built
    proc = doit(project, "info", "build", *BASE)
    check_ok(proc)
    assert "up-to-date" in proc.stdout


def test_dodo_load_is_cheap(tmp_path):
    """Loading dodo.py composes the config but imports no numerics, LP or HDL packages."""
    project = make_project(tmp_path / "proj")
    code = (
        "import runpy, sys; runpy.run_path('dodo.py'); "
        "print(','.join(m for m in ('numpy', 'pulp', 'veriloggen', 'networkx') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


# --------------------------------------------------------------------------- lego_build.flow.tasks
def test_overrides_from_vars_keeps_order():
    assert tasks.overrides_from_vars(None) == []
    assert tasks.overrides_from_vars({}) == []
    doit_vars = {"arch": "systolic", "workload.M": "32", "+arch.foo": "1", "x": "a=b"}
    assert tasks.overrides_from_vars(doit_vars) == ["arch=systolic", "workload.M=32", "+arch.foo=1", "x=a=b"]


def test_error_line_is_one_line():
    assert tasks.error_line("a\nb  c") == "error: a b c"


def _tree(root: Path) -> None:
    (root / "lego_build" / "sub").mkdir(parents=True)
    (root / "lego_build" / "__init__.py").write_text("x = 1\n")
    (root / "lego_build" / "sub" / "m.py").write_text("y = 2\n")
    (root / "rtl_templates_free").mkdir()
    (root / "rtl_templates_free" / "fu.py").write_text("z = 3\n")


def test_code_hash_ignores_location_and_mtimes_but_not_content(tmp_path):
    a, b = tmp_path / "a", tmp_path / "some" / "where" / "b"
    _tree(a)
    _tree(b)
    os.utime(b / "lego_build" / "sub" / "m.py", (1, 1))
    (b / "lego_build" / "__pycache__").mkdir()
    (b / "lego_build" / "__pycache__" / "junk.py").write_text("ignored\n")
    (b / "lego_build" / "data.json").write_text("{}\n")
    assert tasks.code_files(a) == ["lego_build/__init__.py", "lego_build/sub/m.py", "rtl_templates_free/fu.py"]
    assert tasks.code_hash(a) == tasks.code_hash(b)
    (b / "rtl_templates_free" / "fu.py").write_text("z = 4\n")
    assert tasks.code_hash(a) != tasks.code_hash(b)


def test_code_hash_covers_the_sources_and_nothing_else(tmp_path):
    """The same sources hash the same in any checkout; editing one changes the hash; caches do not."""
    copies = []
    for name in ("a", "b"):
        for d in tasks.CODE_DIRS:
            shutil.copytree(REPO_ROOT / d, tmp_path / name / d, ignore=shutil.ignore_patterns("__pycache__"))
        copies.append(tmp_path / name)
    a, b = copies
    assert tasks.code_hash(a) == tasks.code_hash(b) == tasks.code_hash()
    assert "lego_build/flow/tasks.py" in tasks.code_files(a)
    (b / "lego_build" / "__pycache__").mkdir(exist_ok=True)
    (b / "lego_build" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"cache")
    (b / "lego_build" / ".hidden.py").write_text("x = 1\n")
    assert tasks.code_hash(b) == tasks.code_hash(a)
    edited = b / "lego_build" / "flow" / "tasks.py"
    edited.write_text(edited.read_text() + "# an edit\n")
    assert tasks.code_hash(b) != tasks.code_hash(a)


def test_stage_error_becomes_one_line_rollback_and_exit_1(tmp_path, monkeypatch, capsys):
    from lego_build.flow import stages
    from lego_build.runtime import journal

    (tmp_path / "lego_fake_stage_mod.py").write_text(
        "from lego_build.errors import StageError\n"
        "def run(cfg, design_dir, inputs):\n"
        "    raise StageError('arch.rows=3: does not divide workload.M=16\\nuse a divisor')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    fake = stages.Stage("fake", (), (), ("x.json",), "lego_fake_stage_mod:run")
    monkeypatch.setitem(stages.STAGE_BY_NAME, "fake", fake)

    rolled = []
    monkeypatch.setattr(journal, "active", lambda: type("J", (), {"rollback": lambda self: rolled.append(1)})())

    with pytest.raises(SystemExit) as stop:
        tasks.run_stage_action("fake", compose(), str(tmp_path / "design"))

    assert stop.value.code == tasks.STAGE_FAILED_EXIT == 1
    assert rolled == [1]  # out/ put back, as for bad input
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: arch.rows=3: does not divide workload.M=16 use a divisor"]
    assert "Traceback" not in err


def test_latest_helpers(tmp_path):
    link = tmp_path / "latest"
    assert not tasks.latest_points_at(str(link), "d1")
    tasks.point_latest(str(link), "d1")
    assert tasks.latest_points_at(str(link), "d1")
    assert not tasks.latest_points_at(str(link), "d2")
    design_dir = tmp_path / "d1"
    (design_dir / "rtl").mkdir(parents=True)
    (design_dir / "rtl" / "m.v").write_text("module m; endmodule\n")
    tasks.clean_design(str(link), "d2", str(design_dir), dryrun=True)
    assert link.is_symlink() and design_dir.is_dir()
    tasks.clean_design(str(link), "d2", str(tmp_path / "d2"))
    assert link.is_symlink()  # points at another design: kept
    tasks.clean_design(str(link), "d1", str(design_dir))
    assert not link.is_symlink() and not design_dir.exists()


def test_owned_dirs_follow_the_stage_table():
    owned = {s.name: tasks.owned_dirs(s, STAGES) for s in STAGES}
    for stage in STAGES:
        for d in owned[stage.name]:
            assert all(o.startswith(f"{d}/") or not o.startswith(d) for o in stage.outputs)
            for other in STAGES:
                if other.name != stage.name:
                    assert not any(o.split("/", 1)[0] == d for o in other.outputs)
    by_name = {s.name: s for s in STAGES}
    if "rtl/lego_top.v" in by_name["emit"].outputs:
        assert owned["emit"] == ["rtl"]


def test_layer_without_a_fitting_tile_names_layer_level_and_size(tmp_path):
    """Issue 7, acceptance 5: a register file smaller than one partial sum leaves no valid mapping."""
    project = make_project(tmp_path / "proj")
    proc = doit(project, "map", "arch=zigzag_eyeriss_like", "workload=lenet", "arch.memory.1.size_bytes=1",
                timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: layer c1: no tile fits memory level rf_16B: the smallest tile needs 2 B, "
                           "the level has 1 B"), line
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not list((project / "out").glob("*/mapping.json"))
