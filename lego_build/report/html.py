"""Self-contained HTML report of one design directory: :func:`render_html`.

One HTML5 page with inline CSS and inline SVG plots (:mod:`lego_build.report.plots`):
no scripts, no external URLs, every string from the JSON files escaped. The same
inputs give byte-identical output.
"""
from __future__ import annotations

import json
from math import prod
from pathlib import Path

from lego_build.report import evidence, plots
from lego_build.report.html_format import (
    CSS,
    SECTIONS,
    card_html,
    esc,
    figure_html,
    fmt_energy,
    fmt_int,
    fmt_mark,
    fmt_pct,
    fmt_share,
    fmt_si,
    row_html,
    section_html,
    table_html,
)
from lego_build.report.summary import design_config, products, summarize

# ---------------------------------------------------------------- data

def _read(path: Path):
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def load(design_dir: Path) -> dict:
    """The design's JSON files (``None`` for ``passes``, ``sim`` or ``summary`` when absent)."""
    d = Path(design_dir)
    doc = {
        "analysis": _read(d / "analysis.json"),
        "mapping": _read(d / "mapping.json"),
        "adg": _read(d / "adg.json"),
        "passes": _read(d / "passes.json"),
        "sim": _read(d / "sim" / "result.json"),
        "summary": _read(d / "summary.json"),
    }
    for key in ("analysis", "mapping", "adg"):
        if doc[key] is None:
            raise FileNotFoundError(f"{d / (key + '.json')}: needed for the HTML report")
    return doc


def _ordered_layers(mapping: dict, analysis: dict) -> list[dict]:
    """``mapping.json`` layers in network (``analysis.json``) order."""
    pos = {a["name"]: i for i, a in enumerate(analysis.get("layers", []))}
    layers = mapping.get("layers", [])
    return [e for _, _, e in sorted((pos.get(e["name"], len(pos)), i, e) for i, e in enumerate(layers))]


def headline(design_dir: Path, doc: dict) -> dict:
    """``summary.json``, or the same key figures from the other files and the design's
    ``config.yaml`` when it is absent (:func:`lego_build.report.summary.summarize`)."""
    if doc.get("summary"):
        return dict(doc["summary"])
    cfg = design_config(design_dir)
    if cfg is None:
        raise FileNotFoundError(f"{Path(design_dir) / 'config.yaml'}: needed for the HTML report without summary.json")
    return summarize(cfg, doc, Path(design_dir), Path(design_dir).name)


def evidenced(layers: list[dict], doc: dict) -> list[dict]:
    """The mapped ``layers`` with ``cycles`` and ``utilization`` from the best evidence
    (:func:`lego_build.report.evidence.layer_evidence`), their ``source``, and the mapper's
    figures as ``cycles_mapper`` and ``utilization_mapper``."""
    fus = prod(doc["adg"]["shape"])
    best = {r["name"]: r for r in evidence.layer_evidence(doc["mapping"], doc.get("sim"), fus)}
    return [{**e, "cycles": best[e["name"]]["cycles"], "utilization": best[e["name"]]["utilization"],
             "source": best[e["name"]]["source"], "cycles_mapper": e.get("cycles"),
             "utilization_mapper": e.get("utilization")} if e["name"] in best else e for e in layers]


# ---------------------------------------------------------------- sections

def _summary(h: dict, doc: dict) -> str:
    analysis, adg, mapping = doc["analysis"], doc["adg"], doc["mapping"]
    units: dict[str, int] = {}
    for a in analysis.get("layers", []):
        units[a.get("unit", "?")] = units.get(a.get("unit", "?"), 0) + 1
    rows, cols = adg["shape"]
    status = h.get("simulation") or "unknown"
    badge = status if status in ("pass", "fail", "skipped") else "unknown"
    macs, mapped_macs = h.get("macs") or 0, h.get("macs_mapped", h.get("macs")) or 0
    share = 1 - mapped_macs / macs if macs else 0.0
    scope = (f'<span class="scope">mapped layers only: {fmt_pct(share)} of the MACs are in unmappable layers</span>'
             if h.get("layers_unmappable") else '<span class="scope">all layers</span>')
    source = esc(h.get("cycles_source", "?"))
    bound = (f"; the mapper's roofline: {fmt_int(h.get('mapper_cycles'))} cycles (these are "
             f"{h['mapper_gap']:.2f}x it)" if h.get("mapper_gap") is not None else "")
    rate = (f"{h['gops']:,.2f} GOP/s" if h.get("gops") is not None else f"{h.get('ops_per_cycle', 0):,.2f} ops/cycle")
    clock_of = esc(h.get("clock_source", "arch.clock_mhz") + evidence.at_1ghz(h))
    rate_sub = (f"at {h['clock_mhz']:g} MHz ({clock_of}), 2 ops per MAC; "
                if h.get("gops") is not None
                else "per cycle (no clock known), 2 ops per MAC; ")
    bound_util = (f"; mapper's roofline {esc(fmt_pct(h.get('mapper_utilization')))}"
                  if h.get("mapper_utilization") is not None else "")
    cards = [
        card_html("Latency", f"{fmt_int(h.get('cycles'))}", f"cycles, {source}{bound}; " + scope),
        card_html("Utilization", esc(fmt_pct(h.get("utilization"))),
              f"MACs / (cycles \u00d7 {rows}x{cols} FUs), {source}{bound_util}"),
        card_html("Throughput", esc(rate), rate_sub + source),
        card_html("Energy", esc(fmt_energy(h.get("energy_pj"))),
              f"{esc(h.get('energy_source', evidence.ENERGY_SOURCE))}; "
              + (f"{(h.get('energy_pj') or 0) / mapped_macs:.2f} pJ per mapped MAC; " if mapped_macs else "") + scope),
        card_html("Simulated MACs", esc(fmt_share(h.get("coverage"))),
                  esc(evidence.coverage_text(h.get("coverage") or {}))),
        card_html("Layers mapped", fmt_int(h.get("layers_mapped")),
              f"{fmt_int(h.get('layers_unmappable'))} unmappable, "
              f"{fmt_int(h.get('unmapped_ops', 0))} ops without a unit"),
        card_html("MACs", esc(fmt_si(h.get("macs"))), fmt_int(h.get("macs"))),
        card_html("Register bits", fmt_int(h.get("register_bits")) if h.get("register_bits") is not None else "-",
              f"pipeline latency {esc(h.get('pipeline_latency', '-'))} cycles"),
        card_html("Simulation", f'<span class="badge {badge}">{esc(status)}</span>'),
    ]
    tso = mapping.get("totals", {}).get("tso")
    if isinstance(tso, dict) and "time_us" in tso:
        cards.append(card_html("TSO time", f"{float(tso['time_us']):,.1f} \u00b5s",
                           f"DRAM {float(tso.get('dram_us', 0)):,.1f} \u00b5s, {fmt_int(tso.get('bursts', 0))} bursts"))
    dataflows = "; ".join(
        f"{d.get('name', '?')}: " + " | ".join(",".join(f"{dim}{n}" for dim, n in axis) for axis in d.get("axes", []))
        for d in adg.get("dataflows", []))
    kv = [
        ("Design", f"<code>{esc(h.get('design'))}</code>"),
        ("Arch", f"{esc(h.get('arch'))}: {rows}x{cols} {esc(adg.get('fu', '?'))} FUs, {esc(adg.get('kernel', '?'))} "
                 f"family, {esc(adg.get('operand_bits', '?'))}-bit operands, {esc(adg.get('acc_bits', '?'))}-bit "
                 f"accumulators"),
        ("Dataflows", esc(dataflows or "-")),
        ("Workload", f"{esc(h.get('workload'))} ({esc(analysis.get('source', '?'))}): "
                     f"{len(analysis.get('layers', []))} layer{'' if len(analysis.get('layers', [])) == 1 else 's'}, "
                     + ", ".join(f"{n} on {esc(u)}" for u, n in sorted(units.items()))),
        ("Mapper", f"{esc(h.get('mapper'))} (objective {esc(mapping.get('objective', '?'))})"),
        ("Optimizer / target", f"{esc(h.get('optimizer'))} / {esc(h.get('target'))}"),
    ]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in kv)
    return section_html("summary", f'<div class="cards">{"".join(cards)}</div>\n<dl class="kv">{dl}</dl>')


def _layers(layers: list[dict], mapped: list[dict], points: dict, doc: dict) -> str:
    num = {0, 3, 5, 6, 8, 9, 10, 11, 12}
    totals = doc["mapping"].get("totals", {})
    unit, scale = plots.energy_unit(totals.get("energy_pj", 0.0))
    head = ["#", "layer", "op", "\u00d7", "dataflow", "MACs", "cycles", "source", "mapper's roofline",
            f"energy ({unit})", "util.", "MACs / DRAM B", "gap"]
    rows = []
    for i, e in enumerate(layers, 1):
        if e.get("status") == "mapped":
            p = points.get(e["name"], {})
            oi = p.get("intensity")
            rows.append(row_html([str(i), esc(e["name"]), esc(e.get("op", "?")), fmt_int(e.get("count", 1)),
                              esc(e.get("dataflow") or f"({e.get('unrolling', '-')})"), fmt_int(e.get("macs")),
                              fmt_int(e.get("cycles")), esc(evidence.SOURCE_LABELS.get(e.get("source"), "?")),
                              fmt_int(e.get("cycles_mapper")),
                              f"{e.get('energy_pj', 0) / scale:,.2f}", esc(fmt_pct(e.get("utilization"))),
                              f"{oi:,.1f}" if oi else "-", esc(fmt_pct(e["gap"])) if "gap" in e else "-"], num))
        else:
            rows.append(f'<tr class="bad"><td class="n">{i}</td><td>{esc(e["name"])}</td><td>{esc(e.get("op", "?"))}'
                        f'</td><td class="n">{fmt_int(e.get("count", 1))}</td><td colspan="9">'
                        f'{esc(e.get("status", "?"))}: {esc(e.get("reason", ""))}</td></tr>')
    total = "total" if len(mapped) == len(layers) else "total (mapped layers only)"
    rows.append(row_html(["", total, "", fmt_int(sum(e.get("count", 1) for e in mapped)), "",
                      fmt_int(totals.get("macs")), fmt_int(sum(e["cycles"] * e.get("count", 1) for e in mapped)), "",
                      fmt_int(totals.get("cycles")), f"{totals.get('energy_pj', 0) / scale:,.2f}", "", "",
                      esc(fmt_pct(totals["gap"])) if "gap" in totals else ""], num, "total"))
    parts = ['<p class="note">Array layers in network order; cycles and energy are per instance '
             "(\u00d7 repeats), the bars count every repeat. Cycles from the best evidence: measured in RTL "
             "where the layer ran whole, else the memory system's latency model, else the mapper's roofline; "
             "the mapper's roofline (shown beside) is its per-tile figure, without the tile loads and stores the "
             "hardware waits for; utilization and the "
             "roofline plot use the same cycles; energy: the cost model's. Gap: 1 - the layer's lower bound (MACs, "
             "each touched element once per memory level, every PE busy) / what the mapper found, for its "
             "objective (lego_build.mapping.bounds).</p>",
             table_html(head, rows, num)]
    unmapped = doc["analysis"].get("unmapped", [])
    if unmapped:
        parts.append("<h3>Operators without a unit</h3><p>"
                     + ", ".join(f"{esc(u.get('name', '?'))} (<code>{esc(u.get('op', '?'))}</code>)" for u in unmapped)
                     + "</p>")
    if mapped:
        parts.append(figure_html(plots.layer_bars_svg(mapped)))
    return section_html("layers", "\n".join(parts))


def _energy_section(mapped: list[dict], doc: dict) -> str:
    totals = doc["mapping"].get("totals", {})
    by_level = totals.get("energy_by_level_pj") or {}
    by_tensor = totals.get("energy_by_tensor_pj") or {}
    parts = []
    if by_level or by_tensor:
        parts.append(figure_html(plots.energy_breakdown_svg(by_level, by_tensor)))
    matrix: dict[str, dict[str, float]] = {}
    for e in mapped:
        for key, pj in (e.get("energy_level_tensor_pj") or {}).items():
            level, _, tensor = key.partition("/")
            matrix.setdefault(level, {})
            matrix[level][tensor] = matrix[level].get(tensor, 0.0) + pj * e.get("count", 1)
    if matrix:
        unit, scale = plots.energy_unit(totals.get("energy_pj", 0.0))
        levels = plots.level_order(list(by_level) + [lv for lv in matrix if lv not in by_level])
        tensors = list(by_tensor) + sorted({t for row in matrix.values() for t in row} - set(by_tensor))
        num = set(range(1, len(tensors) + 2))
        rows = [row_html([esc(lv)] + [f"{matrix.get(lv, {}).get(t, 0.0) / scale:,.2f}"
                                      if t in matrix.get(lv, {}) else "" for t in tensors]
                     + [f"{sum(matrix.get(lv, {}).values()) / scale:,.2f}"], num) for lv in levels]
        rows.append(row_html(["total"] + [f"{sum(r.get(t, 0.0) for r in matrix.values()) / scale:,.2f}"
                                          for t in tensors]
                         + [f"{sum(sum(r.values()) for r in matrix.values()) / scale:,.2f}"], num, "total"))
        parts.append(f"<h3>Energy by level and tensor ({unit}, whole network)</h3>")
        parts.append(table_html(["level"] + [esc(t) for t in tensors] + ["total"], rows, num))
    if not parts:
        parts.append('<p class="note">mapping.json has no energy breakdown.</p>')
    return section_html("energy", "\n".join(parts))


def _utilization(mapped: list[dict], h: dict) -> str:
    if not mapped:
        return section_html("utilization", '<p class="note">No mapped layers.</p>')
    low = [e for e in mapped if e.get("utilization", 0) < 0.5]
    note = (f'<p class="note">Network utilization {esc(fmt_pct(h.get("utilization")))}: MACs / (cycles \u00d7 FUs), '
            f"the cycles {esc(h.get('cycles_source', '?'))}. "
            f"{len(low)} of {len(mapped)} layers use less than half of the array.</p>")
    return section_html("utilization", note + "\n" + figure_html(plots.utilization_svg(mapped, h.get("utilization"))))


def _roofline(pts: list[dict], doc: dict, given: float | None) -> str:
    rows, cols = doc["adg"]["shape"]
    peak = float(rows * cols)
    derived = plots.implied_dram_bytes_per_cycle(pts)
    if derived:
        bw, source = derived, "the cost model's DRAM-level cycles (bytes / cycles, equal for every layer)"
    elif given:
        bw, source = float(given), "the caller (arch.memsys.dram_bytes_per_cycle)"
    else:
        bw, source = None, ""
    valid = [p for p in pts if p.get("intensity") and p.get("perf")]
    if not valid:
        return section_html("roofline", '<p class="note">No mapped layer moves DRAM data.</p>')
    text = [f"Compute roof {peak:g} MACs/cycle ({rows}x{cols} FUs)."]
    if bw:
        ridge = peak / bw
        mem_bound = sum(1 for p in valid if p["intensity"] < ridge)
        text.append(f"DRAM roof {bw:g} B/cycle, from {esc(source)}; ridge at {ridge:,.2f} MACs/B: "
                    f"{mem_bound} of {len(valid)} layers lie left of it (memory-bound).")
    else:
        text.append("No DRAM bandwidth is known (the layers' DRAM cycles disagree and none was given): "
                    "compute roof only.")
    above = [p for p in valid if p["perf"] > peak * 1.0001]
    if above:
        text.append(f"{len(above)} layers exceed the roof of one array (the cost model counts more cores).")
    text.append("DRAM bytes: reads + writes of the <code>dram/</code> accesses, words sized by the tensor bits in "
                "analysis.json, final outputs at the requantised operand width.")
    svg = plots.roofline_svg(valid, peak, bw)
    return section_html("roofline", f'<p class="note">{" ".join(text)}</p>\n{figure_html(svg)}')


def _adg(adg: dict) -> str:
    rows, cols = adg["shape"]
    svg = plots.adg_svg(adg)
    parts = [figure_html(svg) if svg else
             f'<p class="note">The array has {rows}x{cols} FUs: the picture is drawn for arrays up to '
             f"{plots.MAX_ADG_SIDE}x{plots.MAX_ADG_SIDE} only; the nets are listed below.</p>"]
    trs = []
    for net in adg.get("nets", []):
        links = net.get("links", [])
        delayed = sum(1 for lk in links if lk.get("delay") or lk.get("fifo") or lk.get("kind", "direct") != "direct")
        vectors = ", ".join(f"({', '.join(str(x) for x in v)}): {d}" for v, d in net.get("link_vectors", [])) or "-"
        dfs = sorted({df for lk in links for df in lk.get("dataflows", [])}
                     | {df for pd in net.get("port_dataflows", []) for df in pd})
        trs.append(row_html([esc(net.get("tensor", "?")), esc(net.get("role", "?")), fmt_int(net.get("bits", 0)),
                             esc(vectors), fmt_int(len(links)), fmt_int(delayed), fmt_int(len(net.get("ports", []))),
                             esc(", ".join(dfs) or "-")],
                        {2, 4, 5, 6}))
    parts.append("<h3>Nets</h3>")
    parts.append(table_html(["tensor", "role", "bits", "link vectors (\u0394s: delay)", "links", "delayed", "ports",
                         "dataflows"], trs, {2, 4, 5, 6}))
    return section_html("adg", "\n".join(parts))


PASS_COLUMNS = ("register_bits", "fifo_bits", "gated_register_bits", "adders", "adder_inputs", "multipliers",
                "muxes", "buffer_ports", "nodes", "edges")


PASS_HEADS = {"register_bits": "register bits", "fifo_bits": "FIFO bits", "gated_register_bits": "gated bits",
              "adder_inputs": "adder inputs", "multipliers": "mult.", "buffer_ports": "buffer ports"}


def _delta(cur, prev) -> str:
    if prev is None or cur == prev:
        return fmt_int(cur)
    cls, sign = ("good", "\u2212") if cur < prev else ("worse", "+")
    return f'{fmt_int(cur)} <span class="{cls}">({sign}{fmt_int(abs(cur - prev))})</span>'


def _passes(passes_doc: dict | None) -> str:
    passes = (passes_doc or {}).get("passes") or []
    if not passes:
        return section_html("passes", '<p class="note">No passes.json.</p>')
    regs = [p.get("register_bits", 0) or 0 for p in passes]
    peak = max(regs)
    peak_pass = passes[regs.index(peak)].get("pass", "?")
    lines = [f"Optimizer {esc(passes_doc.get('optimizer', '?'))}, delay matching "
             f"{esc(passes_doc.get('delay_matching', '?'))}."]
    if peak:
        lines.append(f"Register bits peak at {fmt_int(peak)} after {esc(peak_pass)} and end at {fmt_int(regs[-1])} "
                     f"({100 * (peak - regs[-1]) / peak:.0f}% saved by the later passes).")
    savings = []
    for key in PASS_COLUMNS:
        for prev, cur in zip(passes, passes[1:]):
            a, b = prev.get(key), cur.get(key)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b < a:
                savings.append(f"{esc(cur.get('pass', '?'))}: {esc(key.replace('_', ' '))} "
                               f"{fmt_int(a)} \u2192 {fmt_int(b)}")
    if savings:
        lines.append("Reductions: " + "; ".join(savings) + ".")
    num = set(range(1, len(PASS_COLUMNS) + 1))
    rows = []
    for i, p in enumerate(passes):
        prev = passes[i - 1] if i else None
        cells = [f"<code>{esc(p.get('pass', '?'))}</code>"]
        cells += [_delta(p.get(k, 0), prev.get(k, 0) if prev else None) for k in PASS_COLUMNS]
        rows.append(row_html(cells, num))
    head = ["pass"] + [PASS_HEADS.get(k, k.replace("_", " ")) for k in PASS_COLUMNS]
    body = (f'<p class="note">{" ".join(lines)}</p>\n{figure_html(plots.passes_svg(passes))}\n'
            f"<h3>After each pass</h3>\n{table_html(head, rows, num)}")
    return section_html("passes", body)


def _simulation(sim: dict | None, cov: dict | None = None) -> str:
    if sim is None:
        return section_html("simulation", '<p class="note">No sim/result.json.</p>')
    status = str(sim.get("status", "unknown"))
    badge = status if status in ("pass", "fail", "skipped") else "unknown"
    parts = [f'<p>Verdict: <span class="badge {badge}">{esc(status)}</span></p>']
    if cov:
        parts.append(f'<p class="note">Coverage: {esc(evidence.coverage_text(cov))}.</p>')
    kv = []
    if status == "skipped":
        kv.append(("Reason", esc(sim.get("reason", "-"))))
    for key, label in (("match", "Outputs match the golden model"), ("cycles_match", "Cycles match the prediction")):
        if key in sim:
            kv.append((label, fmt_mark(sim[key])))
    for key, label in (("outputs", "Outputs checked"), ("mismatches", "Mismatches")):
        if key in sim:
            kv.append((label, fmt_int(sim[key])))
    if "seed" in sim:
        kv.append(("Test-data seed", esc(sim["seed"])))
    if sim.get("data"):
        kv.append(("Test data", esc(", ".join(sim["data"])) + " (compared with exact integer arithmetic)"))
    if sim.get("overflow") == "wrap":
        kv.append(("Accumulator", "<strong>wraps on purpose</strong> (arch.overflow=wrap): outputs are compared "
                                  "with wrapped arithmetic"))
    for product, value in products(sim):  # what the target adds, as it declares (lego_build.targets)
        kv += [(esc(label), esc(text)) for label, text in product.rows(value)]
    if kv:
        parts.append('<dl class="kv">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in kv) + "</dl>")
    tiles = sim.get("tiles") or []
    if tiles:
        num = {5, 6, 8, 9}
        rows = []
        for t in tiles:
            tile = " ".join(f"{k}={v}" for k, v in (t.get("tile") or {}).items())
            offset = " ".join(f"{k}+{v}" for k, v in (t.get("offset") or {}).items() if v) or "origin"
            fifo = ", ".join(f"{'/'.join(f'{k}{v}' for k, v in (g.get('shift') or {}).items())}: "
                             f"{'-' if g.get('depth') is None else g.get('depth')}" for g in t.get("fifo_groups", []))
            ppu = " \u2192 ".join(str(op) for op in (t.get("ppu") or {}).get("ops", [])) or "-"
            ok = bool(t.get("match")) and bool(t.get("cycles_match"))
            rows.append(row_html([esc(t.get("layer", "?")), esc(t.get("kind", "?")), esc(t.get("dataflow", "?")),
                              f"<code>{esc(tile)}</code>", f'<code class="offset">{esc(offset)}</code>',
                              fmt_int(t.get("outputs")), fmt_int(t.get("mismatches")),
                              fmt_mark(t.get("match")), fmt_int(t.get("cycles_simulated")),
                              fmt_int(t.get("cycles_predicted")),
                              fmt_mark(t.get("cycles_match")), esc(fifo or "-"), esc(ppu)], num, "" if ok else "bad"))
        parts.append("<h3>Simulated tiles</h3>")
        parts.append(table_html(["layer", "kind", "dataflow", "tile", "offset", "outputs", "mismatches", "match",
                             "cycles sim.",
                             "cycles pred.", "cycles match", "FIFO depths", "epilogue"], rows, num))
    layers = sim.get("layers") or []
    if layers:
        num = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
        rows = [row_html([esc(r["layer"]), esc(r["kind"]), esc(r["dataflow"]), fmt_int(r["tiles"]),
                          fmt_int(r["outputs"]), fmt_int(r["mismatches"]), fmt_int(r["cycles"]),
                          fmt_int(r["cycles_predicted"]), esc(f"{r['error']:+.1%}"),
                      fmt_int(round(r["cycles_mapper"])), fmt_int(r["load_wait"]), fmt_int(r["store_wait"]),
                      fmt_int(r["bytes_read"]), fmt_int(r["bytes_written"])], num, "" if not r["mismatches"] else "bad")
                for r in layers]
        net = sim["network"]
        parts.append(f"<h3>Whole layers through the memory system</h3><p>{net['layers']} layers: "
                     f"{fmt_int(net['cycles'])} cycles measured in RTL, {fmt_int(net['cycles_predicted'])} predicted "
                     f"by the latency model ({esc(format(net['error'], '+.1%'))})."
                     "</p>")
        parts.append(table_html(["layer", "kind", "dataflow", "tiles", "outputs", "mismatches", "cycles measured",
                             "predicted", "error", "mapper", "load wait", "store wait", "bytes read",
                             "bytes written"], rows, num))
    return section_html("simulation", "\n".join(parts))


# ---------------------------------------------------------------- page

def render_html(design_dir: Path, dram_bytes_per_cycle: float | None = None, summary: dict | None = None) -> str:
    """The HTML report of ``design_dir`` (its analysis, mapping, adg, passes, sim and summary JSON).

    ``dram_bytes_per_cycle`` draws the roofline's bandwidth roof when the cost model's
    per-layer DRAM cycles do not give one consistent bandwidth (e.g. ``mapper=tso``);
    ``summary``: the report stage's ``summary.json`` object, before it is written.
    """
    design_dir = Path(design_dir)
    doc = load(design_dir)
    if summary is not None:
        doc["summary"] = summary
    h = headline(design_dir, doc)
    layers = evidenced(_ordered_layers(doc["mapping"], doc["analysis"]), doc)
    mapped = [e for e in layers if e.get("status") == "mapped"]
    final_bits = doc["adg"].get("operand_bits") or 8
    pts = plots.roofline_points(mapped, doc["analysis"], final_bits)
    by_name = {p["name"]: p for p in pts}
    body = [
        _summary(h, doc),
        _layers(layers, mapped, by_name, doc),
        _energy_section(mapped, doc),
        _utilization(mapped, h),
        _roofline(pts, doc, dram_bytes_per_cycle),
        _adg(doc["adg"]),
        _passes(doc.get("passes")),
        _simulation(doc.get("sim"), h.get("coverage")),
    ]
    nav = "".join(f'<a href="#{k}">{esc(t)}</a>' for k, t in SECTIONS)
    sub = (f"{esc(h.get('arch'))} {h['array'][0]}x{h['array'][1]} running {esc(h.get('workload'))} \u00b7 mapper "
           f"{esc(h.get('mapper'))} \u00b7 optimizer {esc(h.get('optimizer'))} \u00b7 target {esc(h.get('target'))}"
           if h.get("array") else "")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(h.get('design', design_dir.name))} \u2014 lego_build report</title>",
        f"<style>\n{CSS}\n</style>",
        "</head>",
        "<body>",
        f'<header><div class="wrap"><h1>{esc(h.get("design", design_dir.name))}</h1><p>{sub}</p>'
        f"<nav>{nav}</nav></div></header>",
        "<main>",
        *body,
        "</main>",
        "<footer>Generated by lego_build from analysis.json, mapping.json, adg.json, passes.json, "
        "sim/result.json and summary.json.</footer>",
        "</body>",
        "</html>",
        "",
    ])
