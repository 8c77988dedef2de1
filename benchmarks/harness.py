"""The benchmarks' one harness: one argument style, the product's own path, one results format.

Every benchmark is a module of this package, run either way (the same thing):

    python -m benchmarks.<name> [--quick] [--out FILE] [--seed N] [its own options]
    python benchmarks/<name>.py ...      # re-runs itself as the line above (benchmarks/_script.py)

* :func:`parser`: the common options (``--quick``: the small inputs its test uses; ``--out``: the
  results file, default ``benchmarks/results/<name>.json``; ``--seed``; ``--keep``: where the
  designs go, default a temporary directory), each benchmark adds its own.
* :func:`compose` and :func:`run_stages`: a design as ``doit build`` makes it, the same
  composition and validation (:func:`lego_build.flow.tasks.load_config`'s checks, raised rather
  than printed) and the stage functions in the stage table's order, in a directory of the
  benchmark's (never ``out/``).
* :func:`write_results`: ``benchmarks/results/<name>.json``: the figures (with the paper's or a
  peer's figure beside ours, each with its citation), the machine, the commit, the date, the
  command line, whether it was a ``--quick`` run and the state of the caches where it matters.
  ``docs/benchmarks.md`` is generated from these files (``python -m benchmarks.docs``).

Figures are data: ``figures["headline"]`` (name -> value) and ``figures["tables"]`` (see
:func:`table`) are what the docs show; any other key is kept in the file as data only.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
FORMAT = 1
#: the caches whose state changes a wall time (``cache=`` of :func:`write_results`)
CACHES = ("cold", "warm", "n/a")


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the common options; ``description``: the module's docstring (its
    first paragraph is the help's)."""
    ap = argparse.ArgumentParser(description=description.strip().split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="the small inputs its test uses (the results file says quick: true)")
    ap.add_argument("--out", type=Path, default=None,
                    help="results file (default benchmarks/results/<name>.json)")
    ap.add_argument("--seed", type=int, default=1, help="seed of any random draw (default 1)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="keep the designs in this directory (default: a temporary one)")
    return ap


def compose(overrides: Iterable[str]):
    """The config ``doit build <overrides>`` composes: the groups' schemas, the cross-group
    validation and the resource estimates (raises :class:`lego_build.ConfigError` or
    :class:`lego_build.errors.BudgetError` where ``doit`` prints one line and exits 2)."""
    from lego_build.config.compose import compose as compose_groups
    from lego_build.flow.budget import check
    from lego_build.flow.validate import validate

    cfg = compose_groups(list(overrides))
    check(cfg, validate(cfg))
    return cfg


def run_stages(cfg, until: str, workdir, *, quiet: bool = True, skip: Iterable[str] = ()) -> Path:
    """Run the stage table's stages in order up to ``until`` (included) on ``workdir``, as
    ``doit <until>`` does on a fresh design directory; ``skip``: stages whose outputs the caller
    already put there. ``quiet``: the stages' progress lines are dropped. Returns ``workdir``."""
    from lego_build.flow.stages import STAGE_BY_NAME, STAGES, run_stage

    if until not in STAGE_BY_NAME:
        raise ValueError(f"until={until!r}: not a stage; one of {', '.join(s.name for s in STAGES)}")
    workdir = Path(workdir)
    with contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext():
        for stage in STAGES:
            if stage.name not in skip:
                run_stage(stage.name, cfg, workdir)
            if stage.name == until:
                break
    return workdir


@contextlib.contextmanager
def workspace(args: argparse.Namespace | None = None, prefix: str = "lego_build-bench-"):
    """The directory designs are built in: ``--keep`` if given, else a temporary one removed after."""
    keep = getattr(args, "keep", None) if args is not None else None
    if keep is not None:
        Path(keep).mkdir(parents=True, exist_ok=True)
        yield Path(keep)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def machine() -> dict:
    """Where the figures were measured: CPU count and model, Python, OS."""
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpus": cpus, "cpu_model": model, "python": platform.python_version(),
            "os": f"{platform.system()} {platform.release()}"}


def commit() -> str:
    """The checkout's commit (``+dirty`` with uncommitted changes to tracked files), '' outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("+dirty" if dirty else "")


def command(name: str, argv: list[str] | None = None) -> str:
    """The command line that reproduces a run (as ``python -m benchmarks.<name> ...``)."""
    import shlex

    args = sys.argv[1:] if argv is None else list(argv)
    return shlex.join(["python", "-m", f"benchmarks.{name}", *map(str, args)])


def table(title: str, columns: list[str], rows: list[list], note: str = "") -> dict:
    """A table of ``figures["tables"]``: a column named ``... (paper)`` or ``... (<peer>)`` holds the
    published or the peer's figure beside ours."""
    return {"title": title, "columns": list(columns), "rows": [list(r) for r in rows], "note": note}


def results_path(name: str, out: Path | None = None) -> Path:
    return Path(out) if out is not None else RESULTS / f"{name}.json"


def write_results(name: str, figures: dict, *, peer: dict | None = None, paper: dict | None = None,
                  notes: str = "", cache: str | None = None, argv=None, quick: bool = False,
                  out: Path | None = None, title: str = "") -> Path:
    """Write ``benchmarks/results/<name>.json`` (or ``out``) and return its path.

    ``figures``: ours (``headline`` and ``tables`` are shown in the docs, other keys kept as data);
    ``paper`` / ``peer``: the published or the peer tool's figures, each with a ``source`` (the
    citation: paper, table, tool and version); ``cache``: ``cold`` / ``warm`` when a wall time
    depends on a cache (Verilator models, netlists), else None; ``argv``: the arguments of the
    run (default ``sys.argv[1:]``); ``quick``: a ``--quick`` run (small inputs; not the figures
    the docs quote as measured); ``title``: one line saying what it measures."""
    for label, side in (("paper", paper), ("peer", peer)):
        if side is not None and not side.get("source"):
            raise ValueError(f"write_results({name!r}): {label} figures need a 'source' (the citation)")
    if cache is not None and cache not in CACHES:
        raise ValueError(f"write_results({name!r}): cache={cache!r}; one of {', '.join(CACHES)}")
    doc = {"name": name, "format": FORMAT, "title": title, "quick": bool(quick),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": commit(), "command": command(name, argv), "machine": machine(), "cache": cache,
           "notes": notes, "figures": figures, "paper": paper, "peer": peer}
    path = results_path(name, out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=_plain) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(f"results: {path}", file=sys.stderr)
    return path


def read_results(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _plain(value):
    """JSON for NumPy scalars and paths."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return value.as_posix()
    raise TypeError(f"not JSON: {type(value).__name__}")
