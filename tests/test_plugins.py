"""Extension points (lego_build.runtime.registry, config presets): a user's package adds an FU,
a back-end pass, a mapper search, a model importer and arch/workload presets without any
file of lego_build naming it. The package is ``tests/plugins/lego_demo_plugin``; its
``.dist-info`` beside it installs it for whoever has ``tests/plugins`` on the path."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lego_build.errors import ConfigError, StageError

REPO_ROOT = Path(__file__).resolve().parents[1]
PLUGINS = REPO_ROOT / "tests" / "plugins"
PASSES = "[reduction_tree,pin_reuse,fifo_sizing,bitwidth,acc_fusion,wire_audit,delay_matching,broadcast_rewiring," \
         "power_gating,delay_elaboration]"
LAYERS_CSV = "name,M,N,K\nproj,7,5,11\nhead,4,9,6\n"


@pytest.fixture
def plugin(monkeypatch):
    """The demo plugin installed for this process (entry points are read from sys.path)."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    for name in [m for m in sys.modules if m.startswith("lego_demo_plugin")]:
        monkeypatch.delitem(sys.modules, name)


def test_lego_build_does_not_name_the_plugin():
    sources = [p for d in ("lego_build", "rtl_templates_free", "conf") for p in (REPO_ROOT / d).rglob("*")
               if p.is_file() and p.suffix in (".py", ".yaml")]
    names = ("lego_demo_plugin", "shiftadd", "lego_demo_target", "demo_lines")
    assert sources and not [p for p in sources if any(name in p.read_text() for name in names)]


def test_registries_list_the_plugin_only_when_installed(plugin):
    from lego_build.analysis.importers import IMPORTERS
    from lego_build.backend.passes import PASSES as PASS_REGISTRY
    from lego_build.config.compose import available_options
    from lego_build.fulang.kinds import FUS
    from lego_build.mapping.searches import SEARCHES

    assert FUS.names() == ("mac", "bitfusion", "fp16", "int8", "fp4_int4", "vsq_int4", "mx4", "mx6", "mx9",
                           "shiftadd", "zp4")
    assert "wire_audit" in PASS_REGISTRY and "budgeted" in SEARCHES and "gemm_csv" in IMPORTERS
    assert {"demo_array"} <= set(available_options("arch")) and "demo_csv" in available_options("workload")
    with pytest.raises(ConfigError, match=r"^arch.operand_bits=20: arch.fu=shiftadd builds one partial product"):
        from lego_build import compose

        compose(["arch=demo_array", "arch.operand_bits=20", "arch.acc_bits=48"])


def test_plugin_names_are_unknown_without_the_plugin():
    from lego_build import compose

    with pytest.raises(ConfigError,
                       match=r"^arch.fu=shiftadd: unknown; choose one of mac, bitfusion, fp16, .*, mx9 \(or install"):
        compose(["arch.fu=shiftadd"])


def test_wire_audit_pass_names_a_bad_edge(plugin, tmp_path):
    from dataclasses import replace

    from lego_build.backend.passes import PASSES as PASS_REGISTRY
    from lego_build.backend.stage import optimize
    from lego_build.flow.stages import run_stage
    from lego_build.flow.validate import compose
    from lego_build.runtime.artifacts import read_artifact

    cfg = compose(["target=rtl"])
    for stage in ("analyze", "graph"):
        run_stage(stage, cfg, tmp_path)
    dag, _, _ = optimize(read_artifact(tmp_path, "adg.json"), cfg.optimizer)
    audit = PASS_REGISTRY.get("wire_audit")
    assert audit.run(dag, cfg.optimizer).passes[-1] == "wire_audit"
    edge = dag.edges[0]
    wide = replace(dag, edges=(replace(edge, width=999), *dag.edges[1:]))
    with pytest.raises(StageError, match=rf"^wire_audit: edge {edge.src}\.{edge.src_port} -> .* is 999 bits"):
        audit.run(wide, cfg.optimizer)


@pytest.mark.slow
def test_a_design_built_from_every_extension_simulates_bit_exact(tmp_path):
    """``doit build`` in a fresh project, with the plugin installed: its arch preset (the shift-add
    FU), its workload preset (the CSV importer), its search and its pass, through Verilator."""
    shutil.copy(REPO_ROOT / "dodo.py", tmp_path / "dodo.py")
    (tmp_path / "layers.csv").write_text(LAYERS_CSV)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")])}
    args = ["arch=demo_array", "workload=demo_csv", "mapper.search=budgeted", "mapper.patience=20",
            f"optimizer.passes={PASSES}"]
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(tmp_path / "dodo.py"), "build", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    design = (tmp_path / "out" / "latest").resolve()
    manifest = json.loads((design / "rtl" / "manifest.json").read_text())
    assert any(name.startswith("demo_shiftadd_8x8") for name in manifest)  # the plugin's FU was generated
    dag = json.loads((design / "dag.json").read_text())
    assert "wire_audit" in dag["passes"]
    mapping = json.loads((design / "mapping.json").read_text())
    assert [e["name"] for e in mapping["layers"]] == ["proj", "head"]  # the CSV's layers
    assert all(0 < e["candidates"]["valid"] <= 20 for e in mapping["layers"])  # the budget held
    sim = json.loads((design / "sim" / "result.json").read_text())
    assert sim["status"] == "pass" and sim["mismatches"] == 0 and sim["comparisons"] > 0
    assert "fu: shiftadd" in (design / "config.yaml").read_text()
    # without the plugin the same command is a one-line config error, and out/ is untouched
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "out").rglob("*"))
    bare = subprocess.run([sys.executable, "-m", "doit", "-f", str(tmp_path / "dodo.py"), "build", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert bare.returncode == 2 and bare.stderr.count("\n") == 1 and "arch=demo_array" in bare.stderr, bare.stderr
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "out").rglob("*")) == before


def test_a_plugin_target_builds_through_doit_and_shows_in_the_report(tmp_path):
    """Issue 43, acceptance 2: ``doit build target=demo_lines`` in a fresh project with the plugin
    target on the path (``tests/plugins/lego_demo_target``: its entry point and its preset) runs the
    simulate stage through it; its product lands in ``sim/result.json``, ``summary.json`` and both
    reports, which no file of lego_build names."""
    shutil.copy(REPO_ROOT / "dodo.py", tmp_path / "dodo.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(tmp_path / "dodo.py"), "build", "target=demo_lines",
                           "workload.M=8", "workload.N=8", "workload.K=8"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "simulate: demo_lines: " in proc.stdout
    design = (tmp_path / "out" / "latest").resolve()
    sim = json.loads((design / "sim" / "result.json").read_text())
    verilog = sim["products"]["verilog"]
    files = (design / "rtl" / "filelist.f").read_text().split()
    assert sim["target"] == "demo_lines" and verilog["modules"] == len(files) > 1
    total = sum(len((design / "rtl" / f).read_text().splitlines()) for f in files)
    assert verilog["lines"] == total
    assert json.loads((design / "summary.json").read_text())["figures"] == {"verilog_lines": total}
    value = f"lines {total:,}, modules {verilog['modules']}"  # the product's keys, sorted in the file
    assert f"Verilog size: {value}" in (design / "report.md").read_text()
    assert f"<dt>Verilog size</dt><dd>{value}</dd>" in (design / "report.html").read_text()


def test_a_plugin_targets_missing_tool_is_named_by_its_declaration(plugin, tmp_path, monkeypatch):
    """The target's own declaration says which tool is missing and what installs it, in one line."""
    from lego_build import compose
    from lego_build.targets import TARGETS

    assert "demo_lines" in TARGETS and TARGETS.names()[:4] == ("verilator", "rtl", "yosys", "asic")
    cfg = compose(["target=demo_lines"])
    assert cfg.target.flow == "demo_lines"
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match=r"^target.flow=demo_lines needs wc: wc not found: apt-get install -y "
                                          r"coreutils \(or set LEGO_DEMO_WC\)$"):
        TARGETS.get("demo_lines").require(cfg)


def test_an_unknown_flow_names_the_choices():
    from lego_build import compose

    with pytest.raises(ConfigError, match=r"^target.flow=nope: unknown; choose one of verilator, rtl, yosys, asic"):
        compose(["target.flow=nope"])


def test_editing_a_plugin_changes_the_code_hash(tmp_path, monkeypatch):
    from lego_build.flow.tasks import code_hash

    copy = tmp_path / "plugins"
    shutil.copytree(PLUGINS, copy)
    monkeypatch.syspath_prepend(str(copy))
    for name in [m for m in sys.modules if m.startswith("lego_demo_plugin")]:
        monkeypatch.delitem(sys.modules, name)  # found afresh, in the copy
    before = code_hash()
    assert before != code_hash(plugins=False)
    search = copy / "lego_demo_plugin" / "search.py"
    search.write_text(search.read_text() + "\n# edited\n")
    assert code_hash() != before


def test_readme_extending_section_matches_the_demo_plugin():
    """docs/extending.md's entry points are the demo plugin's, and its build command is the one built above."""
    import configparser
    import re
    import tomllib

    section = (REPO_ROOT / "docs" / "extending.md").read_text()
    toml = tomllib.loads(re.search(r"```toml\n(.*?)```", section, re.S).group(1))
    documented = {group: dict(eps) for group, eps in toml["project"]["entry-points"].items()}
    dist = configparser.ConfigParser()
    dist.optionxform = str
    dist.read(PLUGINS / "lego_demo_plugin-0.1.dist-info" / "entry_points.txt")
    assert documented == {group: dict(dist[group]) for group in dist.sections()}
    command = " ".join(section.split("Then `", 1)[1].split("`", 1)[0].split())
    assert command == "doit build " + " ".join(
        ["arch=demo_array", "workload=demo_csv", "mapper.search=budgeted", f"optimizer.passes={PASSES}"])


def test_readme_fu_language_example_is_the_plugins_fu():
    """docs/extending.md's FU-language example is ``lego_demo_plugin/zp4.py`` (its code, not a paraphrase)."""
    section = (REPO_ROOT / "docs" / "extending.md").read_text()
    block = section.split("**FU language**", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    source = (PLUGINS / "lego_demo_plugin" / "zp4.py").read_text()
    assert block.strip() == source.split('"""\n', 1)[1].strip()


def test_fu_language_fu_builds_and_simulates_bit_exact(tmp_path):
    """Issue 21, acceptance 1: ``doit build arch.fu=zp4`` in a fresh project with the plugin on the
    path: 4-bit weight buffers, the FU's module in the RTL, every output of the Verilator run equal
    to the FU's reference, the FU in the report."""
    shutil.copy(REPO_ROOT / "dodo.py", tmp_path / "dodo.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(tmp_path / "dodo.py"), "build", "arch.fu=zp4"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    design = (tmp_path / "out" / "latest").resolve()
    adg = json.loads((design / "adg.json").read_text())
    assert {n["tensor"]: n["bits"] for n in adg["nets"]} == {"A": 8, "B": 4, "Y": 32}
    manifest = json.loads((design / "rtl" / "manifest.json").read_text())
    assert any(name.startswith("lego_fu_zp4_8x4_p") for name in manifest)
    sim = json.loads((design / "sim" / "result.json").read_text())
    assert sim["status"] == "pass" and sim["mismatches"] == 0 and sim["comparisons"] >= 256
    assert sim["products"]["lint"] == "clean"
    summary = json.loads((design / "summary.json").read_text())
    assert summary["fu"] == {"name": "zp4", "doc": "int8 x offset-binary int4 (weight code - 8)", "expression": True,
                             "operand_bits": {"A": 8, "B": 4}}
    assert "* FU zp4: int8 x offset-binary int4" in (design / "report.md").read_text()


def test_simulation_compares_with_the_fus_products(plugin, tmp_path, monkeypatch):
    """The golden model is the FU's, not a multiply: the same RTL checked against plain products
    (what a golden model ignoring the FU would expect) mismatches, and the FU's products differ
    from plain ones on the run's data."""
    from dataclasses import replace

    import numpy as np

    from lego_build.flow.stages import run_stage
    from lego_build.flow.validate import compose
    from lego_build.fulang.kinds import FUS
    from lego_build.runtime.artifacts import read_artifact

    cfg = compose(["arch.fu=zp4"])
    for stage in ("analyze", "graph", "optimize", "map", "emit", "simulate"):
        run_stage(stage, cfg, tmp_path)
    assert read_artifact(tmp_path, "sim/result.json").mismatches == 0
    fu = FUS.get("zp4")
    a, w = np.arange(-128, 128).repeat(16), np.tile(np.arange(-8, 8), 256)
    assert (fu.product([a, w]) == a * ((w & 15) - 8)).all() and (fu.product([a, w]) != a * w).sum() > 3000
    monkeypatch.setitem(FUS._cache, "zp4", replace(fu, product=None))
    with pytest.raises(StageError, match=r"^simulation does not match on the matmul tile of gemm with random data: "
                                         r"2\d\d wrong outputs of 256"):
        run_stage("simulate", cfg, tmp_path)


def test_fu_language_fu_config_errors(plugin):
    """The FU's widths and arity are checked against the arch before any build, in one line
    naming the key; the accumulator check uses the FU's product range (|a * (w - 8)| <= 1024),
    not that of two 8-bit operands (16,384)."""
    from lego_build import compose
    from lego_build.flow.validate import validate

    with pytest.raises(ConfigError, match=r"^arch.operand_bits=16: arch.fu=zp4's widest operand has 8 bits; "
                                          r"set arch.operand_bits=8$"):
        compose(["arch.fu=zp4", "arch.operand_bits=16", "arch.acc_bits=40"])
    with pytest.raises(ConfigError, match=r"^arch.family=mttkrp: arch.fu=zp4 takes 2 operands; the array's kernel "
                                          r"family has 3"):
        compose(["arch.fu=zp4", "arch.family=mttkrp", "workload=mttkrp"])
    # the default gemm sums 16 products: 16 x 1024 needs 16 bits, 16 x 16384 needs 20
    validate(compose(["arch.fu=zp4", "arch.acc_bits=16", "target=rtl"]))
    with pytest.raises(ConfigError, match=r"^arch.acc_bits=16: too narrow for layer gemm, whose outputs sum 16 "
                                          r"products of 8-bit operands \(up to 262,144"):
        validate(compose(["arch.acc_bits=16", "target=rtl"]))
    with pytest.raises(ConfigError, match=r"^arch.acc_bits=16: .* 64 products of arch.fu=zp4 \(up to 65,536 in "
                                          r"magnitude\) and need 18 bits"):
        validate(compose(["arch.fu=zp4", "arch.acc_bits=16", "workload.K=64", "target=rtl"]))
