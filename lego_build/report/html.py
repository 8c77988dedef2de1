"""Self-contained HTML report of one design directory: :func:`render_html`.

One HTML5 page with inline CSS and inline SVG plots (:mod:`lego_build.report.plots`):
no scripts, no external URLs, every string from the JSON files escaped. The same
inputs give byte-identical output.
"""
from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from lego_build.report import evidence, plots

SECTIONS = (
    ("summary", "Summary"),
    ("layers", "Per-layer results"),
    ("energy", "Energy breakdown"),
    ("utilization", "Utilization"),
    ("roofline", "Roofline"),
    ("adg", "Architecture graph (ADG)"),
    ("passes", "Back-end pass savings"),
    ("simulation", "Simulation"),
)
TITLES = dict(SECTIONS)
LONG_TABLE = 30

CSS = """
:root{--fg:#1d2330;--muted:#5f6b7a;--line:#dfe3e8;--bg:#f6f7f9;--card:#fff;--accent:#3b75af;
--ok:#2e7d32;--okbg:#e6f4e7;--bad:#b3261e;--badbg:#fbe9e7;--skip:#5f6b7a;--skipbg:#eceff1}
*{box-sizing:border-box}
html{background:var(--bg)}
body{margin:0;color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",
"Helvetica Neue",Arial,sans-serif}
header{background:#1d2330;color:#fff;padding:22px 0 16px}
header .wrap,main,footer{max-width:1120px;margin:0 auto;padding:0 24px}
header h1{margin:0 0 4px;font-size:24px;font-weight:650;letter-spacing:.2px;word-break:break-all}
header p{margin:0;color:#c5ccd6}
nav{margin-top:12px;display:flex;flex-wrap:wrap;gap:6px}
nav a{color:#dfe7f1;text-decoration:none;font-size:12.5px;padding:3px 9px;border:1px solid #3d4757;border-radius:12px}
nav a:hover{background:#2f3a4b}
main{padding-top:18px;padding-bottom:24px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:0 0 18px}
h2{margin:0 0 10px;font-size:18px;font-weight:650}
h3{margin:14px 0 6px;font-size:14.5px}
p.note{color:var(--muted);margin:6px 0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;margin:4px 0 12px}
.card{border:1px solid var(--line);border-radius:6px;padding:9px 12px;background:#fbfcfd}
.card .k{font-size:11.5px;color:var(--muted);text-transform:uppercase;letter-spacing:.4px}
.card .v{font-size:19px;font-weight:650;margin-top:2px;font-variant-numeric:tabular-nums}
.card .s{font-size:12px;color:var(--muted)}
.card .s .scope{display:block;color:#8a5a00}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:3px 16px;margin:0}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0}
.tbl{overflow-x:auto;max-width:100%}
.tbl.long{max-height:640px;overflow-y:auto;border-bottom:1px solid var(--line)}
table{border-collapse:collapse;width:100%;font-size:12.5px;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600;position:sticky;top:0}
td.n,th.n{text-align:right}
td.n{white-space:nowrap}
tbody tr:nth-child(even){background:#fafbfc}
tr.total td{font-weight:650;border-top:2px solid #c9ced6;background:#fff;position:sticky;bottom:0}
tr.bad td{background:var(--badbg)}
.good{color:var(--ok);font-weight:600}
.worse{color:var(--bad);font-weight:600}
.badge{display:inline-block;padding:2px 10px;border-radius:11px;font-weight:700;font-size:12.5px;
text-transform:uppercase;letter-spacing:.5px}
.badge.pass{background:var(--okbg);color:var(--ok)}
.badge.fail{background:var(--badbg);color:var(--bad)}
.badge.skipped,.badge.unknown{background:var(--skipbg);color:var(--skip)}
code{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
figure{margin:8px 0 4px}
svg.plot{display:block;max-width:100%;height:auto;margin:0 auto}
svg.plot *{stroke-linejoin:round;stroke-linecap:butt}
footer{color:var(--muted);font-size:12px;padding-bottom:24px}
""".strip()


# ---------------------------------------------------------------- formatting

def _e(value) -> str:
    return escape(str(value), quote=True)


def _int(value) -> str:
    try:
        return f"{int(round(float(value))):,}"
    except (TypeError, ValueError):
        return _e(value)


def _energy(pj) -> str:
    """An energy in pJ with a readable unit."""
    if pj is None:
        return "-"
    v = float(pj)
    for unit, scale in (("J", 1e12), ("mJ", 1e9), ("\u00b5J", 1e6), ("nJ", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:,.3f} {unit}"
    return f"{v:,.1f} pJ"


def _si(x) -> str:
    v = float(x or 0)
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:g}"


def _pct(x) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}%"


def _share(cov: dict | None) -> str:
    """The simulated share of the network's MACs (:func:`lego_build.report.evidence.coverage`)."""
    return evidence.fmt_share(cov["mac_share"]) if cov and cov.get("scope") else "none"


def _mark(ok) -> str:
    if ok is None:
        return "-"
    return '<span class="good">\u2713</span>' if ok else '<span class="worse">\u2717</span>'


def _table(head: list[str], rows: list[str], numeric: set[int] = frozenset()) -> str:
    """A table; one of more than ``LONG_TABLE`` rows scrolls in a box of fixed height."""
    ths = "".join(f'<th class="n">{h}</th>' if i in numeric else f"<th>{h}</th>" for i, h in enumerate(head))
    body = "\n".join(rows)
    cls = "tbl long" if len(rows) > LONG_TABLE else "tbl"
    return f'<div class="{cls}"><table><thead><tr>{ths}</tr></thead><tbody>\n{body}\n</tbody></table></div>'


def _row(cells: list[str], numeric: set[int] = frozenset(), cls: str = "") -> str:
    tds = "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(cells))
    return f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>"


def _card(key: str, value: str, sub: str = "") -> str:
    s = f'<div class="s">{sub}</div>' if sub else ""
    return f'<div class="card"><div class="k">{key}</div><div class="v">{value}</div>{s}</div>'


def _figure(svg: str) -> str:
    return f"<figure>\n{svg}</figure>"


def _section(key: str, body: str) -> str:
    return f'<section id="{key}">\n<h2>{_e(TITLES[key])}</h2>\n{body}\n</section>'


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


def _clock_mhz(design_dir: Path) -> float | None:
    """``arch.clock_mhz`` of the design's ``config.yaml`` (None when it is absent)."""
    path = Path(design_dir) / "config.yaml"
    if not path.is_file():
        return None
    from omegaconf import OmegaConf

    return (OmegaConf.to_container(OmegaConf.load(path)).get("arch") or {}).get("clock_mhz")


def headline(design_dir: Path, doc: dict) -> dict:
    """``summary.json``, or the same key figures from the other files when it is absent (the
    headline from the same evidence, :mod:`lego_build.report.evidence`)."""
    if doc.get("summary"):
        return dict(doc["summary"])
    mapping, adg, analysis = doc["mapping"], doc["adg"], doc["analysis"]
    totals = mapping.get("totals", {})
    mapped = [e for e in mapping.get("layers", []) if e.get("status") == "mapped"]
    fus = adg["shape"][0] * adg["shape"][1]
    name = Path(design_dir).name
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_]*)-(.+)-[0-9a-f]{8}", name)  # config.compose.design_id
    sim = doc.get("sim") or {}
    passes = (doc.get("passes") or {}).get("passes") or [{}]
    target = sim.get("reason", "").partition("target=")[2] or "?"
    macs = analysis.get("totals", {}).get("macs", totals.get("macs", 0))
    return {
        "design": name, "arch": m.group(1) if m else "?",
        "workload": m.group(2) if m else analysis.get("workload", "?"),
        "mapper": mapping.get("mapper", "?"), "optimizer": (doc.get("passes") or {}).get("optimizer", "?"),
        "target": target, "array": list(adg["shape"]),
        "macs": macs, "macs_mapped": totals.get("macs", 0),
        "layers_mapped": totals.get("layers_mapped", len(mapped)),
        "layers_unmappable": totals.get("layers_unmappable", 0),
        "unmapped_ops": len(analysis.get("unmapped", [])),
        "energy_pj": totals.get("energy_pj", 0.0),
        **evidence.headline(mapping, sim, fus, _clock_mhz(design_dir)),
        "coverage": evidence.coverage(mapping, sim, macs),
        "register_bits": passes[-1].get("register_bits"), "pipeline_latency": passes[-1].get("latency"),
        "simulation": sim.get("status"),
    }


def evidenced(layers: list[dict], doc: dict) -> list[dict]:
    """The mapped ``layers`` with ``cycles`` and ``utilization`` from the best evidence
    (:func:`lego_build.report.evidence.layer_evidence`), their ``source``, and the mapper's
    figures as ``cycles_mapper`` and ``utilization_mapper``."""
    fus = doc["adg"]["shape"][0] * doc["adg"]["shape"][1]
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
    scope = (f'<span class="scope">mapped layers only: {_pct(share)} of the MACs are in unmappable layers</span>'
             if h.get("layers_unmappable") else '<span class="scope">all layers</span>')
    source = _e(h.get("cycles_source", "?"))
    bound = (f"; the mapper's roofline: {_int(h.get('mapper_cycles'))} cycles (these are "
             f"{h['mapper_gap']:.2f}x it)" if h.get("mapper_gap") is not None else "")
    rate = (f"{h['gops']:,.2f} GOP/s" if h.get("gops") is not None else f"{h.get('ops_per_cycle', 0):,.2f} ops/cycle")
    rate_sub = (f"at {h['clock_mhz']:g} MHz (arch.clock_mhz), 2 ops per MAC; " if h.get("gops") is not None
                else "per cycle (no clock known), 2 ops per MAC; ")
    bound_util = (f"; mapper's roofline {_e(_pct(h.get('mapper_utilization')))}"
                  if h.get("mapper_utilization") is not None else "")
    cards = [
        _card("Latency", f"{_int(h.get('cycles'))}", f"cycles, {source}{bound}; " + scope),
        _card("Utilization", _e(_pct(h.get("utilization"))),
              f"MACs / (cycles \u00d7 {rows}x{cols} FUs), {source}{bound_util}"),
        _card("Throughput", _e(rate), rate_sub + source),
        _card("Energy", _e(_energy(h.get("energy_pj"))),
              f"{_e(h.get('energy_source', evidence.ENERGY_SOURCE))}; "
              + (f"{(h.get('energy_pj') or 0) / mapped_macs:.2f} pJ per mapped MAC; " if mapped_macs else "") + scope),
        _card("Simulated MACs", _e(_share(h.get("coverage"))), _e(evidence.coverage_text(h.get("coverage") or {}))),
        _card("Layers mapped", _int(h.get("layers_mapped")),
              f"{_int(h.get('layers_unmappable'))} unmappable, {_int(h.get('unmapped_ops', 0))} ops without a unit"),
        _card("MACs", _e(_si(h.get("macs"))), _int(h.get("macs"))),
        _card("Register bits", _int(h.get("register_bits")) if h.get("register_bits") is not None else "-",
              f"pipeline latency {_e(h.get('pipeline_latency', '-'))} cycles"),
        _card("Simulation", f'<span class="badge {badge}">{_e(status)}</span>'),
    ]
    tso = mapping.get("totals", {}).get("tso")
    if isinstance(tso, dict) and "time_us" in tso:
        cards.append(_card("TSO time", f"{float(tso['time_us']):,.1f} \u00b5s",
                           f"DRAM {float(tso.get('dram_us', 0)):,.1f} \u00b5s, {_int(tso.get('bursts', 0))} bursts"))
    dataflows = "; ".join(
        f"{d.get('name', '?')}: " + " | ".join(",".join(f"{dim}{n}" for dim, n in axis) for axis in d.get("axes", []))
        for d in adg.get("dataflows", []))
    kv = [
        ("Design", f"<code>{_e(h.get('design'))}</code>"),
        ("Arch", f"{_e(h.get('arch'))}: {rows}x{cols} {_e(adg.get('fu', '?'))} FUs, {_e(adg.get('kernel', '?'))} "
                 f"family, {_e(adg.get('operand_bits', '?'))}-bit operands, {_e(adg.get('acc_bits', '?'))}-bit "
                 f"accumulators"),
        ("Dataflows", _e(dataflows or "-")),
        ("Workload", f"{_e(h.get('workload'))} ({_e(analysis.get('source', '?'))}): "
                     f"{len(analysis.get('layers', []))} layer{'' if len(analysis.get('layers', [])) == 1 else 's'}, "
                     + ", ".join(f"{n} on {_e(u)}" for u, n in sorted(units.items()))),
        ("Mapper", f"{_e(h.get('mapper'))} (objective {_e(mapping.get('objective', '?'))})"),
        ("Optimizer / target", f"{_e(h.get('optimizer'))} / {_e(h.get('target'))}"),
    ]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in kv)
    return _section("summary", f'<div class="cards">{"".join(cards)}</div>\n<dl class="kv">{dl}</dl>')


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
            rows.append(_row([str(i), _e(e["name"]), _e(e.get("op", "?")), _int(e.get("count", 1)),
                              _e(e.get("dataflow") or f"({e.get('unrolling', '-')})"), _int(e.get("macs")),
                              _int(e.get("cycles")), _e(evidence.SOURCE_LABELS.get(e.get("source"), "?")),
                              _int(e.get("cycles_mapper")),
                              f"{e.get('energy_pj', 0) / scale:,.2f}", _e(_pct(e.get("utilization"))),
                              f"{oi:,.1f}" if oi else "-", _e(_pct(e["gap"])) if "gap" in e else "-"], num))
        else:
            rows.append(f'<tr class="bad"><td class="n">{i}</td><td>{_e(e["name"])}</td><td>{_e(e.get("op", "?"))}'
                        f'</td><td class="n">{_int(e.get("count", 1))}</td><td colspan="9">'
                        f'{_e(e.get("status", "?"))}: {_e(e.get("reason", ""))}</td></tr>')
    total = "total" if len(mapped) == len(layers) else "total (mapped layers only)"
    rows.append(_row(["", total, "", _int(sum(e.get("count", 1) for e in mapped)), "",
                      _int(totals.get("macs")), _int(sum(e["cycles"] * e.get("count", 1) for e in mapped)), "",
                      _int(totals.get("cycles")), f"{totals.get('energy_pj', 0) / scale:,.2f}", "", "",
                      _e(_pct(totals["gap"])) if "gap" in totals else ""], num, "total"))
    parts = ['<p class="note">Array layers in network order; cycles and energy are per instance '
             "(\u00d7 repeats), the bars count every repeat. Cycles from the best evidence: measured in RTL "
             "where the layer ran whole, else the memory system's latency model, else the mapper's roofline; "
             "the mapper's roofline (shown beside) is its per-tile figure, without the tile loads and stores the "
             "hardware waits for; utilization and the "
             "roofline plot use the same cycles; energy: the cost model's. Gap: 1 - the layer's lower bound (MACs, "
             "each touched element once per memory level, every PE busy) / what the mapper found, for its "
             "objective (lego_build.mapping.bounds).</p>",
             _table(head, rows, num)]
    unmapped = doc["analysis"].get("unmapped", [])
    if unmapped:
        parts.append("<h3>Operators without a unit</h3><p>"
                     + ", ".join(f"{_e(u.get('name', '?'))} (<code>{_e(u.get('op', '?'))}</code>)" for u in unmapped)
                     + "</p>")
    if mapped:
        parts.append(_figure(plots.layer_bars_svg(mapped)))
    return _section("layers", "\n".join(parts))


def _energy_section(mapped: list[dict], doc: dict) -> str:
    totals = doc["mapping"].get("totals", {})
    by_level = totals.get("energy_by_level_pj") or {}
    by_tensor = totals.get("energy_by_tensor_pj") or {}
    parts = []
    if by_level or by_tensor:
        parts.append(_figure(plots.energy_breakdown_svg(by_level, by_tensor)))
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
        rows = [_row([_e(lv)] + [f"{matrix.get(lv, {}).get(t, 0.0) / scale:,.2f}" if t in matrix.get(lv, {}) else ""
                                 for t in tensors]
                     + [f"{sum(matrix.get(lv, {}).values()) / scale:,.2f}"], num) for lv in levels]
        rows.append(_row(["total"] + [f"{sum(r.get(t, 0.0) for r in matrix.values()) / scale:,.2f}" for t in tensors]
                         + [f"{sum(sum(r.values()) for r in matrix.values()) / scale:,.2f}"], num, "total"))
        parts.append(f"<h3>Energy by level and tensor ({unit}, whole network)</h3>")
        parts.append(_table(["level"] + [_e(t) for t in tensors] + ["total"], rows, num))
    if not parts:
        parts.append('<p class="note">mapping.json has no energy breakdown.</p>')
    return _section("energy", "\n".join(parts))


def _utilization(mapped: list[dict], h: dict) -> str:
    if not mapped:
        return _section("utilization", '<p class="note">No mapped layers.</p>')
    low = [e for e in mapped if e.get("utilization", 0) < 0.5]
    note = (f'<p class="note">Network utilization {_e(_pct(h.get("utilization")))}: MACs / (cycles \u00d7 FUs), '
            f"the cycles {_e(h.get('cycles_source', '?'))}. "
            f"{len(low)} of {len(mapped)} layers use less than half of the array.</p>")
    return _section("utilization", note + "\n" + _figure(plots.utilization_svg(mapped, h.get("utilization"))))


def _roofline(pts: list[dict], doc: dict, given: float | None) -> str:
    rows, cols = doc["adg"]["shape"]
    peak = float(rows * cols)
    derived = plots.implied_dram_bytes_per_cycle(pts)
    if derived:
        bw, source = derived, "the cost model's DRAM-level cycles (bytes / cycles, equal for every layer)"
    elif given:
        bw, source = float(given), "the caller (arch.dram_bytes_per_cycle)"
    else:
        bw, source = None, ""
    valid = [p for p in pts if p.get("intensity") and p.get("perf")]
    if not valid:
        return _section("roofline", '<p class="note">No mapped layer moves DRAM data.</p>')
    text = [f"Compute roof {peak:g} MACs/cycle ({rows}x{cols} FUs)."]
    if bw:
        ridge = peak / bw
        mem_bound = sum(1 for p in valid if p["intensity"] < ridge)
        text.append(f"DRAM roof {bw:g} B/cycle, from {_e(source)}; ridge at {ridge:,.2f} MACs/B: "
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
    return _section("roofline", f'<p class="note">{" ".join(text)}</p>\n{_figure(svg)}')


def _adg(adg: dict) -> str:
    rows, cols = adg["shape"]
    svg = plots.adg_svg(adg)
    parts = [_figure(svg) if svg else
             f'<p class="note">The array has {rows}x{cols} FUs: the picture is drawn for arrays up to '
             f"{plots.MAX_ADG_SIDE}x{plots.MAX_ADG_SIDE} only; the nets are listed below.</p>"]
    trs = []
    for net in adg.get("nets", []):
        links = net.get("links", [])
        delayed = sum(1 for lk in links if lk.get("delay") or lk.get("fifo") or lk.get("kind", "direct") != "direct")
        vectors = ", ".join(f"({', '.join(str(x) for x in v)}): {d}" for v, d in net.get("link_vectors", [])) or "-"
        dfs = sorted({df for lk in links for df in lk.get("dataflows", [])}
                     | {df for pd in net.get("port_dataflows", []) for df in pd})
        trs.append(_row([_e(net.get("tensor", "?")), _e(net.get("role", "?")), _int(net.get("bits", 0)), _e(vectors),
                         _int(len(links)), _int(delayed), _int(len(net.get("ports", []))), _e(", ".join(dfs) or "-")],
                        {2, 4, 5, 6}))
    parts.append("<h3>Nets</h3>")
    parts.append(_table(["tensor", "role", "bits", "link vectors (\u0394s: delay)", "links", "delayed", "ports",
                         "dataflows"], trs, {2, 4, 5, 6}))
    return _section("adg", "\n".join(parts))


PASS_COLUMNS = ("register_bits", "fifo_bits", "gated_register_bits", "adders", "adder_inputs", "multipliers",
                "muxes", "buffer_ports", "nodes", "edges")


PASS_HEADS = {"register_bits": "register bits", "fifo_bits": "FIFO bits", "gated_register_bits": "gated bits",
              "adder_inputs": "adder inputs", "multipliers": "mult.", "buffer_ports": "buffer ports"}


def _delta(cur, prev) -> str:
    if prev is None or cur == prev:
        return _int(cur)
    cls, sign = ("good", "\u2212") if cur < prev else ("worse", "+")
    return f'{_int(cur)} <span class="{cls}">({sign}{_int(abs(cur - prev))})</span>'


def _passes(passes_doc: dict | None) -> str:
    passes = (passes_doc or {}).get("passes") or []
    if not passes:
        return _section("passes", '<p class="note">No passes.json.</p>')
    regs = [p.get("register_bits", 0) or 0 for p in passes]
    peak = max(regs)
    peak_pass = passes[regs.index(peak)].get("pass", "?")
    lines = [f"Optimizer {_e(passes_doc.get('optimizer', '?'))}, delay matching "
             f"{_e(passes_doc.get('delay_matching', '?'))}."]
    if peak:
        lines.append(f"Register bits peak at {_int(peak)} after {_e(peak_pass)} and end at {_int(regs[-1])} "
                     f"({100 * (peak - regs[-1]) / peak:.0f}% saved by the later passes).")
    savings = []
    for key in PASS_COLUMNS:
        for prev, cur in zip(passes, passes[1:]):
            a, b = prev.get(key), cur.get(key)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b < a:
                savings.append(f"{_e(cur.get('pass', '?'))}: {_e(key.replace('_', ' '))} {_int(a)} \u2192 {_int(b)}")
    if savings:
        lines.append("Reductions: " + "; ".join(savings) + ".")
    num = set(range(1, len(PASS_COLUMNS) + 1))
    rows = []
    for i, p in enumerate(passes):
        prev = passes[i - 1] if i else None
        cells = [f"<code>{_e(p.get('pass', '?'))}</code>"]
        cells += [_delta(p.get(k, 0), prev.get(k, 0) if prev else None) for k in PASS_COLUMNS]
        rows.append(_row(cells, num))
    head = ["pass"] + [PASS_HEADS.get(k, k.replace("_", " ")) for k in PASS_COLUMNS]
    body = (f'<p class="note">{" ".join(lines)}</p>\n{_figure(plots.passes_svg(passes))}\n'
            f"<h3>After each pass</h3>\n{_table(head, rows, num)}")
    return _section("passes", body)


def _simulation(sim: dict | None, cov: dict | None = None) -> str:
    if sim is None:
        return _section("simulation", '<p class="note">No sim/result.json.</p>')
    status = str(sim.get("status", "unknown"))
    badge = status if status in ("pass", "fail", "skipped") else "unknown"
    parts = [f'<p>Verdict: <span class="badge {badge}">{_e(status)}</span></p>']
    if cov:
        parts.append(f'<p class="note">Coverage: {_e(evidence.coverage_text(cov))}.</p>')
    kv = []
    if status == "skipped":
        kv.append(("Reason", _e(sim.get("reason", "-"))))
    for key, label in (("match", "Outputs match the golden model"), ("cycles_match", "Cycles match the prediction")):
        if key in sim:
            kv.append((label, _mark(sim[key])))
    for key, label in (("outputs", "Outputs checked"), ("mismatches", "Mismatches")):
        if key in sim:
            kv.append((label, _int(sim[key])))
    for key, label in (("seed", "Test-data seed"), ("lint", "Lint")):
        if key in sim:
            kv.append((label, _e(sim[key])))
    if sim.get("data"):
        kv.append(("Test data", _e(", ".join(sim["data"])) + " (compared with exact integer arithmetic)"))
    if sim.get("overflow") == "wrap":
        kv.append(("Accumulator", "<strong>wraps on purpose</strong> (arch.overflow=wrap): outputs are compared "
                                  "with wrapped arithmetic"))
    synth = sim.get("synth")
    if isinstance(synth, dict):
        kv.append(("Yosys", ", ".join(f"{_e(k.replace('_', ' '))} {_int(v)}" for k, v in sorted(synth.items())
                                      if isinstance(v, (int, float)))))
    asic = sim.get("asic")
    if isinstance(asic, dict):
        kv.append(("Standard cells", _e(f"{asic['library']} ({asic['node_nm']:g} nm): {asic['area_mm2']} mm² "
                                        "with SRAM, "
                                        f"Fmax {asic['fmax_mhz']} MHz, {asic['power_total_mw']} mW at "
                                        f"{asic['power_mhz']:g} MHz (toggle rates {asic['activity_source']})")))
        kv += [(_e(f"  {c}"), _e(f"{v:,} µm², {asic['power_mw'].get(c, 0.0):,.3f} mW"))
               for c, v in sorted(asic["area_um2"].items(), key=lambda kv: -kv[1])]
        if asic.get("clock_gating"):
            g = asic["clock_gating"]
            kv.append(("Power gating", _e(f"{g['gated_bits']} register bits clock-enabled, off {g['off_fraction']:.0%} "
                                          f"of the cycles; with clock-gating cells {g['saved_mw']:,.3f} mW less "
                                          "(estimate)")))
        for r in (asic.get("model_check") or {}).get("levels", []):
            err = "" if r["error"] is None else f", model error {r['error']:+.1%}"
            kv.append((_e(f"Model check: {r['level']}"), _e(f"model {r['model_pj']:,.1f} pJ, measured "
                                                           f"{r['measured_pj']:,.1f} pJ at 28 nm{err}")))
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
            rows.append(_row([_e(t.get("layer", "?")), _e(t.get("kind", "?")), _e(t.get("dataflow", "?")),
                              f"<code>{_e(tile)}</code>", f'<code class="offset">{_e(offset)}</code>',
                              _int(t.get("outputs")), _int(t.get("mismatches")),
                              _mark(t.get("match")), _int(t.get("cycles_simulated")), _int(t.get("cycles_predicted")),
                              _mark(t.get("cycles_match")), _e(fifo or "-"), _e(ppu)], num, "" if ok else "bad"))
        parts.append("<h3>Simulated tiles</h3>")
        parts.append(_table(["layer", "kind", "dataflow", "tile", "offset", "outputs", "mismatches", "match",
                             "cycles sim.",
                             "cycles pred.", "cycles match", "FIFO depths", "epilogue"], rows, num))
    layers = sim.get("layers") or []
    if layers:
        num = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
        rows = [_row([_e(r["layer"]), _e(r["kind"]), _e(r["dataflow"]), _int(r["tiles"]), _int(r["outputs"]),
                      _int(r["mismatches"]), _int(r["cycles"]), _int(r["cycles_predicted"]), _e(f"{r['error']:+.1%}"),
                      _int(round(r["cycles_mapper"])), _int(r["load_wait"]), _int(r["store_wait"]),
                      _int(r["bytes_read"]), _int(r["bytes_written"])], num, "" if not r["mismatches"] else "bad")
                for r in layers]
        net = sim["network"]
        parts.append(f"<h3>Whole layers through the memory system</h3><p>{net['layers']} layers: "
                     f"{_int(net['cycles'])} cycles measured in RTL, {_int(net['cycles_predicted'])} predicted "
                     f"by the latency model ({_e(format(net['error'], '+.1%'))})."
                     "</p>")
        parts.append(_table(["layer", "kind", "dataflow", "tiles", "outputs", "mismatches", "cycles measured",
                             "predicted", "error", "mapper", "load wait", "store wait", "bytes read",
                             "bytes written"], rows, num))
    return _section("simulation", "\n".join(parts))


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
    nav = "".join(f'<a href="#{k}">{_e(t)}</a>' for k, t in SECTIONS)
    sub = (f"{_e(h.get('arch'))} {h['array'][0]}x{h['array'][1]} running {_e(h.get('workload'))} \u00b7 mapper "
           f"{_e(h.get('mapper'))} \u00b7 optimizer {_e(h.get('optimizer'))} \u00b7 target {_e(h.get('target'))}"
           if h.get("array") else "")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(h.get('design', design_dir.name))} \u2014 lego_build report</title>",
        f"<style>\n{CSS}\n</style>",
        "</head>",
        "<body>",
        f'<header><div class="wrap"><h1>{_e(h.get("design", design_dir.name))}</h1><p>{sub}</p>'
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
