"""The self-contained HTML report: determinism, structure, escaping and a headless-Chromium screenshot."""
from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lego_build import compose, design_id, run_all
from lego_build.report import plots
from lego_build.report.html import SECTIONS, headline, load, render_html

CHROMIUM = Path("/usr/bin/chromium")
OVERRIDES = ["workload=resnet18", "arch=nvdla", "arch.rows=4", "arch.cols=4", "target=rtl"]
JSON_FILES = ("analysis.json", "mapping.json", "adg.json", "passes.json", "summary.json", "sim/result.json")
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
    assert plots.implied_dram_bytes_per_cycle(points) == pytest.approx(cfg.arch.dram_bytes_per_cycle)
    assert f"DRAM roof {cfg.arch.dram_bytes_per_cycle:g} B/cycle" in page


def test_headline_without_summary_matches_summary(design, tmp_path):
    _, out = design
    copy = _copy_json(out, tmp_path / out.name)
    (copy / "summary.json").unlink()
    doc = load(copy)
    assert doc["summary"] is None
    computed = headline(copy, doc)
    summary = json.loads((out / "summary.json").read_text())
    for key in ("design", "arch", "workload", "mapper", "optimizer", "target", "array", "macs", "layers_mapped",
                "layers_unmappable", "energy_pj", "cycles", "utilization", "register_bits", "simulation"):
        assert computed[key] == summary[key], key
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
