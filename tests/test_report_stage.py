"""The report stage (lego_build.report.stage) and its headline (lego_build.report.evidence): every
headline figure from the best evidence the build has, the source said, the coverage stated."""
from __future__ import annotations

import csv
import os
import re
from math import prod
from pathlib import Path

import pytest
from test_dodo import check_ok, doit, make_project
from test_flow_app import lego_build, sweep_dirs

from lego_build import compose, design_id, run_all
from lego_build.runtime.atomic import read_json

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

LENET = ["workload=lenet", "target.scope=network"]


@pytest.fixture(scope="module")
def lenet(tmp_path_factory) -> tuple[Path, Path]:
    """``doit build workload=lenet target.scope=network`` (every layer whole in RTL), then the same
    design as a one-job ``lego-build -m`` sweep: the design directory and the sweep's."""
    project = make_project(tmp_path_factory.mktemp("lenet_network"))
    check_ok(doit(project, "build", *LENET))
    sweep = lego_build(project, "-m", *LENET)
    assert sweep.returncode == 0, sweep.stdout + sweep.stderr
    (sweep_dir,) = sweep_dirs(project)
    return project / "out" / design_id(compose(LENET)), sweep_dir


def test_acceptance_every_headline_is_what_the_rtl_measured(lenet):
    """Issue 42 acceptance 1: report.md, the report.html cards, summary.json and the sweep's
    summary.csv show the cycles and utilization measured in RTL (sim/result.json), say so, and
    keep the mapper's roofline figure beside them, labelled."""
    design, sweep_dir = lenet
    sim, mapping = read_json(design / "sim" / "result.json"), read_json(design / "mapping.json")
    fus = prod(read_json(design / "adg.json")["shape"])
    count = {e["name"]: e["count"] for e in mapping["layers"]}
    assert sim["status"] == "pass" and [r["layer"] for r in sim["layers"]] == list(count)
    measured = sum(r["cycles"] * count[r["layer"]] for r in sim["layers"])
    macs = sum(r["macs"] * count[r["layer"]] for r in sim["layers"])
    utilization = macs / (measured * fus)
    mapper = mapping["totals"]["cycles"]
    assert mapper < measured  # the mapper's figure leaves out the tile loads and stores: the test tells them apart
    source = f"measured in RTL: {len(count)} of {len(count)} layers"

    summary = read_json(design / "summary.json")
    assert summary["cycles"] == measured == sim["network"]["cycles"]
    assert summary["utilization"] == pytest.approx(utilization, abs=1e-6)
    assert summary["cycles_source"] == source and set(summary["cycles_by_source"]) == {"rtl"}
    assert summary["mapper_cycles"] == mapper and summary["mapper_gap"] == pytest.approx(measured / mapper, abs=1e-4)
    assert summary["gops"] == pytest.approx(2 * macs / measured * compose(LENET).arch.clock_mhz / 1e3, rel=1e-4)
    assert summary["coverage"]["mac_share"] == 1.0 and summary["coverage"]["layers"] == len(count)

    md = (design / "report.md").read_text()
    assert f"* cycles **{measured:,}** ({source}), array utilization **{utilization:.1%}**" in md
    assert f"* the mapper's roofline: {mapper:,} cycles" in md and f"are {measured / mapper:.2f}x it" in md
    for r in sim["layers"]:
        assert f"| {r['cycles']:,} | measured in RTL |" in md.split(f"| {r['layer']} |", 1)[1].split("\n", 1)[0]
    assert "5 of 5 array layers run whole in RTL (target.scope=network)" in md

    page = (design / "report.html").read_text()
    cards = dict(re.findall(r'<div class="k">([^<]+)</div><div class="v">([^<]+)</div>', page))
    assert cards["Latency"] == f"{measured:,}" and cards["Utilization"] == f"{100 * utilization:.1f}%"
    assert cards["Simulated MACs"] == "100.0%"
    latency = page.split('<div class="k">Latency</div>', 1)[1].split("</div></div>", 1)[0]
    assert source in latency and f"the mapper's roofline: {mapper:,} cycles" in latency

    (row,) = list(csv.DictReader((sweep_dir / "summary.csv").open()))
    assert int(row["cycles"]) == measured and float(row["utilization"]) == pytest.approx(utilization, abs=1e-6)
    assert row["evidence"] == "rtl" and row["cycles_source"] == source and int(row["mapper_cycles"]) == mapper
    sweep_md = (sweep_dir / "report.md").read_text()
    assert f"| {measured:,} | {source} | {utilization:.1%} |" in sweep_md and "| 100.0% | pass |" in sweep_md


def test_whole_layer_rows_name_the_layer_as_written(lenet):
    """LeNet's convs run lowered to GEMMs on the systolic array, and are still convs in the rows."""
    design, _ = lenet
    assert [r["kind"] for r in read_json(design / "sim" / "result.json")["layers"]] == [
        "conv", "conv", "conv", "matmul", "matmul"]


def test_a_sweep_leaves_out_latest_and_names_itself_latest(lenet):
    """Issue 42 item 4: out/latest is the design built by hand; the sweep's job does not move it."""
    design, sweep_dir = lenet
    out = design.parent
    assert os.readlink(out / "latest") == design.name
    assert os.readlink(out / "sweeps" / "latest") == sweep_dir.name


def test_layers_scope_takes_rtl_where_it_ran_and_the_latency_model_elsewhere(tmp_path):
    """GPT-2 at target.scope=layers: the first matmul (c_attn, 12 identical blocks) runs whole in RTL,
    every other layer is timed by the latency model; each repeat counts with the one measurement."""
    run_all(compose(["workload=gpt2", "target.scope=layers", "mapper.objective=latency"]), tmp_path)
    sim, mapping = read_json(tmp_path / "sim" / "result.json"), read_json(tmp_path / "mapping.json")
    summary = read_json(tmp_path / "summary.json")
    ran = {r["layer"]: r for r in sim["layers"]}
    assert list(ran) == ["decode.h.*.attn.c_attn"]
    layers = [e for e in mapping["layers"] if e["status"] == "mapped"]
    assert all("cycles_model" in e for e in layers)  # the latency objective times every layer
    expected = sum((ran[e["name"]]["cycles"] if e["name"] in ran else e["cycles_model"]) * e["count"] for e in layers)
    assert summary["cycles"] == expected
    repeats = layers[0]["count"]
    assert repeats == 12
    assert summary["cycles_by_source"]["rtl"] == {"layers": 12, "cycles": 12 * ran[layers[0]["name"]]["cycles"],
                                                  "macs": 12 * layers[0]["macs"]}
    total = sum(e["count"] for e in layers)
    assert summary["cycles_source"] == f"measured in RTL: 12 of {total} layers; latency model: {total - 12} of " \
                                       f"{total} layers"
    cov = summary["coverage"]
    assert (cov["scope"], cov["layers"], cov["distinct_layers"]) == ("layers", 12, 1)
    assert cov["mac_share"] == pytest.approx(12 * layers[0]["macs"] / summary["macs"], abs=1e-6)
    md = (tmp_path / "report.md").read_text()
    assert f"12 of {total} array layers run whole in RTL (1 distinct, each repeat identical)" in md
    qk = next(e for e in layers if e["name"].endswith("attn.qk"))
    row = f"| {qk['name']} | {qk['op']} | 12 | mapped | {qk['macs']:,} | {qk['cycles_model']:,} | latency model |"
    assert row in md


@pytest.mark.parametrize("clock", [500, 1000])
def test_throughput_at_the_designs_clock_and_at_1ghz_labelled(tmp_path, clock):
    """Issue 44: GOP/s at the design's own clock first; seed 004's 1 GHz figure beside it, labelled,
    when the clock is another (ops per cycle x 1 GHz), in report.md and the report.html card."""
    run_all(compose(["target=rtl", f"arch.clock_mhz={clock}"]), tmp_path)
    s = read_json(tmp_path / "summary.json")
    line = next(ln for ln in (tmp_path / "report.md").read_text().splitlines() if "GOP/s" in ln)
    assert f"{s['gops']:,.2f} GOP/s at {clock} MHz" in line
    labelled = f"{s['ops_per_cycle']:,.2f} GOP/s at 1 GHz, seed 004's convention"
    assert (labelled in line) == (clock != 1000)
    assert ("at 1 GHz, seed 004" in (tmp_path / "report.html").read_text()) == (clock != 1000)
    assert s["gops"] == pytest.approx(s["ops_per_cycle"] * clock / 1000, abs=1e-3)
