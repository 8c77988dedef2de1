"""Small helpers for ``dodo.py``: command-line overrides, one-line errors, code hash.

Kept free of heavy imports (no numpy, pulp, veriloggen): ``dodo.py`` imports this
module every time doit loads, and a no-op build should stay well under two seconds.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path
from typing import Iterable, Mapping, NoReturn, Optional

from lego_build.runtime import crashtest, journal

#: Directories (relative to the source root) whose ``*.py`` files form the code hash.
CODE_DIRS: tuple[str, ...] = ("lego_build", "rtl_templates_free")

#: Exit status for a bad configuration (doit itself uses 1 = task failed, 3 = dodo error).
CONFIG_ERROR_EXIT = 2


def overrides_from_vars(cmdline_vars: Optional[Mapping[str, str]]) -> list[str]:
    """Turn doit's ``key=value`` command-line variables into Hydra overrides, in order.

    ``cmdline_vars`` is ``doit.doit_cmd._CMDLINE_VARS`` (``None`` when the dodo file
    is imported outside doit). doit splits each word at the first ``=``, so
    ``+arch.foo=1`` arrives as ``{"+arch.foo": "1"}`` and is rebuilt unchanged.
    """
    if not cmdline_vars:
        return []
    return [f"{key}={value}" for key, value in cmdline_vars.items()]


def error_line(message: object) -> str:
    """``error: <message>`` folded onto one line."""
    text = " ".join(str(message).split())
    return f"error: {text}"


def print_error(message: object) -> None:
    sys.stdout.flush()
    sys.stderr.write(error_line(message) + "\n")
    sys.stderr.flush()


def exit_with_error(message: object, code: int = CONFIG_ERROR_EXIT) -> NoReturn:
    """Print ``error: <message>`` on stderr and end the process with ``code``.

    ``SystemExit`` is not an ``Exception``, so it passes through doit's task loader
    (which only turns ``Exception`` into a traceback and exit status 3) and the
    ``sys.exit(DoitMain().run(...))`` of doit's entry point, ending with ``code``.
    """
    print_error(message)
    raise SystemExit(code)


def load_config(overrides: Iterable[str]):
    """Compose, validate and check the resource estimates (:mod:`lego_build.flow.budget`);
    on a :class:`ConfigError` or :class:`BudgetError` print one line and exit 2."""
    from lego_build.config.compose import compose
    from lego_build.errors import BudgetError, ConfigError
    from lego_build.flow.budget import check
    from lego_build.flow.validate import refuse_moved, validate

    hydra = [o for o in overrides if o.lstrip("+~").startswith("hydra")]
    if hydra:
        exit_with_error(f"{hydra[0]}: doit build writes to out/<design-id>/ and takes no hydra.* settings; "
                        "use lego-build for Hydra's run and sweep options")
    try:
        refuse_moved(overrides)  # e.g. target.jobs, now run.jobs
        cfg = compose(list(overrides))
        check(cfg, validate(cfg))
    except (ConfigError, BudgetError) as exc:
        exit_with_error(exc)
    return cfg


def source_root() -> Path:
    """The directory holding the ``lego_build`` package (the repository in a dev install)."""
    return Path(__file__).resolve().parents[2]


def code_files(root: Path | None = None, dirs: Iterable[str] = CODE_DIRS) -> list[str]:
    """Sorted POSIX paths, relative to ``root``, of the Python sources that shape the outputs."""
    root = Path(root) if root is not None else source_root()
    found: set[str] = set()
    for d in dirs:
        base = root / d
        if not base.is_dir():
            continue
        for path in base.rglob("*.py"):
            rel = path.relative_to(root)
            if any(part == "__pycache__" or part.startswith(".") for part in rel.parts):
                continue
            if path.is_file():
                found.add(rel.as_posix())
    return sorted(found)


def code_hash(root: Path | None = None, dirs: Iterable[str] = CODE_DIRS, plugins: bool = True) -> str:
    """sha256 over (relative path, bytes) of every source file; no absolute paths, no mtimes.

    Identical in any checkout of the same commit, so a copied ``out/`` stays up to
    date, while editing any module re-runs the stages. ``plugins``: include the source of every
    installed plugin package (:func:`lego_build.runtime.registry.plugin_files`), so editing a
    plugin re-runs the stages too.
    """
    root = Path(root) if root is not None else source_root()
    digest = hashlib.sha256()
    for rel in code_files(root, dirs):
        data = (root / rel).read_bytes()
        digest.update(rel.encode("utf-8") + b"\0")
        digest.update(str(len(data)).encode("ascii") + b"\0")
        digest.update(data)
    if plugins:
        from lego_build.runtime.registry import plugin_files

        for name, path in plugin_files():
            data = path.read_bytes()
            digest.update(b"plugin:" + name.encode("utf-8") + b"\0")
            digest.update(str(len(data)).encode("ascii") + b"\0")
            digest.update(data)
    return digest.hexdigest()


#: exit status of a stage that failed on valid input (a tool failed, a simulation did not match)
STAGE_FAILED_EXIT = 1
#: exit status after an interrupt (SIGINT / SIGTERM), as a shell reports a signal-ended job
INTERRUPTED_EXIT = 130


def run_stage_action(name: str, cfg, design_dir: str):
    """doit python-action: run one stage. Every way it can fail ends the same way: ``out/`` put
    back as it was before this build (:mod:`lego_build.runtime.journal`, the dependency DB not
    saved), one ``error:`` line on stderr, and an exit status: 2 for bad input the stage found
    (:class:`InputError`), 1 for a failed stage (:class:`StageError`: a tool failed, a
    simulation timed out or did not match; ``MemoryError``; a bug, whose traceback goes to a
    log file outside ``out/``), 130 for an interrupt (Ctrl-C, SIGTERM).
    """
    from lego_build.errors import InputError, StageError
    from lego_build.flow.stages import run_stage

    crashtest.enter(name)
    _RUNNING.append(name)
    try:
        checkpoint(f"{name}:{Path(design_dir).name}")
        run_stage(name, cfg, Path(design_dir))
    except InputError as exc:  # bad input found by the stage: like a config error
        fail(exc, CONFIG_ERROR_EXIT)
    except StageError as exc:
        fail(exc, STAGE_FAILED_EXIT)
    except KeyboardInterrupt:
        fail(f"stage {name} interrupted; out/ is as it was before this build, run it again to finish",
             INTERRUPTED_EXIT)
    except MemoryError:
        fail(f"stage {name} ran out of memory; lower target.tile_steps or the layer sizes, or use a machine "
             "with more memory", STAGE_FAILED_EXIT)
    except Exception as exc:  # a bug in a stage: still no half-written out/, and the traceback is kept
        log = _save_traceback(name)
        fail(f"stage {name} failed with {type(exc).__name__}: {' '.join(str(exc).split())[:200]}; this is a bug "
             f"in lego_build, please report it with the traceback in {log}", STAGE_FAILED_EXIT)
    finally:
        _RUNNING.remove(name)
    return None


_RUNNING: list[str] = []  # the stage action running now (signals inside one unwind to it)


#: what ``doit calibrate`` writes in the design directory (read back with ``arch.energy.table``)
ENERGY_TABLE = "energy_table.yaml"


def energy_table_text(design: str, check: dict, table: dict) -> str:
    """The calibrated table as YAML, with the model check it comes from as comments."""
    lines = [f"# per-access energies (pJ at {check['node_nm']:g} nm) measured on {design} by the standard-cell",
             f"# flow: {check['runs']} simulated runs, {check['macs']:,} MACs; use with "
             "arch.energy.table=<this file>",
             "# level: model pJ / measured pJ (error) before calibration"]
    lines += [f"#   {r['level']}: {r['model_pj']} / {r['measured_pj']} ({r['error']:+.1%})" if r["error"] is not None
              else f"#   {r['level']}: {r['model_pj']} / {r['measured_pj']}" for r in check["levels"]]
    return "\n".join(lines + [f"{k}: {v}" for k, v in table.items()]) + "\n"


def calibrate_action(cfg, design_dir: str):
    """doit python-action: the per-access energy table from this design's model check
    (``sim/result.json`` of a ``target=asic`` build, :mod:`lego_build.targets.energy_check`),
    written to ``<design>/energy_table.yaml``; the mapper reads it only through
    ``arch.energy.table``. No check in the result: one line, exit 2, nothing written."""
    from dataclasses import asdict

    from lego_build.runtime.atomic import read_json, write_text
    from lego_build.targets.energy_check import calibrate

    result = read_json(Path(design_dir) / "sim" / "result.json")
    check = (result.get("products", {}).get("asic") or {}).get("model_check")
    if not check:
        fail(f"{design_dir}/sim/result.json has no model check; build with target=asic (tiles simulated) first, "
             "e.g. doit calibrate target=asic", CONFIG_ERROR_EXIT)
    try:
        table = calibrate(check, asdict(cfg.arch.energy))
    except ValueError as exc:
        fail(f"{design_dir}: {exc}; calibrate on a design whose tiles use the FUs and the banks", CONFIG_ERROR_EXIT)
    write_text(Path(design_dir) / ENERGY_TABLE, energy_table_text(Path(design_dir).name, check, table))
    print(f"calibrate: {design_dir}/{ENERGY_TABLE}: " + ", ".join(f"{k} {v:g}" for k, v in table.items()))


def fail(message: object, code: int) -> NoReturn:
    """Roll back this build's writes, print ``error: <message>`` and exit with ``code``."""
    jnl = journal.active()
    if jnl is not None:
        jnl.rollback()
    exit_with_error(message, code)


def _save_traceback(stage: str) -> Path:
    """The current exception's traceback in a log (:func:`lego_build.runtime.userdirs.write_log`)."""
    import traceback

    from lego_build.runtime.userdirs import write_log

    return write_log(f"{stage}-traceback", traceback.format_exc())


def on_signal(signum, frame) -> None:
    """SIGINT / SIGTERM handler of a build: inside a stage an interrupt unwinds to
    :func:`run_stage_action` (rollback, exit 130); between stages the rollback happens here.
    The first Ctrl-C (SIGINT) of the map stage only ends its searches with the best mappings
    found so far (:mod:`lego_build.runtime.stop`); the next one abandons the build."""
    import signal

    from lego_build.runtime import stop

    if _RUNNING and _RUNNING[-1] == "map" and signum == signal.SIGINT and not stop.requested():
        stop.request()
        print("map: Ctrl-C: each layer's search ends with the best mapping found so far; Ctrl-C again abandons "
              "the build", file=sys.stderr, flush=True)
        return
    if _RUNNING:
        raise KeyboardInterrupt
    fail("build interrupted; out/ is as it was before this build, run it again to finish", INTERRUPTED_EXIT)


def checkpoint(task_id: str) -> None:
    """Write-ahead step before a stage rewrites its targets: save the records of the tasks
    this run finished so far and drop ``task_id``'s own.

    doit saves its DB once, at the end of a run, and trusts a record whatever became of
    the targets since. So without this, a build killed half-way through re-running a
    stage would leave that stage's old record next to half-new targets, and a later
    build with the old config would call them up to date. With it, a killed build
    re-runs exactly the stage it was in and the ones after it.
    """
    from doit.globals import Globals

    from lego_build.flow.doitdb import AtomicJsonDB

    dep = getattr(Globals, "dep_manager", None)
    if dep is None or not isinstance(dep.backend, AtomicJsonDB):
        return
    dep.backend.remove(task_id)
    dep.backend.dump()


#: set (to anything but empty) for a ``doit build`` that must not move ``out/latest``: the jobs of a
#: ``lego-build -m`` sweep (lego_build.flow.app), whichever finishes last would otherwise win
KEEP_LATEST_ENV = "LEGO_KEEP_LATEST"


def keep_latest() -> bool:
    """True when this build leaves ``out/latest`` alone (:data:`KEEP_LATEST_ENV`)."""
    return bool(os.environ.get(KEEP_LATEST_ENV))


def latest_points_at(link: str, target: str) -> bool:
    """True if ``link`` is a symlink whose text is exactly ``target``."""
    try:
        return os.path.islink(link) and os.readlink(link) == target
    except OSError:
        return False


def point_latest(link: str, target: str) -> None:
    from lego_build.runtime.atomic import point_symlink

    point_symlink(Path(link), target)


def owned_dirs(stage, stages) -> list[str]:
    """Sub-directories of the design dir that only ``stage`` writes into (``rtl`` for emit).

    Such a directory is removed whole by the stage's clean action, so files a stage
    writes besides its declared targets (e.g. every module of ``rtl/``) go too.
    """
    def top_dirs(s) -> set[str]:
        return {o.split("/", 1)[0] for o in s.outputs if "/" in o}

    others: set[str] = set()
    for other in stages:
        if other.name != stage.name:
            others |= top_dirs(other) | {i.split("/", 1)[0] for i in other.outputs}
    return sorted(top_dirs(stage) - others)


def remove_tree(path: str, dryrun: bool = False) -> None:
    """clean action: remove a generated directory (not followed if it is a symlink)."""
    if os.path.islink(path) or not os.path.isdir(path):
        return
    print(f"removing directory '{path}'")
    if not dryrun:
        shutil.rmtree(path)


def prune_empty_dirs(top: str, dryrun: bool = False) -> None:
    """clean action: remove directories left empty under ``top`` (and ``top`` itself)."""
    top_path = Path(top)
    if dryrun or not top_path.is_dir() or top_path.is_symlink():
        return
    for dirpath, _dirnames, _files in sorted(os.walk(top_path), key=lambda w: -len(Path(w[0]).parts)):
        try:
            os.rmdir(dirpath)  # fails (harmlessly) unless empty
        except OSError:
            pass


def clean_design(link: str, design: str, design_dir: str, dryrun: bool = False) -> None:
    """clean action of ``build``: drop ``out/latest`` if it names this design, then the design dir."""
    if latest_points_at(link, design):
        print(f"removing link '{link}'")
        if not dryrun:
            os.unlink(link)
    remove_tree(design_dir, dryrun)
