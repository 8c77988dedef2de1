"""Fuzzing the config and the pipeline (issue 10): hypothesis draws presets, overrides
(valid, out of range, wrong types, unknown keys) and small affine workloads (GEMM,
conv2d, MTTKRP, attention); each example is composed, validated and, when valid, built
in-process through every stage with ``target=rtl`` (the Verilog is emitted; the
simulator is covered by the sim tests). An example may end in a clean error, a
:class:`ConfigError` or a stage's one-line :class:`StageError` / :class:`InputError`,
or in a finished build; anything else is a crash and fails the test.

A valid config of random presets, sizes and settings, and in four examples of ten one
bad override from a list of 32. 300 examples in two parts, each with a fixed seed. A
valid example is built up to a drawn stage: the analysis (40 %), the mapping (30 %),
the Verilog (20 %) or the report (10 %); arrays above 16 FUs stop after the mapper
and match delays greedily (graph, LP and plot time grow with the array, the bugs do not;
the LP on every preset at full size is test_emit_stage's).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is a dev dependency: pip install -e '.[dev]'")
# veriloggen raises the recursion limit when first imported; import it before hypothesis runs, which
# otherwise warns that an example changed the limit
import veriloggen  # noqa: E402, F401
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from lego_build.config.compose import compose  # noqa: E402
from lego_build.errors import (
    ConfigError,  # noqa: E402
    StageError,
)
from lego_build.flow.stages import STAGES, run_stage
from lego_build.flow.validate import validate  # noqa: E402

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

EXAMPLES = 300
PARTS = 2
MAX_FULL_FUS = 16

dims = st.integers(min_value=1, max_value=12)


def _kv(prefix: str, **values) -> list[str]:
    return [f"{prefix}.{k}={v}" for k, v in values.items()]


# ------------------------------------------------------------------ valid configs
gemm = st.builds(lambda m, n, k, b: ["workload=gemm", *_kv("workload", M=m, N=n, K=k, batch=b)],
                 dims, dims, dims, st.integers(1, 2))
conv = st.builds(
    lambda c, k, h, w, kh, s, p, g: ["workload=conv2d", *_kv("workload", in_ch=c * g, out_ch=k * g, in_h=h, in_w=w,
                                                             kh=kh, kw=kh, stride=s, pad=p, groups=g)],
    st.integers(1, 6), st.integers(1, 6), st.integers(4, 10), st.integers(4, 10), st.integers(1, 3),
    st.integers(1, 2), st.integers(0, 1), st.sampled_from([1, 2]))
mttkrp = st.builds(lambda i, j, k, l: ["workload=mttkrp", *_kv("workload", I=i, J=j, K=k, L=l)],
                   dims, dims, dims, st.integers(1, 6))
attention = st.builds(lambda h, q, kv, d: ["workload=attention", *_kv("workload", heads=h, seq_q=q, seq_kv=kv,
                                                                      head_dim=d)],
                      st.integers(1, 2), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12))
networks = st.just(["workload=lenet"])
workloads = st.one_of(gemm, conv, mttkrp, attention, networks)

arch_presets = st.sampled_from(["systolic", "eyeriss", "shidiannao", "lego_khoh_icoc", "lego_mnicoc", "bitfusion",
                                "gemmini_like", "nvdla", "zigzag_eyeriss_like", "nmp"])
arch_overrides = st.lists(st.one_of(
    st.builds(lambda r, c: [f"arch.rows={r}", f"arch.cols={c}"], st.integers(1, 6), st.integers(1, 6)),
    st.builds(lambda d: [f"arch.d_t={d}"], st.integers(0, 3)),
    st.builds(lambda d: [f"arch.buffer_depth={d}"], st.sampled_from([4096, 64, 8, 1])),
    st.builds(lambda b: [f"arch.operand_bits={b}"], st.sampled_from([8, 16, 4])),
    st.builds(lambda c: [f"arch.control_flow={c}"], st.sampled_from(["[1,1]", "[0,1]", "[-1,1]", "[1,0]"])),
    st.builds(lambda f: [f"arch.fu={f}"], st.sampled_from(["mac", "bitfusion"])),
), max_size=2).map(lambda groups: [o for g in groups for o in g])
mappers = st.builds(lambda m, o: [f"mapper={m}", f"mapper.objective={o}", "mapper.patience=30"],
                    st.sampled_from(["pfm", "ruby", "ruby_s", "rtml", "random"]),
                    st.sampled_from(["energy", "latency", "edp"]))
optimizers = st.builds(lambda o, t: [f"optimizer={o}", f"optimizer.time_limit_s={t}"],
                       st.sampled_from(["lego", "greedy", "delay_only", "fpga"]), st.sampled_from([30, 0.5]))

# ------------------------------------------------------------------ one bad override (or none)
BAD = (
    "workload.batch=0", "workload.bits=-8", "arch.rows=0", "arch.cols=-3", "arch.rows=abc", "arch.rows=1.5",
    "arch.d_t=-1", "arch.buffer_depth=0", "arch.operand_bits=33", "arch.fu=fpga", "arch.control_flow=[2,0]",
    "arch.control_flow=[1]", "arch.rows=5000", "+arch.extra=1", "+nope=1", "arch.family=conv3d",
    "arch.dataflows.main.spatial=[m]", "arch.dataflows.main.spatial=['m,m',n]", "mapper.objective=speed",
    "mapper=tso", "mapper.seed=x", "mapper.patience=0", "optimizer.time_limit_s=0", "optimizer.passes=[nope]",
    "optimizer.passes=[]", "target.max_cycles=-5", "target.tile_steps=0", "arch.name=a b", "workload.name=../x",
    "arch.memory.0.size_bytes=1", "arch.multicore.spad_bytes=2", "mapper.search=exhaustive",
)
mutation = st.integers(0, 9).flatmap(lambda d: st.just([]) if d < 6 else st.sampled_from(BAD).map(lambda b: [b]))
#: how far a valid example is built: 0-3 analyze, 4-6 every stage to map (graph and optimize
#: first: the mapper reads the generated array), 7-8 to emit, 9 also the report (1-3 s of
#: plots); keeps 360 examples near two minutes on two cores
depth = st.integers(0, 9)


def _build(overrides: list[str], depth: int) -> str:
    """``"config error"``, ``"stage error"`` or ``"built"``; anything else raises."""
    try:
        cfg = compose(overrides)
        validate(cfg)
    except ConfigError as exc:
        assert "\n" not in str(exc) and str(exc), repr(exc)
        return "config error"
    last = "analyze" if depth < 4 else "map" if depth < 7 else "emit" if depth < 9 else "report"
    if cfg.arch.rows * cfg.arch.cols > MAX_FULL_FUS:
        if last not in ("analyze", "map"):
            last = "map"
        if cfg.optimizer.delay_matching == "lp":  # the LP takes 26 s on a 32x32 array; test_emit_stage runs it
            cfg = compose([*overrides, "optimizer.delay_matching=greedy"])
    names = [s.name for s in STAGES]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for stage in STAGES[: names.index(last) + 1]:
                run_stage(stage.name, cfg, Path(tmp))
        except StageError as exc:  # InputError included
            assert "\n" not in str(exc) and str(exc), repr(exc)
            return "stage error"
    return "built"


def fuzz(part: int) -> None:
    """Every drawn config ends as a one-line config error, a one-line stage error or a build; and
    the run is not all errors: builds finish, and both kinds of clean error occur. The examples
    come in :data:`PARTS` parts with their own fixed seeds, so that test workers share them."""
    outcomes: dict[str, int] = {}

    @seed(part)
    @settings(max_examples=EXAMPLES // PARTS, derandomize=False, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(workloads, arch_presets, arch_overrides, mappers, optimizers, mutation, depth)
    def one(workload, arch, arch_more, mapper, optimizer, bad, stop):
        overrides = [*workload, f"arch={arch}", *arch_more, *mapper, *optimizer, "target=rtl", *bad]
        outcome = _build(overrides, stop)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1

    one()
    print(f"\nfuzz outcomes over {sum(outcomes.values())} examples: {outcomes}")
    assert sum(outcomes.values()) >= EXAMPLES // PARTS
    assert outcomes.get("built", 0) >= EXAMPLES // PARTS // 10
    assert outcomes.get("config error", 0) > 0
    assert outcomes.get("stage error", 0) > 0


# one class per part: each is its own xdist scope (``--dist loadscope``), so the parts run in parallel
class TestFirstPart:
    def test_no_input_crashes_the_flow(self):
        fuzz(0)


@pytest.mark.long  # the fuzzer's second 150 examples; its first part runs in CI
class TestSecondPart:
    def test_no_input_crashes_the_flow(self):
        fuzz(1)
