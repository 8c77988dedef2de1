"""``report`` stage: the key figures of every stage -> ``summary.json``, ``report.md`` and ``report.html``."""
from __future__ import annotations

from pathlib import Path

from lego_build.flow.atomic import read_json, write_json, write_text
from lego_build.flow.config import design_id
from lego_build.flow.schema import LegoConfig


def _load(design_dir: Path) -> dict:
    return {
        "analysis": read_json(design_dir / "analysis.json"),
        "mapping": read_json(design_dir / "mapping.json"),
        "adg": read_json(design_dir / "adg.json"),
        "passes": read_json(design_dir / "passes.json"),
        "sim": read_json(design_dir / "sim" / "result.json"),
    }


def summarize(cfg: LegoConfig, doc: dict) -> dict:
    totals = doc["mapping"]["totals"]
    final = doc["passes"]["passes"][-1]
    mapped = [e for e in doc["mapping"]["layers"] if e["status"] == "mapped"]
    array_cycles = sum(e["steps"] * e["count"] for e in mapped)
    fus = doc["adg"]["shape"][0] * doc["adg"]["shape"][1]
    sim = doc["sim"]
    return {
        "design": design_id(cfg),
        "arch": cfg.arch.name,
        "workload": cfg.workload.name,
        "mapper": cfg.mapper.name,
        "optimizer": cfg.optimizer.name,
        "target": cfg.target.name,
        "array": list(doc["adg"]["shape"]),
        "macs": doc["analysis"]["totals"]["macs"],
        "layers_mapped": totals["layers_mapped"],
        "layers_unmappable": totals["layers_unmappable"],
        "unmapped_ops": len(doc["analysis"]["unmapped"]),
        "energy_pj": totals["energy_pj"],
        "energy_by_level_pj": totals.get("energy_by_level_pj", {}),
        "energy_by_tensor_pj": totals.get("energy_by_tensor_pj", {}),
        "cycles": totals["cycles"],
        "utilization": round(totals["macs"] / (array_cycles * fus), 6) if array_cycles else 0.0,
        "register_bits": final["register_bits"],
        "pipeline_latency": final["latency"],
        "simulation": sim.get("status"),
        "simulated_tiles": [{k: t[k] for k in ("layer", "kind", "dataflow", "match", "cycles_simulated",
                                                "cycles_predicted")} for t in sim.get("tiles", [])],
        "cells": sim.get("synth", {}).get("cells"),
        "flip_flops": sim.get("synth", {}).get("flip_flops"),
        "transistors": sim.get("synth", {}).get("transistors"),
    }


def _dataflows(adg: dict) -> str:
    return ", ".join(f"{d['name']}: " + "|".join("".join(dim for dim, _ in axis) for axis in d["axes"])
                     for d in adg["dataflows"])


def _vectors(net: dict) -> str:
    return ", ".join(f"{tuple(v)}: {d}" for v, d in net["link_vectors"]) or "-"


def render_markdown(summary: dict, doc: dict) -> str:
    mapping, adg, sim = doc["mapping"], doc["adg"], doc["sim"]
    lines = [
        f"# {summary['design']}",
        "",
        f"{summary['arch']} {summary['array'][0]}x{summary['array'][1]} {adg['kernel']} array (dataflows "
        f"{_dataflows(adg)}) running {summary['workload']}: {summary['macs']:,} MACs; mapper "
        f"{summary['mapper']}, optimizer {summary['optimizer']}, target {summary['target']}.",
        "",
        f"* {summary['layers_mapped']} array layers mapped, {summary['layers_unmappable']} unmappable, "
        f"{summary['unmapped_ops']} operators without a unit",
        f"* energy {summary['energy_pj'] / 1e6:.3f} uJ, {summary['cycles']:,} cycles, "
        f"array utilization {summary['utilization']:.1%}",
        "* energy by level: " + ", ".join(f"{k} {v / 1e6:.3f} uJ" for k, v in summary["energy_by_level_pj"].items()),
        "* energy by tensor: " + ", ".join(f"{k} {v / 1e6:.3f} uJ" for k, v in summary["energy_by_tensor_pj"].items()),
        "",
        "## Layers",
        "",
        "| layer | op | x | status | MACs | cycles | energy (nJ) | util. |",
        "|---|---|---:|---|---:|---:|---:|---:|",
    ]
    for e in mapping["layers"]:
        if e["status"] == "mapped":
            lines.append(f"| {e['name']} | {e['op']} | {e['count']} | mapped | {e['macs']:,} | {e['cycles']:,} | "
                         f"{e['energy_pj'] / 1e3:.1f} | {e['utilization']:.0%} |")
        else:
            lines.append(f"| {e['name']} | {e['op']} | {e['count']} | {e['reason']} | | | | |")
    unmapped = doc["analysis"]["unmapped"]
    if unmapped:
        lines += ["", "Operators with no unit: " + ", ".join(f"{u['name']} ({u['op']})" for u in unmapped)]
    lines += [
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
          for p in doc["passes"]["passes"]],
        "",
        "## Simulation",
        "",
    ]
    if "synth" in sim:
        synth = sim["synth"]
        lines += [f"* Yosys (`synth -noabc`, banks black-boxed): {synth['cells']} cells, "
                  f"{synth['flip_flops']} flip-flops, "
                  f"{synth.get('transistors', '?')} transistors (`stat -tech cmos` estimate)", ""]
    if sim.get("status") == "skipped":
        lines.append(f"Skipped ({sim['reason']}).")
    else:
        lines += [
            f"* verdict: **{sim['status']}** on {len(sim['tiles'])} tiles, one Verilator build: {sim['outputs']} "
            f"outputs, {sim['mismatches']} mismatches (seed {sim['seed']}), lint {sim.get('lint', 'not run')}",
            "",
            "| layer | kind | dataflow | tile | outputs | mismatches | cycles simulated | cycles predicted |",
            "|---|---|---|---|---:|---:|---:|---:|",
            *[f"| {t['layer']} | {t['kind']} | {t['dataflow']} | {' '.join(f'{k}={v}' for k, v in t['tile'].items())} "
              f"| {t['outputs']} | {t['mismatches']} | {t['cycles_simulated']} | {t['cycles_predicted']} |"
              for t in sim["tiles"]],
        ]
    return "\n".join(lines) + "\n"


def run(cfg: LegoConfig, design_dir: Path) -> None:
    doc = _load(design_dir)
    summary = summarize(cfg, doc)
    write_json(design_dir / "summary.json", summary)
    write_text(design_dir / "report.md", render_markdown(summary, doc))
    from .html import render_html  # matplotlib: imported only when a report is written

    write_text(design_dir / "report.html", render_html(design_dir, cfg.arch.dram_bytes_per_cycle))
    print(f"report: {design_dir / 'report.md'}, report.html (simulation: {summary['simulation']})")
