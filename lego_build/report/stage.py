"""``report`` stage: the key figures of every stage -> ``summary.json``, ``report.md`` and ``report.html``."""
from __future__ import annotations

from pathlib import Path

from lego_build.config.schema import LegoConfig
from lego_build.ir.artifacts import Summary
from lego_build.report import evidence
from lego_build.report.summary import FILES, products, summarize
from lego_build.runtime.artifacts import json_object, read_artifact


def _ppu_ops(layer: dict) -> str:
    """The operators the PPU applied to a whole layer's results on their way to memory."""
    return " → ".join((layer.get("ppu") or {}).get("applied", [])) or "-"


def _lint(sim: dict) -> str:
    return (sim.get("products") or {}).get("lint", "not run")


def _load(design_dir: Path, inputs=None) -> dict:
    """The typed artifacts (the runner's ``inputs``, else read from ``design_dir``: format versions
    and keys checked), as the plain JSON objects the tables are written against."""
    return {key: json_object(name, inputs[name] if inputs is not None else read_artifact(design_dir, name))
            for key, name in FILES.items()}


def headline_lines(summary: dict) -> list[str]:
    """The headline bullets of ``report.md``: cycles, utilization and throughput with their source,
    the mapper's roofline beside them, energy (the cost model's) and the simulated coverage."""
    covers = ("all layers" if not summary["layers_unmappable"] else
              f"mapped layers only, {summary['unmappable_mac_share']:.1%} of the MACs are in unmappable layers")
    rate = (f"{summary['gops']:,.2f} GOP/s at {summary['clock_mhz']:g} MHz ({summary['clock_source']})"
            f"{evidence.at_1ghz(summary)}"
            if summary.get("gops") is not None else f"{summary['ops_per_cycle']:,.2f} ops per cycle (no clock)")
    lines = [f"* cycles **{summary['cycles']:,}** ({summary['cycles_source']}), array utilization "
             f"**{summary['utilization']:.1%}** (MACs / (cycles x {summary['array'][0] * summary['array'][1]} FUs)), "
             f"{rate} (2 ops per MAC): {covers}"]
    if summary.get("mapper_gap") is not None:
        lines.append(f"* the mapper's roofline: {summary['mapper_cycles']:,} cycles, "
                     f"{summary['mapper_utilization']:.1%} utilization (its per-tile figure, without the tile loads "
                     f"and stores the hardware waits for): the cycles above are {summary['mapper_gap']:.2f}x it")
    lines += [f"* energy {summary['energy_pj'] / 1e6:.3f} uJ ({summary['energy_source']}; "
              f"{summary['pj_per_mac']:.2f} pJ per mapped MAC)",
              f"* simulated: {evidence.coverage_text(summary['coverage'])}"]
    return lines


def layer_lines(doc: dict, summary: dict) -> list[str]:
    """The ``Layers`` table: per layer its best-evidence cycles and their source, the mapper's roofline."""
    fus = summary["array"][0] * summary["array"][1]
    best = {r["name"]: r for r in evidence.layer_evidence(doc["mapping"], doc["sim"], fus)}
    lines = ["| layer | op | x | status | MACs | cycles | source | util. | mapper's roofline | energy (nJ) | gap |",
             "|---|---|---:|---|---:|---:|---|---:|---:|---:|---:|"]
    for e in doc["mapping"]["layers"]:
        if e["status"] == "mapped":
            b = best[e["name"]]
            gap = f"{e['gap']:.1%}" if "gap" in e else "-"
            lines.append(f"| {e['name']} | {e['op']} | {e['count']} | mapped | {e['macs']:,} | {b['cycles']:,} | "
                         f"{evidence.SOURCE_LABELS[b['source']]} | {b['utilization']:.0%} | {e['cycles']:,} | "
                         f"{e['energy_pj'] / 1e3:.1f} | {gap} |")
        else:
            lines.append(f"| {e['name']} | {e['op']} | {e['count']} | {e['reason']} | | | | | | | |")
    return lines


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
        *headline_lines(summary),
        *([f"* mapping search: lower bound {mapping['totals']['bound']['energy_pj'] / 1e6:.3f} uJ, "
           f"{mapping['totals']['bound']['cycles']:,} cycles: optimality gap {mapping['totals']['gap']:.1%} "
           f"({mapping.get('objective', '?')}; lego_build.mapping.bounds)"] if "gap" in mapping["totals"] else []),
        "* energy by level: " + ", ".join(f"{k} {v / 1e6:.3f} uJ" for k, v in summary["energy_by_level_pj"].items()),
        "* energy by tensor: " + ", ".join(f"{k} {v / 1e6:.3f} uJ" for k, v in summary["energy_by_tensor_pj"].items()),
        f"* FU {summary['fu']['name']}: {summary['fu']['doc']}; operands "
        + ", ".join(f"{t} {b}" for t, b in summary["fu"]["operand_bits"].items())
        + f" bits, accumulated in {adg['acc_bits']} bits"
        + ("; the simulation's golden model sums the FU's own products (its FU-language reference)"
           if summary["fu"]["expression"] else ""),
        *_overflow_lines(summary),
        "",
        "## Layers",
        "",
        "Cycles per instance (x: repeats) from the best evidence: measured in RTL where the layer ran whole, "
        "else the memory system's latency model, else the mapper's roofline (shown beside: its per-tile figure, "
        "without the tile loads and stores the hardware waits for). Energy: the cost model's.",
        "",
        *layer_lines(doc, summary),
    ]
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
    for product, value in products(sim):  # what the target adds, as it declares (lego_build.targets)
        lines += product.lines(value)
    if sim.get("status") == "skipped":
        lines.append(f"Skipped ({sim['reason']}).")
    elif sim.get("layers"):
        net, mem = sim["network"], sim["memory"]
        lines += [
            f"* verdict: **{sim['status']}** on {net['layers']} whole layers through the memory system "
            f"(scope {sim['scope']}; AXI {mem['bus_bits']} bit, DRAM {mem['dram_bytes_per_cycle']:g} B/cycle, "
            f"{mem['dram_latency_cycles']} cycles latency): {sim['outputs']} outputs, {sim['mismatches']} mismatches "
            f"against exact arithmetic (data {', '.join(sim['data'])}; seed {sim['seed']}), "
            f"lint {_lint(sim)}",
            f"* cycles: {net['cycles']} measured in RTL, {net['cycles_predicted']} predicted by the latency model "
            f"(error {net['error']:+.1%}, worst layer {net['max_layer_error']:.1%}; one instance of each layer); "
            f"the array waited {net['load_wait']} cycles for loads and {net['store_wait']} for stores",
            f"* coverage: {evidence.coverage_text(summary['coverage'])}",
            "",
            "| layer | kind | dataflow | PPU | tiles | outputs | mismatches | cycles measured | predicted | error "
            "| mapper | load wait | store wait | KB read | KB written | utilization |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            *[f"| {r['layer']} | {r['kind']} | {r['dataflow']} | {_ppu_ops(r)} | {r['tiles']} | {r['outputs']} "
              f"| {r['mismatches']} "
              f"| {r['cycles']} | {r['cycles_predicted']} | {r['error']:+.1%} | {r['cycles_mapper']:.0f} "
              f"| {r['load_wait']} | {r['store_wait']} | {r['bytes_read'] / 1024:.1f} "
              f"| {r['bytes_written'] / 1024:.1f} "
              f"| {r['utilization']:.1%} |" for r in sim["layers"]],
        ]
    else:
        lines += [
            f"* verdict: **{sim['status']}** on {len(sim['tiles'])} tiles, one Verilator build: {sim['outputs']} "
            f"outputs, {sim['mismatches']} mismatches against exact arithmetic (data: "
            f"{', '.join(sim.get('data', ['random']))}; seed {sim['seed']}), lint {_lint(sim)}",
            f"* coverage: {evidence.coverage_text(summary['coverage'])}; the headline cycles are not from these "
            "tiles (target.scope=layers or network runs whole layers in RTL)",
            "",
            "| layer | kind | dataflow | tile | offset | outputs | mismatches | cycles simulated | cycles predicted |",
            "|---|---|---|---|---|---:|---:|---:|---:|",
            *[f"| {t['layer']} | {t['kind']} | {t['dataflow']} | {' '.join(f'{k}={v}' for k, v in t['tile'].items())} "
              f"| {tile_offset(t)} | {t['outputs']} | {t['mismatches']} | {t['cycles_simulated']} "
              f"| {t['cycles_predicted']} |" for t in sim["tiles"]],
        ]
    return "\n".join(lines) + "\n"


def tile_offset(tile: dict) -> str:
    """Where a simulated tile starts in its layer: the non-zero iteration offsets, or ``origin``."""
    offset = {k: v for k, v in (tile.get("offset") or {}).items() if v}
    return " ".join(f"{k}+{v}" for k, v in offset.items()) or "origin"


def _overflow_lines(summary: dict) -> list[str]:
    acc = summary.get("accumulator") or {}
    if acc.get("overflow") != "wrap":
        return []
    wraps = acc.get("wrapping_layers") or []
    if not wraps:
        return [f"* accumulators: {acc['bits']} bits, wrap-around accepted (arch.overflow=wrap); no layer can reach it"]
    worst = max(wraps, key=lambda w: w["bits_needed"])
    return [f"* **accumulators wrap on purpose** (arch.overflow=wrap): {len(wraps)} layer(s) can exceed "
            f"{acc['bits']} bits (up to {worst['bits_needed']} needed, {worst['layer']}); their outputs are "
            "checked against wrapped arithmetic"]


def run(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    doc = _load(design_dir, inputs)
    summary = summarize(cfg, doc, design_dir)
    from lego_build.report.html import render_html  # matplotlib: imported only when a report is written

    typed = Summary(**summary)
    html = render_html(design_dir, cfg.arch.memsys.dram_bytes_per_cycle, json_object("summary.json", typed))
    print(f"report: {design_dir / 'report.md'}, report.html (simulation: {summary['simulation']})")
    return {"summary.json": typed, "report.md": render_markdown(summary, doc), "report.html": html}
