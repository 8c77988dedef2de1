"""The fast Verilog printer prints what Veriloggen's ``to_verilog`` prints, byte for byte, on every
module of real designs: the default 4x4 systolic array with its memory system, lego_mnicoc's
multi-dataflow array (4x4) with its own, and the FU language's seven group FUs of seed 004
Table 6.3."""
import pytest
from jinja2 import Environment, FileSystemLoader
from pyverilog.ast_code_generator.codegen import DEFAULT_TEMPLATE_DIR

from lego_build import compose, run_stage
from lego_build.backend.interface import soc_map
from lego_build.emit.soc import mk_soc
from lego_build.emit.text import _PLAIN, FastCodeGenerator, _Plain, verilog_text
from lego_build.emit.top import mk_top
from lego_build.fulang.emit import mk_fu
from lego_build.fulang.library import TABLE_6_3, builtin
from lego_build.runtime.artifacts import read_artifact

pytestmark = pytest.mark.slow  # builds DAGs


def _modules(tmp_path, overrides):
    cfg = compose([*overrides, "target=rtl"])
    for stage in ("analyze", "graph", "optimize"):
        run_stage(stage, cfg, tmp_path)
    bus = cfg.arch.memsys.ir().axi_data_bits
    top, subs, hm = mk_top(read_artifact(tmp_path, "dag.json"), bus)
    soc, soc_subs = mk_soc(hm, soc_map(hm, bus))
    return [top, *subs, soc, *soc_subs]


@pytest.mark.parametrize("overrides", [[], ["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4"]])
def test_every_module_of_a_design_prints_as_veriloggen_prints_it(tmp_path, overrides):
    modules = _modules(tmp_path, overrides)
    assert len(modules) > 8
    assert [m.name for m in modules if verilog_text(m) != m.to_verilog()] == []


def test_every_table_6_3_fu_prints_as_veriloggen_prints_it():
    fus = [mk_fu(builtin(name)) for name in TABLE_6_3]
    assert [m.name for m in fus if verilog_text(m) != m.to_verilog()] == []


def test_field_only_templates_render_as_jinja_renders_them():
    env = Environment(loader=FileSystemLoader(DEFAULT_TEMPLATE_DIR))
    plain = [n for n in env.list_templates(extensions=["txt"]) if _PLAIN.fullmatch(env.loader.get_source(env, n)[0])]
    assert {"identifier.txt", "intconst.txt", "operator.txt", "assign.txt", "cond.txt"} <= set(plain)
    assert "wire.txt" not in plain and "block.txt" not in plain  # templates with logic stay Jinja's
    for name in plain:
        source = env.loader.get_source(env, name)[0]
        fields = {f: f"<{f} {i}>\n x" for i, f in enumerate(_Plain(source).fields)}
        assert _Plain(source).render(fields) == env.get_template(name).render(fields), name
    assert isinstance(FastCodeGenerator().get_template("block.txt"), type(env.get_template("block.txt")))
