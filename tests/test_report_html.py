"""The self-contained HTML report: determinism, structure, escaping and a headless-Chromium screenshot."""
from __future__ import annotations

import json
import shutil
import subprocess
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lego_build import compose, design_id, run_all
from lego_build.report import plots
from lego_build.report.html import SECTIONS, headline, load, render_html

# the module's builds are shared fixtures; its tests stay on one xdist worker (--dist loadscope)
pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
OVERRIDES = ["workload=resnet18", "arch=nvdla", "arch.rows=4", "arch.cols=4", "target=rtl"]
JSON_FILES = ("analysis.json", "mapping.json", "adg.json", "passes.json", "summary.json", "sim/result.json",
              "config.yaml")  # the resolved config every stage writes: the names of a design without summary.json
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@pytest.fixture(scope="module")
def design(tmp_path_factory) -> tuple[object, Path]:
    """A real small design: ResNet-18 on a 4x4 NVDLA-style array, RTL only (about 3 s)."""
    cfg = compose(OVERRIDES)
    out = tmp_path_factory.mktemp("report_html") / design_id(cfg)
    run_all(cfg, out)
    return cfg, out


@pytest.fixture(scope="module")
def page(design) -> str:
    return render_html(design[1])


#: a design with unmappable layers (stride-2 convs on a KH-OH array planned for stride 1 only: eyeriss_ruby
#: cut to its first dataflow; the preset carries stride-2 and replicated forms) and simulated tiles incl. an
#: edge tile
PARTIAL = ["workload=resnet18", "arch=eyeriss_ruby", "arch.rows=3", "arch.cols=4", "target.tile_steps=2000",
           "target.data=[random,min]"]


@pytest.fixture(scope="module")
def partial(tmp_path_factory) -> tuple[dict, Path]:
    cfg = compose(PARTIAL)
    cfg.arch.dataflows = {"khoh": cfg.arch.dataflows["khoh"]}  # composed configs are plain dataclasses
    out = tmp_path_factory.mktemp("report_partial") / design_id(cfg)
    run_all(cfg, out)
    return json.loads((out / "summary.json").read_text()), out


def expected_figures(summary: dict) -> list[str]:
    """What the page must show for a network with unmappable layers (issue 16, item 6)."""
    share = summary["unmappable_mac_share"]
    return [f"{summary['energy_pj'] / summary['macs_mapped']:.2f} pJ per mapped MAC",
            f"mapped layers only: {share:.1%} of the MACs are in unmappable layers",
            "total (mapped layers only)"]


def _copy_json(src: Path, dst: Path) -> Path:
    for name in JSON_FILES:
        if (src / name).is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / name, dst / name)
    return dst


class _Checker(HTMLParser):
    """Tag balance (void and self-closed elements aside), element ids and script/link tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.ids += [v for k, v in attrs if k == "id"]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)
        self.ids += [v for k, v in attrs if k == "id"]

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()


def test_render_is_deterministic_and_self_contained(design, page):
    assert render_html(design[1]) == page
    for key, title in SECTIONS:
        assert f'<section id="{key}">\n<h2>{title}</h2>' in page
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower() and "<link" not in page.lower() and "@import" not in page
    assert page.startswith("<!DOCTYPE html>")
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert not checker.errors, checker.errors[:5]
    assert not checker.stack, checker.stack
    assert {"html", "head", "body", "header", "main", "section", "table", "svg", "figure"} <= checker.tags
    assert len(checker.ids) == len(set(checker.ids)), "duplicate element ids across the inline SVGs"
    assert page.count("<svg") == 6  # layer bars, energy, utilization, roofline, ADG, passes


def test_headline_and_sections_content(design, page):
    cfg, out = design
    summary = json.loads((out / "summary.json").read_text())
    assert summary["design"] in page and "nvdla" in page and "resnet18" in page
    assert f"{summary['cycles']:,}" in page
    assert '<span class="badge skipped">skipped</span>' in page and "target=rtl" in page
    assert 'aria-label="adg"' in page
    # the roofline's bandwidth roof is the cost model's: bytes of the dram/ accesses over DRAM cycles
    doc = load(out)
    mapped = [e for e in doc["mapping"]["layers"] if e["status"] == "mapped"]
    points = plots.roofline_points(mapped, doc["analysis"], doc["adg"]["operand_bits"])
    assert plots.implied_dram_bytes_per_cycle(points) == pytest.approx(cfg.arch.memsys.dram_bytes_per_cycle)
    assert f"DRAM roof {cfg.arch.memsys.dram_bytes_per_cycle:g} B/cycle" in page
    # nothing ran in RTL: each layer's cycles are the latency model's where the map stage timed it, else
    # the mapper's roofline, and the cards say which
    layers = [e for e in mapped]
    model = sum(e["count"] for e in layers if "cycles_model" in e)
    total = sum(e["count"] for e in layers)
    want = "; ".join(part for part in (f"latency model: {model} of {total} layers" if model else "",
                                       f"mapper's roofline: {total - model} of {total} layers" if model < total else "")
                     if part)
    assert summary["cycles_source"] == want and escape(want) in page
    assert summary["cycles"] == sum(e.get("cycles_model", e["cycles"]) * e["count"] for e in layers)
    assert summary["coverage"]["scope"] is None and "nothing simulated" in page
    assert "Simulated MACs</div><div class=\"v\">none</div>" in page


def test_headline_without_summary_matches_summary(design, tmp_path):
    _, out = design
    copy = _copy_json(out, tmp_path / out.name)
    (copy / "summary.json").unlink()
    doc = load(copy)
    assert doc["summary"] is None
    computed = headline(copy, doc)
    summary = {k: v for k, v in json.loads((out / "summary.json").read_text()).items() if k != "format_version"}
    assert computed == summary  # one summary function (lego_build.report.summary.summarize)
    html_text = render_html(copy)
    assert summary["design"] in html_text and "https://" not in html_text


def test_strings_from_json_are_escaped(design, tmp_path):
    _, out = design
    copy = _copy_json(out, tmp_path / "evil")
    evil = '<script>alert("x")</script> $\\frac{a}{b}$ & co'
    for name in ("mapping.json", "analysis.json"):
        doc = json.loads((copy / name).read_text())
        first = next(e for e in doc["layers"] if e["name"] == "conv1")
        first["name"] = evil
        (copy / name).write_text(json.dumps(doc))
    sim = {"status": "fail", "match": False, "cycles_match": True, "outputs": 4, "mismatches": 1, "seed": 1,
           "tiles": [{"layer": evil, "kind": "<b>conv</b>", "dataflow": "icoc", "tile": {"k": 1}, "outputs": 4,
                      "mismatches": 1, "match": False, "cycles_simulated": 9, "cycles_predicted": 9,
                      "cycles_match": True}]}
    (copy / "sim" / "result.json").write_text(json.dumps(sim))
    html_text = render_html(copy)
    assert "<script" not in html_text and "<b>conv</b>" not in html_text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html_text
    assert '<span class="badge fail">fail</span>' in html_text


def test_per_mac_energy_and_unmappable_share(partial):
    """Energy per MAC divides by the MACs the energy covers; every total says what it leaves out."""
    summary, out = partial
    mapping = json.loads((out / "mapping.json").read_text())
    mapped = [e for e in mapping["layers"] if e["status"] == "mapped"]
    assert summary["layers_unmappable"] > 0
    assert summary["macs_mapped"] == sum(e["macs"] * e["count"] for e in mapped) < summary["macs"]
    assert summary["pj_per_mac"] == pytest.approx(summary["energy_pj"] / summary["macs_mapped"], rel=1e-6)
    assert summary["pj_per_mac"] > summary["energy_pj"] / summary["macs"]  # what the report used to show
    assert summary["unmappable_mac_share"] == pytest.approx(1 - summary["macs_mapped"] / summary["macs"], abs=1e-6)
    html_text = (out / "report.html").read_text()
    for text in expected_figures(summary):
        assert text in html_text, text
    assert html_text.count("mapped layers only: ") >= 2  # the energy and the latency cards
    md = (out / "report.md").read_text()
    assert f"{summary['pj_per_mac']:.2f} pJ per mapped MAC" in md and "of the MACs are in unmappable layers" in md


def test_tile_scope_states_its_coverage(partial):
    """Issue 42 item 4: the tiles simulated and their share of the network's MACs, in every report."""
    from math import prod

    from lego_build.report.evidence import fmt_share

    summary, out = partial
    sim = json.loads((out / "sim" / "result.json").read_text())
    macs = sum(prod(t["tile"].values()) for t in sim["tiles"])
    cov = summary["coverage"]
    assert (cov["scope"], cov["tiles"], cov["macs"]) == ("tiles", len(sim["tiles"]), macs)
    assert cov["mac_share"] == pytest.approx(macs / summary["macs"], abs=1e-6) and 0 < cov["mac_share"] < 0.01
    text = f"{len(sim['tiles'])} tiles of {len({t['layer'] for t in sim['tiles']})} of the"
    share = f"{macs:,} MACs, {fmt_share(cov['mac_share'])} of the network's"
    md = (out / "report.md").read_text()
    assert text in md and share in md
    html_text = (out / "report.html").read_text()
    assert f'Simulated MACs</div><div class="v">{fmt_share(cov["mac_share"])}</div>' in html_text
    assert escape(share) in html_text


def test_tile_rows_show_their_offsets(partial):
    summary, out = partial
    sim = json.loads((out / "sim" / "result.json").read_text())
    kinds = {t["kind"]: t for t in sim["tiles"]}
    assert "edge" in kinds and any(kinds["edge"]["offset"].values())
    corner = next(t for t in sim["tiles"] if t["layer"] == kinds["edge"]["layer"] and t["kind"] != "edge")
    assert not any(corner["offset"].values())
    html_text = (out / "report.html").read_text()
    shown = " ".join(f"{k}+{v}" for k, v in kinds["edge"]["offset"].items() if v)
    assert f'<code class="offset">{shown}</code>' in html_text and '<code class="offset">origin</code>' in html_text
    assert "| origin |" in (out / "report.md").read_text()


def test_adg_picture_only_for_small_arrays():
    assert plots.adg_svg({"shape": [9, 4], "nets": []}) is None
    svg = plots.adg_svg({"shape": [2, 2], "nets": [
        {"tensor": "X", "role": "in", "bits": 8, "ports": [[0, 0]],
         "links": [{"src": [0, 0], "dst": [0, 1], "delay": 1, "kind": "direct"}]}]})
    assert svg.startswith("<svg") and "http" not in svg and 'id="adg-' in svg


def _non_white_and_coloured(png: Path) -> tuple[float, int]:
    """Fraction of non-white pixels below the dark header bar, and the number of saturated pixels."""
    import matplotlib.image as mpimg

    img = mpimg.imread(str(png))[..., :3]  # PNG: floats in [0, 1]
    non_white = float((img[200:].min(axis=2) < 0.9).mean())
    coloured = int(((img.max(axis=2) - img.min(axis=2)) > 0.25).sum())
    return non_white, coloured


def test_screenshot_in_headless_chromium(page, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent (Debian: apt-get install -y chromium)")
    html_file, png = tmp_path / "report.html", tmp_path / "report.png"
    html_file.write_text(page, encoding="utf-8")
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
           f"--screenshot={png}", "--window-size=1280,2400", html_file.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    log = proc.stdout + proc.stderr
    assert png.is_file() and png.stat().st_size > 10_000, log[-2000:]
    console = [ln for ln in log.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln or "net::ERR" in ln]
    assert not console, console
    non_white, coloured = _non_white_and_coloured(png)
    assert non_white > 0.03, f"only {non_white:.1%} of the screenshot below the header is not white"
    assert coloured > 20_000, f"only {coloured} coloured pixels: the plots did not render"


def test_figures_render_in_headless_chromium(partial, tmp_path):
    """The corrected figures as Chromium renders them: a screenshot of the page with unmappable
    layers and its DOM after rendering, which must hold the per-mapped-MAC energy, the unmappable
    share on both totals and the tile offsets."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent (Debian: apt-get install -y chromium)")
    summary, out = partial
    flags = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    uri = (out / "report.html").as_uri()
    png = tmp_path / "partial.png"
    shot = subprocess.run([*flags, f"--screenshot={png}", "--window-size=1280,2400", uri], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert png.is_file() and png.stat().st_size > 10_000, shot.stderr[-2000:]
    dom = subprocess.run([*flags, "--dump-dom", uri], capture_output=True, text=True, timeout=120, cwd=tmp_path).stdout
    assert "<main" in dom
    for text in expected_figures(summary):
        assert text in dom, text
    assert dom.count("mapped layers only: ") >= 2
    assert '<code class="offset">' in dom and "origin" in dom
