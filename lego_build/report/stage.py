"""``report`` stage: the key figures of every stage -> ``summary.json`` and ``report.md``."""
from __future__ import annotations

from pathlib import Path

from lego_build.flow.atomic import read_json, write_json, write_text
from lego_build.flow.config import design_id
from lego_build.flow.schema import LegoConfig


def summarize(cfg: LegoConfig, design_dir: Path) -> dict:
    analysis = read_json(design_dir / "analysis.json")
    mapping = read_json(design_dir / "mapping.json")
    adg = read_json(design_dir / "adg.json")
    passes = read_json(design_dir / "passes.json")
    sim = read_json(design_dir / "sim" / "result.json")
    layer, mapped = analysis["layers"][0], mapping["layers"][0]
    final = passes["passes"][-1]
    return {
        "design": design_id(cfg),
        "arch": cfg.arch.name,
        "workload": cfg.workload.name,
        "mapper": cfg.mapper.name,
        "optimizer": cfg.optimizer.name,
        "target": cfg.target.name,
        "array": list(adg["shape"]),
        "macs": layer["macs"],
        "energy_pj": mapped["energy_pj"],
        "cycles_model": mapped["cycles"],
        "utilization": mapped["utilization"],
        "register_bits": final["register_bits"],
        "pipeline_latency": final["latency"],
        "simulation": sim.get("status"),
        "cycles_simulated": sim.get("cycles_simulated"),
        "cycles_predicted": sim.get("cycles_predicted"),
    }


def _vectors(net: dict) -> str:
    return ", ".join(f"{tuple(v)}: {d}" for v, d in net["link_vectors"]) or "-"


def render_markdown(summary: dict, cfg: LegoConfig, design_dir: Path) -> str:
    mapping = read_json(design_dir / "mapping.json")["layers"][0]
    passes = read_json(design_dir / "passes.json")["passes"]
    adg = read_json(design_dir / "adg.json")
    sim = read_json(design_dir / "sim" / "result.json")
    loops = " > ".join(f"{lp['dim']}:{lp['bound']}" for lp in mapping["mapping"]["temporal"])
    spatial = ", ".join(f"{s['dim']} x{s['extent']}" for s in mapping["mapping"]["spatial"])
    lines = [
        f"# {summary['design']}",
        "",
        f"{summary['arch']} {summary['array'][0]}x{summary['array'][1]} array running "
        f"{summary['workload']} ({summary['macs']} MACs); mapper {summary['mapper']}, "
        f"optimizer {summary['optimizer']}, target {summary['target']}.",
        "",
        "## Mapping",
        "",
        f"* spatial: {spatial}; temporal loops (outer to inner): {loops}",
        f"* energy {mapping['energy_pj'] / 1e3:.3f} nJ, model cycles {mapping['cycles']}, "
        f"utilization {mapping['utilization']:.1%}",
        "",
        "| energy part | pJ |",
        "|---|---:|",
        *[f"| {k} | {v:.1f} |" for k, v in sorted(mapping["energy_breakdown_pj"].items())],
        "",
        "## Interconnections (ADG)",
        "",
        "| tensor | link vectors (Δs: delay) | links | data nodes |",
        "|---|---|---:|---:|",
        *[f"| {n['tensor']} | {_vectors(n)} | {len(n['links'])} | {len(n['ports'])} |" for n in adg["nets"]],
        "",
        "## Back-end passes",
        "",
        "| pass | register bits | multipliers | adders | buffer ports |",
        "|---|---:|---:|---:|---:|",
        *[f"| {p['pass']} | {p['register_bits']} | {p['multipliers']} | {p['adders']} | {p['buffer_ports']} |"
          for p in passes],
        "",
        "## Simulation",
        "",
    ]
    if sim.get("status") == "skipped":
        lines.append(f"Skipped ({sim['reason']}).")
    else:
        lines += [
            f"* verdict: **{sim['status']}**: {sim['outputs']} outputs, {sim['mismatches']} mismatches "
            f"(seed {sim['seed']}), lint {sim.get('lint', 'not run')}",
            f"* cycles: simulated {sim['cycles_simulated']}, predicted {sim['cycles_predicted']}",
        ]
    return "\n".join(lines) + "\n"


def run(cfg: LegoConfig, design_dir: Path) -> None:
    summary = summarize(cfg, design_dir)
    write_json(design_dir / "summary.json", summary)
    write_text(design_dir / "report.md", render_markdown(summary, cfg, design_dir))
    print(f"report: {design_dir / 'report.md'} (simulation: {summary['simulation']})")
