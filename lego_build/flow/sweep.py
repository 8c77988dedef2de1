"""Sweeps: one record per design job, then ``summary.csv`` and ``pareto.png`` for the sweep.

Every job of a ``lego-build -m`` sweep writes ``out/sweeps/<name>/jobs/<key>.json`` (its
overrides, status and the design's ``summary.json`` figures) as soon as its build ends;
the summary is rebuilt from all job records, so a sweep stopped half-way and run again
lists every design once.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

from .atomic import write_json, write_text

COLUMNS = ("design", "arch", "workload", "mapper", "optimizer", "target", "status", "energy_pj", "cycles",
           "utilization", "macs", "layers_mapped", "layers_unmappable", "register_bits", "cells", "transistors",
           "simulation", "seconds", "error", "overrides")


def is_hydra(override: str) -> bool:
    """``hydra.*`` / ``hydra/...`` settings (launcher, dirs) do not change the designs."""
    return override.lstrip("+~").startswith("hydra")


def sweep_name(overrides: list[str]) -> str:
    """A stable name for a sweep: the swept keys and a hash of the design overrides."""
    designs = [o for o in overrides if not is_hydra(o)]
    keys = [o.split("=", 1)[0].lstrip("+~") for o in designs]
    digest = hashlib.sha256(" ".join(sorted(designs)).encode())
    stem = "-".join(k.replace("/", ".") for k in keys)[:60] or "default"
    return f"{stem}-{digest.hexdigest()[:8]}"


def job_key(overrides: list[str]) -> str:
    return hashlib.sha256("\n".join(overrides).encode()).hexdigest()[:16]


def record_job(sweep_dir: Path, overrides: list[str], design: str, status: str, seconds: float,
               summary: dict | None, error: str = "") -> Path:
    path = sweep_dir / "jobs" / f"{job_key(overrides)}.json"
    write_json(path, {"design": design, "overrides": overrides, "status": status, "seconds": round(seconds, 3),
                      "error": error, "summary": summary or {}})
    return path


def rows(sweep_dir: Path) -> list[dict]:
    out = []
    for path in sorted((sweep_dir / "jobs").glob("*.json")):
        job = json.loads(path.read_text())
        s = job["summary"]
        row = {c: s.get(c, "") for c in COLUMNS}
        row.update(design=job["design"], status=job["status"], seconds=job["seconds"], error=job["error"],
                   overrides=" ".join(job["overrides"]))
        out.append(row)
    return sorted(out, key=lambda r: (r["design"], r["overrides"]))


def write_summary(sweep_dir: Path) -> tuple[Path, Path | None]:
    """``summary.csv`` (one row per design job) and ``pareto.png`` (energy vs cycles, area as colour)."""
    table = rows(sweep_dir)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    csv_path = sweep_dir / "summary.csv"
    write_text(csv_path, buf.getvalue())
    done = [r for r in table if r["status"] == "ok" and r["energy_pj"] != "" and r["cycles"]]
    if not done:
        return csv_path, None
    return csv_path, pareto_plot(done, sweep_dir / "pareto.png")


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats in both coordinates (lower is better)."""
    front = []
    for i, (e, c) in enumerate(points):
        if not any((e2 <= e and c2 <= c) and (e2, c2) != (e, c) for e2, c2 in points):
            front.append(i)
    return front


def pareto_plot(table: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    energy = [float(r["energy_pj"]) / 1e6 for r in table]
    cycles = [float(r["cycles"]) for r in table]
    area = [float(r["cells"] or r["register_bits"] or 0) for r in table]
    label = "Yosys cells" if all(r["cells"] for r in table) else "register bits"
    fig, ax = plt.subplots(figsize=(7, 5), dpi=110)
    sc = ax.scatter(cycles, energy, c=area, cmap="viridis", s=60, edgecolors="black", linewidths=0.5)
    fig.colorbar(sc, ax=ax, label=f"area ({label})")
    front = sorted(pareto_front(list(zip(energy, cycles))), key=lambda i: cycles[i])
    ax.plot([cycles[i] for i in front], [energy[i] for i in front], "--", color="tab:red", label="Pareto front")
    for r, x, y in zip(table, cycles, energy):
        ax.annotate(f"{r['arch']}/{r['workload']}" + (f" {r['mapper']}" if r["mapper"] else ""), (x, y),
                    fontsize=7, xytext=(4, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("latency (cycles)")
    ax.set_ylabel("energy (uJ)")
    ax.set_title(f"{path.parent.name}: {len(table)} designs")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, metadata={"Software": None})
    plt.close(fig)
    tmp.replace(path)
    return path
