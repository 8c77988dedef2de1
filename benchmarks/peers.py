"""What the peer comparisons (:mod:`benchmarks.vs_zigzag`, :mod:`benchmarks.vs_accelforge`) share:
both tools timed the same way, as whole processes.

* :func:`timed`: one command as a child process; its CPU time is the user + system time of the
  child's whole process tree (``resource.getrusage(RUSAGE_CHILDREN)`` before and after: imports,
  composition, every stage or search step, any worker it starts and waits for), its wall time the
  parent's clock around it.
* :func:`doit_map`: our side as a user runs it: ``doit map <overrides>`` in a fresh process and a
  fresh design directory (``analyze``, ``graph``, ``optimize`` and ``map``: the map stage reads the
  generated array), with a cache root of its own (``LEGO_CACHE_DIR``: nothing of an earlier run).
* :func:`summary`: medians over repeats, and the first run apart (the coldest: the OS's file cache
  and the interpreters' byte code warm up after it).
"""
from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lego_build.runtime.atomic import read_json

ROOT = Path(__file__).resolve().parents[1]
DODO = ROOT / "dodo.py"


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], *, cwd: Path | None = None, env: dict | None = None,
          log: Path | None = None) -> dict:
    """Run ``cmd`` to completion; ``{"cpu_s", "wall_s"}`` of its process tree (module docstring).
    Its output goes to ``log`` (or nowhere); a failure raises ``SystemExit`` naming the log."""
    env = {**os.environ, **(env or {})}
    cpu0, wall0 = _children_cpu(), time.perf_counter()
    with open(log, "a") if log else open(os.devnull, "w") as out:
        rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    wall, cpu = time.perf_counter() - wall0, _children_cpu() - cpu0
    if rc != 0:
        raise SystemExit(f"{' '.join(map(str, cmd[:4]))} ... failed (exit {rc})" + (f"; see {log}" if log else ""))
    return {"cpu_s": cpu, "wall_s": wall}


def product_env() -> dict:
    """The lego_build beside these benchmarks on the child's path (a checkout's, not an installed one)."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def doit_map(overrides: list[str], log: Path | None = None) -> tuple[dict, dict]:
    """``doit map <overrides>`` in a fresh process and design directory: (its times, ``mapping.json``)."""
    with tempfile.TemporaryDirectory(prefix="bench_doit_") as tmp:
        t = Path(tmp)
        cmd = [sys.executable, "-m", "doit", "-f", str(DODO), "-d", str(t), "map", *overrides]
        times = timed(cmd, cwd=t, env={**product_env(), "LEGO_CACHE_DIR": str(t / "cache")}, log=log)
        found = sorted(t.glob("out/*/mapping.json"))
        if len(found) != 1:
            raise SystemExit(f"doit map wrote {len(found)} mapping.json files under {t / 'out'}")
        return times, read_json(found[0])


def summary(runs: list[dict]) -> dict:
    """Medians of ``cpu_s`` and ``wall_s`` over ``runs``, the first run's, and every run's."""
    return {"cpu_s": statistics.median(r["cpu_s"] for r in runs),
            "wall_s": statistics.median(r["wall_s"] for r in runs),
            "first": dict(runs[0]), "runs": [dict(r) for r in runs], "repeats": len(runs)}


def load() -> list[float]:
    """The machine's 1, 5 and 15 minute load averages (a shared machine's wall times depend on them)."""
    return [round(x, 2) for x in os.getloadavg()]


def ratio(peer: float, ours: float) -> float:
    """How many times ours the peer takes (inf when ours took no measurable time)."""
    return peer / ours if ours > 0 else float("inf")
