"""The HTML report's page kit: its sections, style sheet and the formatting of its values
(escaped text, numbers, energies, shares) and blocks (tables, rows, cards, figures, sections).
"""
from __future__ import annotations

from html import escape

from lego_build.report import evidence

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


def esc(value) -> str:
    return escape(str(value), quote=True)


def fmt_int(value) -> str:
    try:
        return f"{int(round(float(value))):,}"
    except (TypeError, ValueError):
        return esc(value)


def fmt_energy(pj) -> str:
    """An energy in pJ with a readable unit."""
    if pj is None:
        return "-"
    v = float(pj)
    for unit, scale in (("J", 1e12), ("mJ", 1e9), ("\u00b5J", 1e6), ("nJ", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:,.3f} {unit}"
    return f"{v:,.1f} pJ"


def fmt_si(x) -> str:
    v = float(x or 0)
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:g}"


def fmt_pct(x) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}%"


def fmt_share(cov: dict | None) -> str:
    """The simulated share of the network's MACs (:func:`lego_build.report.evidence.coverage`)."""
    return evidence.fmt_share(cov["mac_share"]) if cov and cov.get("scope") else "none"


def fmt_mark(ok) -> str:
    if ok is None:
        return "-"
    return '<span class="good">\u2713</span>' if ok else '<span class="worse">\u2717</span>'


def table_html(head: list[str], rows: list[str], numeric: set[int] = frozenset()) -> str:
    """A table; one of more than ``LONG_TABLE`` rows scrolls in a box of fixed height."""
    ths = "".join(f'<th class="n">{h}</th>' if i in numeric else f"<th>{h}</th>" for i, h in enumerate(head))
    body = "\n".join(rows)
    cls = "tbl long" if len(rows) > LONG_TABLE else "tbl"
    return f'<div class="{cls}"><table><thead><tr>{ths}</tr></thead><tbody>\n{body}\n</tbody></table></div>'


def row_html(cells: list[str], numeric: set[int] = frozenset(), cls: str = "") -> str:
    tds = "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(cells))
    return f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>"


def card_html(key: str, value: str, sub: str = "") -> str:
    s = f'<div class="s">{sub}</div>' if sub else ""
    return f'<div class="card"><div class="k">{key}</div><div class="v">{value}</div>{s}</div>'


def figure_html(svg: str) -> str:
    return f"<figure>\n{svg}</figure>"


def section_html(key: str, body: str) -> str:
    return f'<section id="{key}">\n<h2>{esc(TITLES[key])}</h2>\n{body}\n</section>'
