"""Plots of the HTML report, each returned as an inline SVG string.

Matplotlib on the Agg backend, no pyplot state: every function builds its own
:class:`~matplotlib.figure.Figure`. Output is deterministic (fixed ``svg.hashsalt``,
no metadata, text as paths with the bundled DejaVu Sans, math text off) and
self-contained: no XML prologue, no namespace URLs, element ids prefixed per plot
so several SVGs can share one HTML page.
"""
from __future__ import annotations

import io
import math
import re

import matplotlib

matplotlib.use("Agg")
from matplotlib import ticker  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

RC = {
    "svg.hashsalt": "lego_build-report",
    "svg.fonttype": "path",
    "text.parse_math": False,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#888888",
    "axes.grid": True,
    "grid.color": "#e4e4e4",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "legend.frameon": False,
}
METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}

ROLE_COLORS = {"input": "#3b75af", "weight": "#ef8636", "output": "#519e3e", "mac": "#8c8c8c"}
PALETTE = ("#3b75af", "#ef8636", "#519e3e", "#c53a32", "#8d69b8", "#84584e", "#d57dbe", "#bcbc35", "#42bbcc")
ENERGY_COLOR, CYCLES_COLOR = "#3b75af", "#8d69b8"
MAX_LAYERS = 40
MAX_ADG_SIDE = 8


def _short(name: str, n: int = 30) -> str:
    return name if len(name) <= n else name[: n - 1] + "\u2026"


def energy_unit(max_pj: float) -> tuple[str, float]:
    """The unit (``pJ``, ``nJ`` or ``uJ``) and its scale in pJ for energies up to ``max_pj``."""
    if max_pj >= 1e6:
        return "\u00b5J", 1e6
    return ("nJ", 1e3) if max_pj >= 1e3 else ("pJ", 1.0)


def fmt3(v: float) -> str:
    """A positive number with about three significant digits, thousands separated."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def to_svg(fig: Figure, prefix: str, tight: bool = False) -> str:
    """``fig`` as an ``<svg>`` element for inline HTML, its ids prefixed with ``prefix``; ``tight``:
    cropped to what is drawn, texts outside the figure included (a key below the axes)."""
    buf = io.StringIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buf, format="svg", metadata=METADATA, **({"bbox_inches": "tight"} if tight else {}))
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->\s*", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r"<style[^>]*>.*?</style>\s*", "", svg, flags=re.S)
    svg = svg.replace("xlink:href=", "href=")
    svg = svg.replace('id="', f'id="{prefix}-').replace('href="#', f'href="#{prefix}-')
    svg = svg.replace("url(#", f"url(#{prefix}-")
    svg = re.sub(r"<defs>\s*</defs>\s*", "", svg)
    svg = svg.replace("<svg ", f'<svg class="plot" role="img" aria-label="{prefix}" ', 1)
    return svg.strip() + "\n"


def _figure(w: float, h: float) -> Figure:
    with matplotlib.rc_context(RC):
        return Figure(figsize=(w, h), layout="constrained")


def _pick(layers: list[dict], key, cap: int) -> tuple[list[dict], int]:
    """At most ``cap`` layers, the largest by ``key``, kept in their order; and how many were left out."""
    if len(layers) <= cap:
        return layers, 0
    keep = set(sorted(range(len(layers)), key=lambda i: (-key(layers[i]), i))[:cap])
    return [e for i, e in enumerate(layers) if i in keep], len(layers) - cap


def _n(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def _label(e: dict) -> str:
    return _short(e["name"]) + (f" \u00d7{e['count']}" if e.get("count", 1) > 1 else "")


def layer_bars_svg(layers: list[dict], cap: int = MAX_LAYERS) -> str:
    """Energy (uJ) and latency (cycles) per mapped layer (``mapping.json`` entries, network order).

    Repeated layers count ``count`` times; beyond ``cap`` layers only the most
    energy-hungry are drawn and the title says how many more there are.
    """
    shown, more = _pick(layers, lambda e: e["energy_pj"] * e.get("count", 1), cap)
    n = max(len(shown), 1)
    unit, scale = energy_unit(max((e["energy_pj"] * e.get("count", 1) for e in shown), default=0.0))
    with matplotlib.rc_context(RC):
        fig = _figure(10, 1.3 + 0.2 * n)
        ax_e, ax_c = fig.subplots(1, 2, sharey=True)
        y = list(range(len(shown)))
        ax_e.barh(y, [e["energy_pj"] * e.get("count", 1) / scale for e in shown], color=ENERGY_COLOR, height=0.7)
        ax_c.barh(y, [e["cycles"] * e.get("count", 1) for e in shown], color=CYCLES_COLOR, height=0.7)
        ax_e.set_yticks(y, [_label(e) for e in shown])
        ax_e.set_ylim(len(shown) - 0.5, -0.6)
        ax_e.set_xlabel(f"energy ({unit})")
        ax_c.set_xlabel("latency (cycles)")
        ax_c.xaxis.set_major_formatter(ticker.EngFormatter(sep=""))
        ax_e.xaxis.set_major_formatter(ticker.EngFormatter(sep=""))
        for ax in (ax_e, ax_c):
            ax.grid(axis="y", visible=False)
            ax.tick_params(axis="y", length=0)
        if more:
            fig.suptitle(f"The {len(shown)} layers with the most energy; {more} more in the table",
                         x=0.01, ha="left", fontsize=8.5, color="#555555")
        ax_e.set_title("Energy per layer", loc="left")
        ax_c.set_title("Latency per layer", loc="left")
    return to_svg(fig, "layers")


def utilization_svg(layers: list[dict], overall: float | None = None, cap: int = MAX_LAYERS) -> str:
    """Array utilization per mapped layer, with the whole network's (MAC-weighted) as a line."""
    shown, more = _pick(layers, lambda e: e["cycles"] * e.get("count", 1) * (1 - e["utilization"]), cap)
    n = max(len(shown), 1)
    with matplotlib.rc_context(RC):
        fig = _figure(10, 1.3 + 0.2 * n)
        ax = fig.subplots()
        y = list(range(len(shown)))
        u = [100 * e["utilization"] for e in shown]
        ax.barh(y, u, height=0.7, color=["#519e3e" if v >= 75 else "#e0a030" if v >= 40 else "#c53a32" for v in u])
        for yi, v in zip(y, u):
            ax.text(v + 0.8, yi, f"{v:.0f}%", va="center", fontsize=7.5, color="#444444")
        if overall is not None:
            ax.axvline(100 * overall, color="#333333", lw=1, ls="--")
            ax.text(100 * overall, -0.9, f" network {100 * overall:.1f}%", fontsize=8, va="bottom", color="#333333")
        ax.set_yticks(y, [_label(e) for e in shown])
        ax.set_xlim(0, 108)
        ax.set_ylim(len(shown) - 0.5, -1.2)
        ax.set_xlabel("utilization (% of FU-cycles doing a MAC)")
        ax.grid(axis="y", visible=False)
        ax.tick_params(axis="y", length=0)
        note = f" (the {len(shown)} wasting most FU-cycles; {more} more in the table)" if more else ""
        ax.set_title("Utilization per layer" + note, loc="left")
    return to_svg(fig, "util")


def _hbars(ax, data: dict, colors: list[str], title: str) -> None:
    names = list(data)
    unit, scale = energy_unit(max(data.values(), default=0.0))
    vals = [data[k] / scale for k in names]
    total = sum(vals) or 1.0
    y = list(range(len(names)))
    ax.barh(y, vals, color=colors, height=0.65)
    ax.set_yticks(y, [_short(k, 20) for k in names])
    ax.invert_yaxis()
    top = max(vals, default=0.0) or 1.0
    for yi, v in zip(y, vals):
        ax.text(v + 0.01 * top, yi, f"{fmt3(v)} {unit}  {100 * v / total:.1f}%", va="center", fontsize=8)
    ax.set_xlim(0, top * 1.45)
    ax.set_xlabel(f"energy ({unit})")
    ax.xaxis.set_major_formatter(ticker.EngFormatter(sep=""))
    ax.grid(axis="y", visible=False)
    ax.tick_params(axis="y", length=0)
    ax.set_title(title, loc="left")


def level_order(levels) -> list[str]:
    """``mac`` first, then the memory levels as given, then ``network`` and ``dram``."""
    last = [k for k in ("network", "dram") if k in levels]
    return [k for k in ("mac",) if k in levels] + [k for k in levels if k not in ("mac", "network", "dram")] + last


def energy_breakdown_svg(by_level_pj: dict, by_tensor_pj: dict) -> str:
    """Network energy by memory level and by tensor (``mapping.json`` totals, pJ)."""
    rows = max(len(by_level_pj), len(by_tensor_pj), 1)
    by_level_pj = {k: by_level_pj[k] for k in level_order(by_level_pj)}
    level_colors = [ROLE_COLORS["mac"] if k == "mac" else "#1d2330" if k == "dram" else "#9bb0c8" if k == "network"
                    else PALETTE[(i + 4) % len(PALETTE)] for i, k in enumerate(by_level_pj)]
    with matplotlib.rc_context(RC):
        fig = _figure(10, 1.2 + 0.3 * rows)
        ax_l, ax_t = fig.subplots(1, 2)
        _hbars(ax_l, by_level_pj, level_colors, "By memory level")
        _hbars(ax_t, by_tensor_pj, [ROLE_COLORS.get(k, "#8c8c8c") for k in by_tensor_pj], "By tensor")
    return to_svg(fig, "energy")


# ---------------------------------------------------------------- roofline

def tensor_bits(analysis_layer: dict | None) -> dict[str, int]:
    """Word bits of the mapper's roles (the first input is ``input``, other inputs ``weight``)."""
    bits = {"input": 8, "weight": 8, "output": 32}
    tensors = ((analysis_layer or {}).get("ir") or {}).get("tensors") or []
    ins = [t for t in tensors if t.get("role") == "in"]
    outs = [t for t in tensors if t.get("role") == "out"]
    if ins:
        bits["input"] = ins[0].get("bits", 8)
    if ins[1:]:
        bits["weight"] = max(t.get("bits", 8) for t in ins[1:])
    if outs:
        bits["output"] = outs[0].get("bits", 32)
    return bits


def _output_words(analysis_layer: dict | None) -> float | None:
    tensors = ((analysis_layer or {}).get("ir") or {}).get("tensors") or []
    outs = [t for t in tensors if t.get("role") == "out" and t.get("shape")]
    return float(math.prod(outs[0]["shape"])) if outs else None


def dram_bytes(layer: dict, analysis_layer: dict | None = None, final_bits: int = 8) -> float:
    """DRAM bytes one instance of a mapped layer moves (``accesses`` keys ``dram/<role>``).

    Words are sized by the tensor bits in ``analysis.json`` (default 1 byte for inputs
    and weights, 4 for outputs); output writes up to the tensor's size are the
    requantised ``final_bits`` results, as the cost model counts them.
    """
    bits = tensor_bits(analysis_layer)
    size = _output_words(analysis_layer)
    total_bits = 0.0
    for key, acc in sorted((layer.get("accesses") or {}).items()):
        level, _, role = key.partition("/")
        if level != "dram":
            continue
        b = bits.get(role, 8)
        reads, writes = float(acc.get("reads", 0.0)), float(acc.get("writes", 0.0))
        if role == "output" and size is not None:
            total_bits += reads * b + min(writes, size) * final_bits + max(0.0, writes - size) * b
        else:
            total_bits += (reads + writes) * b
    return total_bits / 8


def roofline_points(layers: list[dict], analysis: dict, final_bits: int = 8) -> list[dict]:
    """Per mapped layer: MACs per DRAM byte (``intensity``) and MACs per cycle (``perf``)."""
    by_name = {a["name"]: a for a in analysis.get("layers", [])}
    points = []
    for e in layers:
        b = dram_bytes(e, by_name.get(e["name"]), final_bits)
        cycles = e.get("cycles") or 0
        points.append({
            "name": e["name"], "op": e.get("op", "?"), "macs": e["macs"], "cycles": cycles, "dram_bytes": b,
            "dram_cycles": (e.get("level_cycles") or {}).get("dram"),
            "intensity": e["macs"] / b if b > 0 else None,
            "perf": e["macs"] / cycles if cycles > 0 else None,
        })
    return points


def implied_dram_bytes_per_cycle(points: list[dict], tol: float = 0.01) -> float | None:
    """The DRAM bandwidth of the cost model, bytes / DRAM-level cycles, when every layer agrees."""
    ratios = sorted(p["dram_bytes"] / p["dram_cycles"] for p in points
                    if p.get("dram_cycles") and p["dram_bytes"] > 0)
    if not ratios:
        return None
    mid = ratios[len(ratios) // 2]
    if all(abs(r - mid) <= tol * mid for r in ratios):
        return round(mid, 6)
    return None


def _log_label(v: float, _pos=None) -> str:
    if v >= 1e4 or v < 1e-2:
        return f"1e{math.log10(v):.0f}" if v > 0 else "0"
    return f"{v:g}"


def roofline_svg(points: list[dict], peak_macs_per_cycle: float, dram_bytes_per_cycle: float | None,
                 bw_note: str = "") -> str:
    """Log-log roofline: achieved MACs/cycle against MACs per DRAM byte, one dot per layer."""
    pts = [p for p in points if p.get("intensity") and p.get("perf")]
    ops = sorted({p["op"] for p in pts})
    with matplotlib.rc_context(RC):
        fig = _figure(10, 4.6)
        ax = fig.subplots()
        ax.set_xscale("log")
        ax.set_yscale("log")
        xs = [p["intensity"] for p in pts] or [1.0]
        ys = [p["perf"] for p in pts] or [1.0]
        x_lo, x_hi = min(xs) / 4, max(xs) * 4
        if dram_bytes_per_cycle:
            ridge = peak_macs_per_cycle / dram_bytes_per_cycle
            x_lo, x_hi = min(x_lo, ridge / 4), max(x_hi, ridge * 4)
        y_lo = min(min(ys), peak_macs_per_cycle) / 8
        y_hi = peak_macs_per_cycle * 2.5
        ax.set_xlim(x_lo, x_hi)
        ax.set_ylim(y_lo, y_hi)
        roof_x = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
        if dram_bytes_per_cycle:
            roof_y = [min(peak_macs_per_cycle, dram_bytes_per_cycle * x) for x in roof_x]
            ax.plot(roof_x, roof_y, color="#222222", lw=1.6, zorder=2)
            ax.plot([ridge, ridge], [y_lo, peak_macs_per_cycle], color="#999999", lw=0.8, ls=":", zorder=1)
            xb = math.sqrt(x_lo * ridge)
            ax.annotate(f"DRAM {dram_bytes_per_cycle:g} B/cycle{bw_note}", (xb, dram_bytes_per_cycle * xb),
                        xytext=(7, -3), textcoords="offset points", ha="left", va="top", fontsize=8,
                        color="#222222")
        else:
            ax.axhline(peak_macs_per_cycle, color="#222222", lw=1.6, zorder=2)
            ax.text(x_lo * 1.2, peak_macs_per_cycle / 1.6, "no DRAM bandwidth known: compute roof only",
                    fontsize=8, color="#c53a32")
        ax.annotate(f"compute roof {peak_macs_per_cycle:g} MACs/cycle", (x_hi, peak_macs_per_cycle),
                    xytext=(-4, 5), textcoords="offset points", ha="right", fontsize=8, color="#222222")
        for i, op in enumerate(ops):
            sel = [p for p in pts if p["op"] == op]
            ax.scatter([p["intensity"] for p in sel], [p["perf"] for p in sel], s=28, color=PALETTE[i % len(PALETTE)],
                       edgecolor="white", linewidth=0.6, label=f"{op} ({len(sel)})", zorder=3)
        if len(pts) <= 12:
            for p in pts:
                ax.annotate(_short(p["name"], 22), (p["intensity"], p["perf"]), xytext=(4, -9),
                            textcoords="offset points", fontsize=7, color="#555555")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(ticker.FuncFormatter(_log_label))
            axis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("operational intensity (MACs per DRAM byte)")
        ax.set_ylabel("achieved MACs per cycle")
        ax.grid(True, which="major")
        if ops:
            ax.legend(loc="lower right", fontsize=8)
        ax.set_title("Roofline", loc="left")
    return to_svg(fig, "roofline")


# ---------------------------------------------------------------- ADG

def _net_colors(nets: list[dict]) -> list[str]:
    colors, n_in = [], 0
    for net in nets:
        if net.get("role") == "out":
            colors.append(ROLE_COLORS["output"])
        else:
            colors.append(ROLE_COLORS["input"] if n_in == 0 else ROLE_COLORS["weight"] if n_in == 1
                          else PALETTE[(3 + n_in) % len(PALETTE)])
            n_in += 1
    return colors


def adg_svg(adg: dict, max_side: int = MAX_ADG_SIDE) -> str | None:
    """The FU grid with each tensor's links (arrows) and memory ports (dots); None above ``max_side``."""
    rows, cols = adg["shape"]
    if rows > max_side or cols > max_side:
        return None
    nets = adg.get("nets", [])
    colors = _net_colors(nets)
    k = max(len(nets), 1)
    corners = [(-0.3, -0.3), (0.3, -0.3), (-0.3, 0.3), (0.3, 0.3), (0.0, -0.34), (0.0, 0.34)]
    with matplotlib.rc_context(RC):
        fig = _figure(min(10, 2.6 + 1.0 * cols), 1.2 + 0.95 * rows)
        ax = fig.subplots()
        ax.set_aspect("equal")
        ax.axis("off")
        for r in range(rows):
            for c in range(cols):
                ax.add_patch(Rectangle((c - 0.38, -r - 0.38), 0.76, 0.76, facecolor="#f3f3f3",
                                       edgecolor="#9a9a9a", lw=0.8, zorder=1))
                ax.text(c, -r, f"{r},{c}", ha="center", va="center", fontsize=6.5, color="#9a9a9a", zorder=2)
        handles = []
        for i, (net, color) in enumerate(zip(nets, colors)):
            off = (i - (k - 1) / 2) * 0.1
            delayed = 0
            for link in net.get("links", []):
                (r0, c0), (r1, c1) = link["src"], link["dst"]
                is_delay = bool(link.get("delay") or link.get("fifo") or link.get("kind", "direct") != "direct")
                delayed += is_delay
                x0, y0, x1, y1 = c0, -r0, c1, -r1
                dx, dy = x1 - x0, y1 - y0
                norm = math.hypot(dx, dy)
                if norm == 0:
                    ax.add_patch(FancyArrowPatch((x0 - 0.2, y0 + 0.2 + off), (x0 + 0.2, y0 + 0.2 + off),
                                                 connectionstyle="arc3,rad=-1.2", arrowstyle="-|>", mutation_scale=7,
                                                 color=color, lw=1.0, zorder=4))
                    continue
                px, py = -dy / norm * off, dx / norm * off
                shrink = 0.36 / norm
                a = (x0 + dx * shrink + px, y0 + dy * shrink + py)
                b = (x1 - dx * shrink + px, y1 - dy * shrink + py)
                ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=8, color=color, lw=1.2,
                                             ls="--" if is_delay else "-", zorder=4,
                                             connectionstyle="arc3,rad=0.25" if norm > 1.01 else "arc3"))
            cx, cy = corners[i % len(corners)]
            ports = net.get("ports", [])
            if ports:
                ax.scatter([p[1] + cx for p in ports], [-p[0] + cy for p in ports], s=16, marker="s",
                           color=color, edgecolor="white", linewidth=0.4, zorder=5)
            label = (f"{net.get('tensor', '?')} ({net.get('role', '?')}, {net.get('bits', '?')} b): "
                     + _n(len(net.get("links", [])), "link") + (f" ({delayed} delayed, dashed)" if delayed else "")
                     + ", " + _n(len(ports), "port"))
            handles.append(ax.scatter([], [], s=30, marker="s", color=color, label=label))
        ax.set_xlim(-0.7, cols - 0.3)
        ax.set_ylim(-rows + 0.3, 0.7)
        if handles:
            fig.legend(handles=handles, loc="outside lower center", ncols=1, fontsize=8)
        ax.set_title(f"{rows}x{cols} FUs (row, col); arrows: links, squares: memory ports", loc="left",
                     fontsize=9, fontweight="normal")
    return to_svg(fig, "adg")


# ---------------------------------------------------------------- back-end passes

PASS_BITS = ("register_bits", "fifo_bits", "gated_register_bits")
PASS_COUNTS = ("adders", "adder_inputs", "multipliers", "muxes", "buffer_ports", "nodes", "edges")


def passes_svg(passes: list[dict]) -> str:
    """Storage bits and the primitive counts that change, after each back-end pass (``passes.json``)."""
    names = [p.get("pass", "?") for p in passes]
    x = list(range(len(passes)))

    def series(key):
        return [p.get(key, 0) or 0 for p in passes]

    bits = [k for k in PASS_BITS if any(series(k)) or k == "register_bits"]
    counts = [k for k in PASS_COUNTS if len(set(series(k))) > 1]
    with matplotlib.rc_context(RC):
        fig = _figure(10, 3.8)
        ax_b, ax_n = fig.subplots(1, 2)
        for ax, keys, title, ylabel in ((ax_b, bits, "Storage bits after each pass", "bits"),
                                        (ax_n, counts, "Primitive counts that change", "count")):
            for i, key in enumerate(keys):
                color = PALETTE[(i + (0 if ax is ax_b else 3)) % len(PALETTE)]
                ax.plot(x, series(key), marker="o", ms=3.5, lw=1.4, color=color, label=key.replace("_", " "))
            top = max((v for k in keys for v in series(k)), default=0)
            ax.set_ylim(0, top * 1.25 + 1)
            ax.set_xticks(x, [_short(n, 18) for n in names], rotation=35, ha="right")
            ax.set_ylabel(ylabel)
            if keys:
                ax.legend(fontsize=7.5, loc="upper left")
            ax.set_title(title, loc="left")
        for i, key in enumerate(bits):
            ys = series(key)
            for j in range(1, len(ys)):
                if ys[j] < ys[j - 1]:
                    ax_b.annotate(f"\u2212{100 * (ys[j - 1] - ys[j]) / ys[j - 1]:.0f}%", (j, ys[j]), xytext=(5, 5),
                                  textcoords="offset points", ha="left", fontsize=8, fontweight="bold",
                                  color=PALETTE[i % len(PALETTE)])
        if not counts:
            ax_n.text(0.5, 0.5, "no pass changes a primitive count", transform=ax_n.transAxes, ha="center",
                      color="#666666")
    return to_svg(fig, "passes")
