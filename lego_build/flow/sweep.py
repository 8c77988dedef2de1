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

from lego_build.runtime.atomic import write_json, write_text

COLUMNS = ("design", "arch", "workload", "mapper", "optimizer", "target", "status", "energy_pj", "cycles",
           "cycles_end_to_end", "energy_end_to_end_pj", "utilization", "macs", "layers_mapped", "layers_unmappable",
           "register_bits", "cells", "transistors", "simulation", "seconds", "error", "overrides")


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
    compare_to_baseline(done, sweep_dir)
    return csv_path, pareto_plot(done, sweep_dir / "pareto.png")


#: archs that are baselines: a sweep that has one and other archs on the same workload gets
#: ``comparison.md`` / ``comparison.png`` (seed 004 §6.2: LEGO-MNICOC against a Gemmini-like design)
BASELINES = ("gemmini_like",)


def compare_to_baseline(table: list[dict], sweep_dir: Path) -> Path | None:
    """Per workload, every other design's end-to-end speed-up and energy ratio against the
    baseline's (higher is better), their geometric means, a table and a bar chart."""
    from math import exp, log

    base = {r["workload"]: r for r in table if r["arch"] in BASELINES}
    others = [r for r in table if r["arch"] not in BASELINES and r["workload"] in base]
    if not others:
        return None

    def fig(r, key, fallback):
        return float(r.get(key) or r[fallback])

    lines = ["# Against the baseline", "",
             "| workload | design | baseline | cycles | baseline cycles | speed-up | energy ratio |",
             "|---|---|---|---:|---:|---:|---:|"]
    pairs = []
    for r in sorted(others, key=lambda r: (r["workload"], r["design"])):
        b = base[r["workload"]]
        speed = fig(b, "cycles_end_to_end", "cycles") / fig(r, "cycles_end_to_end", "cycles")
        energy = fig(b, "energy_end_to_end_pj", "energy_pj") / fig(r, "energy_end_to_end_pj", "energy_pj")
        pairs.append((r, speed, energy))
        cyc, bcyc = int(fig(r, "cycles_end_to_end", "cycles")), int(fig(b, "cycles_end_to_end", "cycles"))
        lines.append(f"| {r['workload']} | {r['design']} | {b['design']} | {cyc:,} | {bcyc:,} | {speed:.2f}x "
                     f"| {energy:.2f}x |")
    gm = [exp(sum(log(p[k]) for p in pairs) / len(pairs)) for k in (1, 2)]
    lines += [f"| **geometric mean** | | | | | **{gm[0]:.2f}x** | **{gm[1]:.2f}x** |", "",
              "Cycles end to end: the array layers (by the memory system's latency model with "
              "mapper.objective=latency or edp, else the mapper's roofline), plus the PPU passes; "
              "energy: the cost model's, PPU included. Higher is better."]
    path = sweep_dir / "comparison.md"
    write_text(path, "\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['workload']}\n{r['arch']}" for r, _, _ in pairs]
    f, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(pairs) + 1), 3.2))
    xs = range(len(pairs))
    ax.bar([x - 0.2 for x in xs], [p[1] for p in pairs], 0.4, label="speed-up")
    ax.bar([x + 0.2 for x in xs], [p[2] for p in pairs], 0.4, label="energy ratio")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylabel(f"x {', '.join(sorted({base[r['workload']]['arch'] for r, _, _ in pairs}))}")
    ax.legend(fontsize=8)
    tmp = sweep_dir / "comparison.tmp.png"
    f.savefig(tmp, metadata={"Software": None}, bbox_inches="tight")
    plt.close(f)
    tmp.replace(sweep_dir / "comparison.png")
    return path


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats in both coordinates (lower is better)."""
    front = []
    for i, (e, c) in enumerate(points):
        if not any((e2 <= e and c2 <= c) and (e2, c2) != (e, c) for e2, c2 in points):
            front.append(i)
    return front


def pareto_plot(table: list[dict], path: Path) -> Path:
    """Energy against latency, one marker per design (area as colour), and per workload the
    Pareto front (designs of different workloads do not compete) drawn over the points; the
    legend sits below the axes so it hides no point."""
    fig = pareto_figure(table, f"{path.parent.name}: {len(table)} designs")
    import matplotlib.pyplot as plt

    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    tmp.replace(path)
    return path


def pareto_figure(table: list[dict], title: str):
    """The figure of :func:`pareto_plot` (tests look at its artists)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    energy = [float(r["energy_pj"]) / 1e6 for r in table]
    cycles = [float(r["cycles"]) for r in table]
    area = [float(r["cells"] or r["register_bits"] or 0) for r in table]
    label = "Yosys cells" if all(r["cells"] for r in table) else "register bits"
    workloads = sorted({r["workload"] for r in table})
    fig, ax = plt.subplots(figsize=(7.5, 5.5 + 0.25 * len(workloads)), dpi=110)
    sc = ax.scatter(cycles, energy, c=area, cmap="viridis", s=60, edgecolors="black", linewidths=0.5, zorder=2)
    fig.colorbar(sc, ax=ax, label=f"area ({label})")
    colours = plt.get_cmap("tab10")
    for k, workload in enumerate(workloads):
        idx = [i for i, r in enumerate(table) if r["workload"] == workload]
        front = sorted((idx[j] for j in pareto_front([(energy[i], cycles[i]) for i in idx])),
                       key=lambda i: (cycles[i], energy[i]))
        ax.plot([cycles[i] for i in front], [energy[i] for i in front], "-o", color=colours(k % 10), linewidth=2,
                markersize=11, markerfacecolor="none", markeredgewidth=1.8, zorder=3,
                label=f"Pareto front, {workload} ({len(front)} of {len(idx)})")
    for r, x, y in zip(table, cycles, energy):
        ax.annotate(f"{r['arch']}/{r['workload']}" + (f" {r['mapper']}" if r["mapper"] else ""), (x, y),
                    fontsize=7, xytext=(4, 3), textcoords="offset points", zorder=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.margins(0.15)
    ax.set_xlabel("latency (cycles)")
    ax.set_ylabel("energy (uJ)")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=8, frameon=False,
              ncol=1 if len(workloads) < 4 else 2)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ sweep presets
RF_BYTES = (16, 32, 64, 128, 256, 512)
GLB_BYTES = (32768, 65536, 131072, 262144, 524288)


def memory_report(sweep_dir: Path) -> str:
    """Seed 001 §5.3: whole-network energy per RF size x global-buffer size, as a table and ``heatmap.png``.

    The thesis's qualitative result is checked: at 128 and 256 KB, every small RF
    (16-64 B) beats the 512 B RF, and the best small-RF configuration beats every 512 B one.
    """
    energy: dict[tuple[int, int], float] = {}
    for job in (json.loads(p.read_text()) for p in sorted((sweep_dir / "jobs").glob("*.json"))):
        if job["status"] != "ok":
            continue
        sizes = dict(o.split("=", 1) for o in job["overrides"] if "=" in o)
        rf, glb = sizes.get("arch.memory.0.size_bytes"), sizes.get("arch.memory.1.size_bytes")
        if rf and glb:
            energy[int(rf), int(glb)] = float(job["summary"]["energy_pj"]) / 1e6
    rfs = [r for r in RF_BYTES if any((r, g) in energy for g in GLB_BYTES)]
    glbs = [g for g in GLB_BYTES if any((r, g) in energy for r in RF_BYTES)]
    lines = ["whole-network energy (uJ): RF per PE (rows) x global buffer (columns)",
             f"{'RF':>6} " + " ".join(f"{g // 1024:>8} KB" for g in glbs)]
    for r in rfs:
        lines.append(f"{r:>4} B " + " ".join(f"{energy.get((r, g), float('nan')):>11.1f}" for g in glbs))
    small = [(r, g) for r in (16, 32, 64) for g in (131072, 262144) if (r, g) in energy]
    big = [(512, g) for g in glbs if (512, g) in energy]
    if small and big:
        same = all(energy[r, g] < energy[512, g] for r, g in small if (512, g) in energy)
        best = min(energy[k] for k in small) < min(energy[k] for k in big)
        lines.append(f"small RFs (16-64 B) with a 128-256 KB buffer beat the 512 B RF at the same buffer: "
                     f"{'yes' if same else 'NO'}; the best of them beats every 512 B configuration: "
                     f"{'yes' if best else 'NO'}")
    if energy:
        _heatmap(energy, rfs, glbs, sweep_dir / "heatmap.png")
    return "\n".join(lines)


def _heatmap(energy, rfs, glbs, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    grid = np.array([[energy.get((r, g), np.nan) for g in glbs] for r in rfs])
    fig, ax = plt.subplots(figsize=(6.5, 4.5), dpi=110)
    im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(len(glbs)), [f"{g // 1024} KB" for g in glbs])
    ax.set_yticks(range(len(rfs)), [f"{r} B" for r in rfs])
    for i in range(len(rfs)):
        for j in range(len(glbs)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=8, color="white")
    ax.set_xlabel("global buffer")
    ax.set_ylabel("register file per PE")
    ax.set_title("whole-network energy (uJ)")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, metadata={"Software": None})
    plt.close(fig)
    tmp.replace(path)


def memory2_report(sweep_dir: Path) -> str:
    """Seed 001 Fig. 5.11: two register-file levels per PE (inner x outer size) under a 256 KB buffer."""
    energy: dict[tuple[int, int], float] = {}
    for job in (json.loads(p.read_text()) for p in sorted((sweep_dir / "jobs").glob("*.json"))):
        sizes = dict(o.split("=", 1) for o in job["overrides"] if "=" in o)
        if job["status"] == "ok" and "arch.memory.0.size_bytes" in sizes and "arch.memory.1.size_bytes" in sizes:
            energy[int(sizes["arch.memory.0.size_bytes"]), int(sizes["arch.memory.1.size_bytes"])] = \
                float(job["summary"]["energy_pj"]) / 1e6
    inner = sorted({a for a, _ in energy})
    outer = sorted({b for _, b in energy})
    lines = ["whole-network energy (uJ): inner RF (rows) x outer RF (columns), 256 KB buffer",
             f"{'RF0':>6} " + " ".join(f"{b:>9} B" for b in outer)]
    lines += [f"{a:>4} B " + " ".join(f"{energy.get((a, b), float('nan')):>11.1f}" for b in outer) for a in inner]
    if energy:
        (a, b), e = min(energy.items(), key=lambda kv: kv[1])
        lines.append(f"best: {a} B + {b} B at {e:.1f} uJ")
    return "\n".join(lines)


#: The memory sweeps stop after the mapper and compare energy, which the back end's passes do
#: not change (they set the pipeline latency, i.e. a few cycles per tile): the cheapest
#: optimizer preset keeps each design near 4 s.
SWEEPS = {
    "memory": {
        "overrides": ["arch=interstellar_ck", "workload=alexnet", "workload.bits=16", "optimizer=delay_only",
                      "arch.memory.0.size_bytes=" + ",".join(map(str, RF_BYTES)),
                      "arch.memory.1.size_bytes=" + ",".join(map(str, GLB_BYTES))],
        "task": "map",
        "report": memory_report,
    },
    "memory2": {
        "overrides": ["arch=interstellar_ck2", "workload=alexnet", "workload.bits=16", "optimizer=delay_only",
                      "arch.memory.0.size_bytes=8,16,32", "arch.memory.1.size_bytes=64,128,256,512"],
        "task": "map",
        "report": memory2_report,
    },
}
