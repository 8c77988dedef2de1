"""Sweeps: one record per design job, then ``summary.csv``, ``pareto.png`` and the sweep's report.

Every job of a ``lego-build -m`` sweep writes ``out/sweeps/<name>/jobs/<key>.json`` (its
overrides, status and the design's ``summary.json`` figures) as soon as its build ends;
the summary is rebuilt from all job records, so a sweep stopped half-way and run again
lists every design once. The figures are the designs' headline figures: cycles,
utilization and GOP/s from each design's best evidence (RTL, latency model or the
mapper's roofline: ``cycles_source``, :mod:`lego_build.report.evidence`).
``report.md`` and ``report.html`` put the table, the Pareto plot and the comparison
against the baseline on one page.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

from lego_build.runtime.atomic import write_json, write_text

COLUMNS = ("design", "arch", "workload", "mapper", "optimizer", "target", "status", "energy_pj", "cycles",
           "evidence", "cycles_source", "utilization", "gops", "mapper_cycles", "cycles_end_to_end",
           "energy_end_to_end_pj", "macs", "simulated_mac_share", "layers_mapped", "layers_unmappable",
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
        s = {**job["summary"], **(job["summary"].get("figures") or {})}  # a target's figures (cells, area, ...)
        row = {c: "" if s.get(c) is None else s[c] for c in COLUMNS}
        row.update(design=job["design"], status=job["status"], seconds=job["seconds"], error=job["error"],
                   overrides=" ".join(job["overrides"]), evidence=weakest_source(s),
                   simulated_mac_share=(s.get("coverage") or {}).get("mac_share", "")
                   if (s.get("coverage") or {}).get("scope") else "")
        out.append(row)
    return sorted(out, key=lambda r: (r["design"], r["overrides"]))


def weakest_source(summary: dict) -> str:
    """The least direct source among a design's headline cycles: ``rtl`` when every layer was
    measured, ``model`` or ``roofline`` when some were not ('' without figures)."""
    from lego_build.report.evidence import SOURCES

    by_source = summary.get("cycles_by_source") or {}
    return next((s for s in reversed(SOURCES) if s in by_source), "")


def write_summary(sweep_dir: Path) -> tuple[Path, Path | None]:
    """``summary.csv`` (one row per design job), ``pareto.png`` (energy vs cycles, area as colour),
    the comparison against a baseline when there is one, and the sweep's ``report.md`` and ``report.html``."""
    table = rows(sweep_dir)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    csv_path = sweep_dir / "summary.csv"
    write_text(csv_path, buf.getvalue())
    done = [r for r in table if r["status"] == "ok" and r["energy_pj"] != "" and r["cycles"]]
    plot = None
    if done:
        compare_to_baseline(done, sweep_dir)
        plot = pareto_plot(done, sweep_dir / "pareto.png")
    write_report(sweep_dir, table, done)
    return csv_path, plot


#: archs that are baselines: a sweep that has one and other archs on the same workload gets
#: ``comparison.md`` / ``comparison.png`` (seed 004 §6.2: LEGO-MNICOC against a Gemmini-like design)
BASELINES = ("gemmini_like",)
#: how the tables name :func:`weakest_source`
EVIDENCE = {"rtl": "RTL", "model": "latency model", "roofline": "mapper's roofline", "": "-"}


def comparison(table: list[dict]) -> tuple[list[str], list[tuple[dict, float, float]], dict]:
    """Per workload, every other design's end-to-end speed-up and energy ratio against the
    baseline's (higher is better): the Markdown lines, the (design, speed-up, energy ratio)
    pairs and the baseline per workload; no pairs without a baseline and another design."""
    from math import exp, log

    base = {r["workload"]: r for r in table if r["arch"] in BASELINES}
    others = [r for r in table if r["arch"] not in BASELINES and r["workload"] in base]
    if not others:
        return [], [], base

    def fig(r, key, fallback):
        return float(r.get(key) or r[fallback])

    lines = ["| workload | design | baseline | cycles | baseline cycles | speed-up | energy ratio | evidence |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    pairs = []
    for r in sorted(others, key=lambda r: (r["workload"], r["design"])):
        b = base[r["workload"]]
        speed = fig(b, "cycles_end_to_end", "cycles") / fig(r, "cycles_end_to_end", "cycles")
        energy = fig(b, "energy_end_to_end_pj", "energy_pj") / fig(r, "energy_end_to_end_pj", "energy_pj")
        pairs.append((r, speed, energy))
        cyc, bcyc = int(fig(r, "cycles_end_to_end", "cycles")), int(fig(b, "cycles_end_to_end", "cycles"))
        lines.append(f"| {r['workload']} | {r['design']} | {b['design']} | {cyc:,} | {bcyc:,} | {speed:.2f}x "
                     f"| {energy:.2f}x | {EVIDENCE[r.get('evidence', '')]} / {EVIDENCE[b.get('evidence', '')]} |")
    gm = [exp(sum(log(p[k]) for p in pairs) / len(pairs)) for k in (1, 2)]
    lines += [f"| **geometric mean** | | | | | **{gm[0]:.2f}x** | **{gm[1]:.2f}x** | |", "",
              "Cycles end to end: the array layers' headline cycles (each layer measured in RTL where it ran "
              "whole, else the memory system's latency model, else the mapper's roofline; evidence: the "
              "least direct source in the design / the baseline), plus the PPU passes; energy: the cost "
              "model's, PPU included. Higher is better."]
    return lines, pairs, base


def compare_to_baseline(table: list[dict], sweep_dir: Path) -> Path | None:
    """``comparison.md`` and ``comparison.png`` (:func:`comparison`), when the sweep has a baseline
    and another design on one of its workloads."""
    lines, pairs, base = comparison(table)
    if not pairs:
        return None
    path = sweep_dir / "comparison.md"
    write_text(path, "\n".join(["# Against the baseline", "", *lines]) + "\n")
    import matplotlib.pyplot as plt

    f = comparison_figure(pairs, base)
    tmp = sweep_dir / "comparison.tmp.png"
    f.savefig(tmp, metadata={"Software": None}, bbox_inches="tight")
    plt.close(f)
    tmp.replace(sweep_dir / "comparison.png")
    return path


def comparison_figure(pairs: list[tuple[dict, float, float]], base: dict):
    """Speed-up and energy ratio per design against its workload's baseline, as bars."""
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
    return f


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats in both coordinates (lower is better)."""
    front = []
    for i, (e, c) in enumerate(points):
        if not any((e2 <= e and c2 <= c) and (e2, c2) != (e, c) for e2, c2 in points):
            front.append(i)
    return front


def pareto_plot(table: list[dict], path: Path) -> Path:
    """Energy against latency, one numbered marker per design (area as colour, the key below),
    and per workload the Pareto front (designs of different workloads do not compete) drawn
    over the points; the legend and the key sit below the axes so they hide no point."""
    fig = pareto_figure(table, f"{path.parent.name}: {_n(len(table), 'design')}")
    import matplotlib.pyplot as plt

    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    tmp.replace(path)
    return path


def design_label(r: dict) -> str:
    """How the Pareto key and the sweep report name a design: arch/workload, mapper, evidence."""
    return (f"{r['arch']}/{r['workload']}" + (f" {r['mapper']}" if r.get("mapper") else "")
            + (f" ({EVIDENCE[r['evidence']]})" if r.get("evidence") else ""))


#: where a marker's number may go, nearest first: offset (points), horizontal and vertical alignment;
#: each tried at the radii of ``_RINGS`` (the outer ones draw a leader line to the marker)
_SPOTS = (((7, 0), "left", "center"), ((-7, 0), "right", "center"), ((0, 7), "center", "bottom"),
          ((0, -7), "center", "top"), ((6, 6), "left", "bottom"), ((-6, 6), "right", "bottom"),
          ((6, -6), "left", "top"), ((-6, -6), "right", "top"))
_RINGS = (1.0, 2.0, 3.2)
#: the radius (points) around a marker no label may cover (the front's rings are 11 points wide)
_MARK_PT = 5.5


def place_labels(fig, ax, xy: list[tuple[float, float]], labels: list[str]) -> list:
    """Annotate each data point with its label at the nearest spot (:data:`_SPOTS`) where the
    text covers no other label and no marker and lies inside the axes, so that neither the
    colour bar nor the figure's edge clips it; a point with no free spot gets the first spot
    inside the axes. Returns the annotations."""
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    r = _MARK_PT * fig.dpi / 72
    marks = [Bbox.from_bounds(x - r, y - r, 2 * r, 2 * r) for x, y in ax.transData.transform(xy)]
    placed: list = []
    out = []
    for (x, y), text in zip(xy, labels):
        choice = None
        for ring in _RINGS:
            for (dx, dy), ha, va in _SPOTS:
                ann = ax.annotate(text, (x, y), xytext=(dx * ring, dy * ring), textcoords="offset points",
                                  ha=ha, va=va, fontsize=8, fontweight="bold", zorder=5)
                box = ann.get_window_extent(renderer).padded(1)
                fits = inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
                free = fits and not any(box.overlaps(b) for b in placed + marks)
                ann.remove()
                if free or (choice is None and fits):
                    choice = (ring, dx, dy, ha, va, box)
                if free:
                    break
            if choice is not None and not any(choice[5].overlaps(b) for b in placed + marks):
                break
        ring, dx, dy, ha, va, box = choice or (1.0, *_SPOTS[0][0], _SPOTS[0][1], _SPOTS[0][2], None)
        leader = {"arrowstyle": "-", "color": "#555555", "lw": 0.6, "shrinkA": 0, "shrinkB": 4} if ring > 1 else None
        out.append(ax.annotate(text, (x, y), xytext=(dx * ring, dy * ring), textcoords="offset points", ha=ha,
                               va=va, fontsize=8, fontweight="bold", zorder=5, arrowprops=leader))
        if box is not None:
            placed.append(box)
    return out


def pareto_figure(table: list[dict], title: str):
    """The figure of :func:`pareto_plot` (tests look at its artists): markers numbered 1.. in
    ``table`` order, the numbers placed by :func:`place_labels`, the key as the figure's last text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    energy = [float(r["energy_pj"]) / 1e6 for r in table]
    cycles = [float(r["cycles"]) for r in table]
    area = [float(r["cells"] or r["register_bits"] or 0) for r in table]
    label = "Yosys cells" if all(r["cells"] for r in table) else "register bits"
    workloads = sorted({r["workload"] for r in table})
    keys = [f"{i:>2}  {design_label(r)}" for i, r in enumerate(table, 1)]
    cols = 1 if len(keys) <= 8 else 2
    per = -(-len(keys) // cols)
    fig, ax = plt.subplots(figsize=(8.0, 5.5 + 0.25 * len(workloads)), dpi=110)
    sc = ax.scatter(cycles, energy, c=area, cmap="viridis", s=60, edgecolors="black", linewidths=0.5, zorder=2)
    fig.colorbar(sc, ax=ax, label=f"area ({label})", pad=0.02)
    colours = plt.get_cmap("tab10")
    for k, workload in enumerate(workloads):
        idx = [i for i, r in enumerate(table) if r["workload"] == workload]
        front = sorted((idx[j] for j in pareto_front([(energy[i], cycles[i]) for i in idx])),
                       key=lambda i: (cycles[i], energy[i]))
        ax.plot([cycles[i] for i in front], [energy[i] for i in front], "-o", color=colours(k % 10), linewidth=2,
                markersize=11, markerfacecolor="none", markeredgewidth=1.8, zorder=3,
                label=f"Pareto front, {workload} ({len(front)} of {len(idx)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.margins(0.15)
    ax.set_xlabel("latency (cycles: each design's best evidence, in the key)")
    ax.set_ylabel("energy (uJ, cost model)")
    ax.set_title(title)
    legend = ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=8, frameon=False,
                       ncol=1 if len(workloads) < 4 else 2)
    fig.tight_layout()
    place_labels(fig, ax, list(zip(cycles, energy)), [str(i) for i in range(1, len(table) + 1)])
    renderer = fig.canvas.get_renderer()
    below = fig.transFigure.inverted().transform(legend.get_window_extent(renderer))[0][1]
    width = max(len(k) for k in keys) + 4
    lines = ["".join(f"{keys[c * per + i]:<{width}}" for c in range(cols) if c * per + i < len(keys)).rstrip()
             for i in range(per)]
    fig.text(0.02, below - 0.02, "\n".join(lines), va="top", ha="left", family="monospace", fontsize=7.5)
    return fig


def _n(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def write_report(sweep_dir: Path, table: list[dict], done: list[dict]) -> tuple[Path, Path]:
    """The sweep's ``report.md`` and self-contained ``report.html``: every design's headline
    figures and their evidence (numbered as in the Pareto plot), the Pareto plot and the
    comparison against the baseline where there is one."""
    from html import escape

    from lego_build.report import plots
    from lego_build.report.evidence import fmt_share
    from lego_build.report.html import CSS

    number = {id(r): i for i, r in enumerate(done, 1)}
    head = ["#", "design", "mapper", "status", "cycles", "cycles from", "utilization", "GOP/s", "energy (uJ)",
            "mapper's roofline", "simulated MACs", "simulation"]

    def cells(r: dict) -> list[str]:
        ok = r["status"] == "ok" and r["cycles"] != ""
        def num(k, f):
            return (f.format(float(r[k])) if ok and r.get(k) not in ("", None) else "-")
        return [str(number.get(id(r), "")), r["design"], r["mapper"], r["status"],
                num("cycles", "{:,.0f}"), r["cycles_source"] or "-" if ok else "-", num("utilization", "{:.1%}"),
                num("gops", "{:,.2f}"), f"{float(r['energy_pj']) / 1e6:,.3f}" if ok and r["energy_pj"] != "" else "-",
                num("mapper_cycles", "{:,.0f}"),
                fmt_share(float(r["simulated_mac_share"])) if ok and r["simulated_mac_share"] != "" else "-",
                r["simulation"] or "-"]

    numeric = {0, 4, 6, 7, 8, 9, 10}
    rows = [cells(r) for r in table]
    failed = [r for r in table if r["status"] != "ok"]
    comp, pairs, base = comparison(done)
    note = ("Cycles, utilization (MACs / (cycles x FUs)) and GOP/s (2 ops per MAC at arch.clock_mhz) come from "
            "each layer's best evidence: measured in RTL where it ran whole (target.scope=layers or network), "
            "else the memory system's latency model, else the mapper's roofline (its per-tile figure, without the "
            "tile loads and stores the hardware waits for; also shown on its own). Energy: the cost model's.")
    name = sweep_dir.name
    md = [f"# Sweep {name}", "", f"{_n(len(table), 'design job')}: {len(done)} with figures, {len(failed)} not ok.", "",
          note, "", "| " + " | ".join(head) + " |",
          "|" + "".join("---:|" if i in numeric else "---|" for i in range(len(head))),
          *["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]]
    if failed:
        md += ["", "Not ok: " + "; ".join(f"{r['design']} ({r['status']}: {r['error'] or '-'})" for r in failed)]
    if done:
        md += ["", "## Pareto plot", "", "![energy against latency](pareto.png)", "",
               "Markers numbered as in the table; area as colour; per workload the Pareto front."]
    if pairs:
        md += ["", "## Against the baseline", "", *comp, "", "![speed-up and energy ratio](comparison.png)"]
    md_path = sweep_dir / "report.md"
    write_text(md_path, "\n".join(md) + "\n")

    def e(v):
        return (escape(str(v), quote=True))
    ths = "".join(f'<th class="n">{e(h)}</th>' if i in numeric else f"<th>{e(h)}</th>" for i, h in enumerate(head))
    trs = "\n".join("<tr>" + "".join(f'<td class="n">{e(c)}</td>' if i in numeric else f"<td>{e(c)}</td>"
                                      for i, c in enumerate(row)) + "</tr>" for row in rows)
    body = [f'<section id="designs"><h2>Designs</h2><p class="note">{e(note)}</p>'
            f'<div class="tbl"><table><thead><tr>{ths}</tr></thead><tbody>\n{trs}\n</tbody></table></div>']
    if failed:
        body.append('<p class="note">Not ok: ' + "; ".join(f"{e(r['design'])} ({e(r['status'])}: "
                                                          f"{e(r['error'] or '-')})" for r in failed) + "</p>")
    body.append("</section>")
    import matplotlib.pyplot as plt

    if done:
        fig = pareto_figure(done, f"{name}: {_n(len(done), 'design')}")
        svg = plots.to_svg(fig, "pareto", tight=True)
        body.append(f'<section id="pareto"><h2>Pareto plot</h2><figure>\n{svg}</figure></section>')
        plt.close(fig)
    if pairs:
        text = [ln for ln in comp if ln.startswith("|")]
        cmp_head = [c.strip() for c in text[0].strip("|").split("|")]
        cmp_rows = "\n".join("<tr>" + "".join(f"<td>{e(c.strip().strip('*'))}</td>"
                                               for c in ln.strip("|").split("|")) + "</tr>" for ln in text[2:])
        fig = comparison_figure(pairs, base)
        body.append('<section id="comparison"><h2>Against the baseline</h2><div class="tbl"><table><thead><tr>'
                    + "".join(f"<th>{e(h)}</th>" for h in cmp_head) + f"</tr></thead><tbody>\n{cmp_rows}\n"
                    f'</tbody></table></div><p class="note">{e(comp[-1])}</p><figure>\n'
                    f'{plots.to_svg(fig, "comparison")}</figure></section>')
        plt.close(fig)
    page = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(name)} \u2014 lego_build sweep</title>", f"<style>\n{CSS}\n</style>", "</head>", "<body>",
            f'<header><div class="wrap"><h1>Sweep {e(name)}</h1><p>{_n(len(table), "design job")}, {len(done)} with '
            "figures</p></div></header>", "<main>", *body, "</main>",
            "<footer>Generated by lego_build from the sweep's job records (jobs/*.json).</footer>", "</body>",
            "</html>", ""]
    html_path = sweep_dir / "report.html"
    write_text(html_path, "\n".join(page))
    return md_path, html_path
