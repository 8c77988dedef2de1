"""doit tasks of lego_build: one task per pipeline stage, plus ``build``.

    doit build arch.rows=8 workload.M=32     # key=value words are Hydra overrides, in order
    doit list | doit info build | doit clean

The config is composed once when doit loads this file (``conf/`` via the Compose
API). A bad value prints ``error: <message>`` on one line and exits with status 2
before anything is written under ``out/``.

Each stage task writes into ``out/<design-id>/`` (locked while doit runs, so a second
build of the design waits) and is up to date when its ``file_dep`` are unchanged, its
targets exist and ``config_changed`` sees the same config keys (only those the stage
reads, ``Stage.reads`` in :mod:`lego_build.flow.stages`: no stage hashes the ``run``
settings) and the same code hash. All paths handed to doit are relative and the dep
database is JSON (``out/.doit/<design-id>.json``, saved atomically), so ``out/`` can be
copied into another checkout, at any path, and stays up to date. A build killed at any
point re-runs what did not finish; one stopped by bad input (exit 2) leaves ``out/``
byte-identical (:mod:`lego_build.runtime.journal`).
"""
import signal
from pathlib import Path

from doit import doit_cmd
from doit.task import clean_targets
from doit.tools import config_changed

from lego_build.config.compose import HARDWARE, config_slice, design_id, key_value
from lego_build.flow import tasks
from lego_build.flow.stages import STAGES, config_file_deps
from lego_build.runtime import journal
from lego_build.runtime.atomic import sweep_stale, sweep_stale_of
from lego_build.runtime.lock import lock_dir

OUT = "out"
LATEST = f"{OUT}/latest"

# --------------------------------------------------------------- config (at load time)
OVERRIDES = tasks.overrides_from_vars(doit_cmd._CMDLINE_VARS)
CFG = tasks.load_config(OVERRIDES)  # on ConfigError: one line on stderr, exit 2, nothing written
DESIGN_ID = design_id(CFG)
DESIGN_DIR = f"{OUT}/{DESIGN_ID}"
CODE_HASH = tasks.code_hash()

# Only now that the config is valid: journal this run's writes (bad input found by a stage
# undoes them), lock the design directory (one build per design; doit reads the DB after
# this), and remove what a killed build of it left behind.
JOURNAL = journal.start()
signal.signal(signal.SIGINT, tasks.on_signal)  # an interrupt rolls the build back, like bad input
signal.signal(signal.SIGTERM, tasks.on_signal)
_DESIGN_LOCK = lock_dir(Path(DESIGN_DIR), JOURNAL.makedirs)
DEP_FILE = f"{OUT}/.doit/{DESIGN_ID}.json"  # one DB per design: designs share no file but out/latest
sweep_stale(Path(DESIGN_DIR))
sweep_stale_of(Path(DEP_FILE))

DOIT_CONFIG = {
    "default_tasks": ["build"],
    "dep_file": DEP_FILE,
    "backend": "lego_json",  # lego_build.flow.doitdb: saved atomically, not saved after a rollback
    "verbosity": 2,
    "minversion": "0.36.0",
}


def _design_path(rel):
    return f"{DESIGN_DIR}/{rel}"


def _keys_text(keys):
    """The config keys a stage reads, with the hardware keys (``arch`` without its cost model) as one."""
    rest = [k for k in keys if k not in HARDWARE]
    hardware = ["arch (the hardware, not its cost model)"] if len(rest) < len(keys) else []
    return [f"cfg.{k}" for k in rest] + hardware


def _stage_doc(stage):
    reads = _keys_text(stage.reads) + list(stage.inputs)
    return f"{stage.what or stage.name}; reads {', '.join(reads) or 'nothing'}; writes {', '.join(stage.outputs)}"


def _make_stage_task(stage):
    def task_stage():
        yield {
            "name": DESIGN_ID,
            "doc": _stage_doc(stage),
            "actions": [(tasks.run_stage_action, [stage.name, CFG, DESIGN_DIR])],
            "file_dep": [_design_path(p) for p in stage.inputs] + config_file_deps(stage, CFG),
            "targets": [_design_path(p) for p in stage.outputs],
            "uptodate": [config_changed({**config_slice(CFG, stage.reads), "code": CODE_HASH})],
            "clean": [
                clean_targets,
                *[(tasks.remove_tree, [_design_path(d)]) for d in tasks.owned_dirs(stage, STAGES)],
                (tasks.prune_empty_dirs, [DESIGN_DIR]),
            ],
        }

    task_stage.__name__ = task_stage.__qualname__ = f"task_{stage.name}"
    task_stage.__doc__ = _stage_doc(stage)
    return task_stage


for _stage in STAGES:
    globals()[f"task_{_stage.name}"] = _make_stage_task(_stage)
del _stage


def _point_latest():
    tasks.point_latest(LATEST, DESIGN_ID)
    print(f"{LATEST} -> {DESIGN_ID}")


def task_build():
    """Run every stage for the configured design and point out/latest at it (not in a sweep's job)."""
    keep = tasks.keep_latest()  # a lego-build sweep's job: out/latest stays where it is
    return {
        "actions": [] if keep else [(_point_latest,)],
        "task_dep": [f"{stage.name}:{DESIGN_ID}" for stage in STAGES],
        "uptodate": [True] if keep else [(tasks.latest_points_at, [LATEST, DESIGN_ID])],
        "clean": [(tasks.clean_design, [LATEST, DESIGN_ID, DESIGN_DIR])],
    }


def task_calibrate():
    """Per-access energies measured on this design (needs target=asic) -> energy_table.yaml for arch.energy.table;
    points out/latest at the design."""
    return {
        "actions": [(tasks.calibrate_action, [CFG, DESIGN_DIR]), (_point_latest,)],
        "task_dep": [f"simulate:{DESIGN_ID}"],
        "file_dep": [_design_path("sim/result.json")],
        "targets": [_design_path(tasks.ENERGY_TABLE)],
        "uptodate": [config_changed({"energy": key_value(CFG, "arch.energy"), "code": CODE_HASH})],
        "clean": True,
    }
