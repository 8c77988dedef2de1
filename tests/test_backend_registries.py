"""The back end's registries: FU kinds, passes and LP solvers, built-ins and a user's plugins.

A plugin here is an entry point whose object lives in this module, installed by swapping
the registry's view of the installed entry points (what ``pip install my-plugin`` adds)."""
from dataclasses import replace
from importlib.metadata import EntryPoint

import pytest
from test_backend_passes import _narrowing_dag
from veriloggen import Module, Posedge

from lego_build import compose
from lego_build.analysis.from_config import workload_from_config
from lego_build.backend import solver
from lego_build.backend.codegen import build_dag
from lego_build.backend.passes import ORDER, PASSES, Pass, check_order, pipeline
from lego_build.backend.passes.delay_matching import lp_schedule
from lego_build.backend.solver import SOLVERS, Solver
from lego_build.backend.stage import optimize
from lego_build.config.schema import OptimizerConf
from lego_build.emit.top import mk_top
from lego_build.errors import ConfigError, StageError
from lego_build.frontend.adg_build import build_adg
from lego_build.fulang import kinds as fus
from lego_build.fulang.kinds import FU, FUS
from lego_build.ir.dag import MulSpec
from lego_build.ir.serialize import to_jsonable
from lego_build.runtime import registry
from rtl_templates_free import sign_extend


def booth_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
    m = Module(f"booth_mul_{a_bits}x{b_bits}_{out_bits}")
    clk = m.Input("clk")
    a = m.Input("a", a_bits)
    b = m.Input("b", b_bits)
    p = m.OutputReg("p", out_bits)
    m.Always(Posedge(clk))(p(sign_extend(a, a_bits, out_bits) * sign_extend(b, b_bits, out_bits)))
    return m


def noop(dag, cfg: OptimizerConf):
    return replace(dag, passes=dag.passes + ("noop",))


BOOTH = FU("booth", "a user's multiplier", booth_mul)
NOOP = Pass("noop", requires=("widths",), provides=("noop",), run=noop)
MYCBC = Solver("mycbc", solver.always_available, solver.CBC.make)
MISSING = Solver("missing", lambda: "optimizer.solver=missing: not installed here", solver.CBC.make)
PLUGINS = (EntryPoint("booth", f"{__name__}:BOOTH", "lego_build.fus"),
           EntryPoint("noop", f"{__name__}:NOOP", "lego_build.passes"),
           EntryPoint("mycbc", f"{__name__}:MYCBC", "lego_build.solvers"),
           EntryPoint("missing", f"{__name__}:MISSING", "lego_build.solvers"))


@pytest.fixture
def plugins(monkeypatch):
    monkeypatch.setattr(registry, "entry_points", lambda group: tuple(ep for ep in PLUGINS if ep.group == group))
    yield
    for reg in (FUS, PASSES, SOLVERS):  # loaded once per process: forget the plugins again
        for ep in PLUGINS:
            reg._cache.pop(ep.name, None)


def _default_adg():
    cfg = compose([])
    return build_adg(workload_from_config(cfg.workload).layers[0].kernel, cfg.arch)


def test_builtins_are_registered_in_their_order():
    assert FUS.names()[:2] == ("mac", "bitfusion")
    assert PASSES.names()[:len(ORDER)] == ORDER
    assert SOLVERS.names()[:2] == ("cbc", "highs")
    assert FUS.get("mac") is fus.MAC and FUS.get("bitfusion") is fus.BITFUSION
    assert SOLVERS.get("cbc") is solver.CBC


def test_fu_width_checks():
    assert FUS.get("mac").check(7) is None
    assert FUS.get("bitfusion").check(8) is None
    assert "must be even" in FUS.get("bitfusion").check(7)
    assert FUS.get("mac").dsp_fusable and not FUS.get("bitfusion").dsp_fusable


def test_unknown_names_are_config_errors_naming_the_key_and_choices():
    with pytest.raises(ConfigError, match=r"^arch\.fu=booth: unknown; choose one of mac, bitfusion"):
        FUS.get("booth")
    with pytest.raises(ConfigError, match=r"^optimizer\.passes=fold: unknown; choose one of reduction_tree, "):
        pipeline(("bitwidth", "fold"))
    with pytest.raises(ConfigError, match=r"^optimizer\.solver=glpk: unknown; choose one of cbc, highs"):
        lp_schedule(_narrowing_dag(), 30.0, "glpk")


@pytest.mark.usefixtures("plugins")
def test_a_plugin_fu_is_generated_and_emitted():
    adg = replace(_default_adg(), fu="booth")
    assert "booth" in FUS and FUS.get("booth") is BOOTH
    dag, _, _ = optimize(adg, OptimizerConf())
    muls = [n for n in dag.nodes if n.kind == "mul"]
    assert muls and all(n.spec(MulSpec).fu == "booth" for n in muls)
    assert all(row["attrs"] == [["fu", "booth"]] for row in to_jsonable(dag)["nodes"] if row["kind"] == "mul")
    _, subs, _ = mk_top(dag)
    names = {m.name for m in subs}
    assert "booth_mul_8x8_16" in names and not any(n.startswith(("lego_mul", "lego_bfmul")) for n in names)


@pytest.mark.usefixtures("plugins")
def test_mac_fusion_leaves_a_plugin_fu_that_is_no_dsp_multiply_alone():
    passes = list(compose(["optimizer=fpga"]).optimizer.passes)
    dag, _, _ = optimize(replace(_default_adg(), fu="booth"), OptimizerConf(passes=passes))
    kinds = [n.kind for n in dag.nodes]
    assert (kinds.count("mac"), kinds.count("mul")) == (0, 16)


def test_codegen_names_an_fu_no_package_provides():
    with pytest.raises(StageError, match=r"arch\.fu='booth': choose one of the FUs generated, mac, bitfusion"):
        build_dag(replace(_default_adg(), fu="booth"))


@pytest.mark.usefixtures("plugins")
def test_a_plugin_pass_runs_where_the_optimizer_lists_it():
    passes = ["bitwidth", "noop", "delay_matching"]
    check_order(pipeline(passes))
    with pytest.raises(ValueError, match="noop requires widths"):
        check_order(pipeline(["noop", "bitwidth", "delay_matching"]))
    dag, log, _ = optimize(_default_adg(), OptimizerConf(passes=passes))
    assert [row["pass"] for row in log] == ["codegen", *passes]
    assert dag.passes == tuple(passes)


@pytest.mark.usefixtures("plugins")
def test_a_plugin_solver_solves_and_an_unavailable_one_says_why():
    schedule, cost = lp_schedule(_narrowing_dag(), 30.0, "mycbc")
    assert cost == 4 == _narrowing_dag().with_delays(schedule).register_bits()
    with pytest.raises(StageError, match="^optimizer.solver=missing: not installed here$"):
        lp_schedule(_narrowing_dag(), 30.0, "missing")
