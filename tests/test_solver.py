"""optimizer.solver: CBC (default) or HiGHS through PuLP, for delay matching and pin reuse."""
import pulp
import pytest
from test_backend_passes import _narrowing_dag

from lego_build import ConfigError, StageError, compose, run_stage
from lego_build.backend import solver
from lego_build.backend.passes.delay_matching import lp_schedule
from lego_build.backend.passes.pin_reuse import remap
from lego_build.runtime.atomic import read_json

needs_highs = pytest.mark.skipif(solver.SOLVERS.get("highs").unavailable() is not None,
                                 reason="highspy is not installed (pip install highspy, or the [highs] extra)")
SMALL_CONV = ["workload=conv2d", "workload.in_h=10", "workload.in_w=10", "workload.in_ch=8", "workload.out_ch=8"]


@needs_highs
def test_highs_solves_the_fig_5_3_lp_to_the_cbc_cost():
    dag = _narrowing_dag()
    _, cbc = lp_schedule(dag, 30.0, solver="cbc")
    schedule, highs = lp_schedule(dag, 30.0, solver="highs")
    assert highs == cbc == 4 == dag.with_delays(schedule).register_bits()


@needs_highs
def test_highs_solves_the_pin_reuse_program():
    table = {"p": {"a", "b"}, "c0": {"a"}, "c1": {"b"}}
    mapping = remap(table, ("a", "b"), 30.0, "highs")
    assert all(sorted(m.values()) == [0, 1] for m in mapping.values())  # two live inputs on two pins


@needs_highs
@pytest.mark.parametrize("design", [[], ["arch=lego_khoh_icoc", *SMALL_CONV]], ids=["gemm", "switchable-conv"])
def test_cbc_and_highs_give_the_same_register_bits(tmp_path, design):
    rows = {}
    for name in ("cbc", "highs"):
        cfg = compose([*design, f"optimizer.solver={name}"])
        for stage in ("analyze", "graph", "optimize"):
            run_stage(stage, cfg, tmp_path / name)
        rows[name] = [(p["pass"], p["register_bits"], p["adder_inputs"]) for p in
                      read_json(tmp_path / name / "passes.json")["passes"]]
    assert rows["cbc"] == rows["highs"]
    assert rows["cbc"][-1][1] > 0


@pytest.mark.parametrize("name", solver.SOLVERS.names())
def test_time_limit_hit_is_a_stage_error_naming_the_limit(name):
    if reason := solver.SOLVERS.get(name).unavailable():
        pytest.skip(reason)
    with pytest.raises(StageError, match="optimizer.time_limit_s"):
        lp_schedule(_narrowing_dag(), 1e-9, solver=name)


def test_a_cut_off_highs_incumbent_is_not_optimal(monkeypatch):
    class Stopped:  # what PuLP's HiGHS API reports at the time limit with a solution in hand
        sol_status = pulp.LpSolutionIntegerFeasible

        def solve(self, _solver):
            return pulp.LpStatusOptimal

    monkeypatch.setattr(solver, "make_solver", lambda name, limit: None)
    assert solver.solve(Stopped(), "highs", 1.0) == "Not Solved"


def test_unknown_solver_is_rejected_naming_the_key():
    with pytest.raises(ConfigError, match=r"^optimizer\.solver=foo: unknown; choose one of cbc, highs"):
        compose(["optimizer.solver=foo"])


def test_highs_without_highspy_is_a_one_line_config_error(monkeypatch):
    monkeypatch.setattr(solver, "_highs_available", lambda: False)
    with pytest.raises(ConfigError) as info:
        compose(["optimizer.solver=highs"])
    message = str(info.value)
    assert message.startswith("optimizer.solver=highs") and "pip install highspy" in message
    assert "\n" not in message
    assert compose(["optimizer.solver=cbc"]).optimizer.solver == "cbc"
