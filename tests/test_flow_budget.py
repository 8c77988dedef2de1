"""Resource estimates before work (lego_build.flow.budget) and the mapper's tile extents they count."""
from __future__ import annotations

from math import ceil

import pytest

from lego_build import compose
from lego_build.errors import BudgetError
from lego_build.flow import budget
from lego_build.flow.budget import check, estimates
from lego_build.flow.validate import validate
from lego_build.mapping.factors import divisors, useful


def _estimates(overrides):
    cfg = compose(overrides)
    return cfg, {e.stage: e for e in estimates(cfg, validate(cfg))}


def test_tile_extents_are_enumerated_in_square_root_time():
    for D in [*range(1, 300), 1000, 1024, 4096, 9973, 12345]:
        assert divisors(D) == tuple(d for d in range(1, D + 1) if D % d == 0)
        assert set(useful(D, True)) == set(divisors(D)) | {ceil(D / k) for k in range(1, D + 1)}
        assert useful(D, False) == divisors(D)
    big = useful(10 ** 9, True)  # was a loop over 10**9 values (minutes); now about 2 sqrt(D)
    assert len(big) < 2 * 31623 + 200 and big[0] == 1 and big[-1] == 10 ** 9


def test_presets_fit_the_machine_and_the_defaults():
    for overrides in ([], ["arch=eyeriss", "workload=resnet50"], ["arch=lego_icoc_1k", "workload=resnet50"],
                      ["workload.M=1000000000"]):
        cfg = compose(overrides)
        found = check(cfg, validate(cfg))
        assert {e.stage for e in found} == {"map", "simulate"}
        assert all(e.seconds < 60 * cfg.target.max_minutes for e in found)


def test_golden_memory_and_time_grow_with_the_tile():
    _, small = _estimates([])
    _, big = _estimates(["workload.M=1000000000", "target.tile_steps=100000000", "arch.rows=16", "arch.cols=16"])
    assert big["simulate"].memory_bytes > 1000 * 2 ** 30  # 2.6e10 points: terabytes of tensor windows
    assert small["simulate"].memory_bytes < 2 ** 30
    assert big["simulate"].seconds > 1000 * small["simulate"].seconds


def test_over_budget_is_one_line_unless_confirmed(monkeypatch):
    huge = ["workload.M=1000000000", "target.tile_steps=100000000", "arch.rows=16", "arch.cols=16"]
    cfg = compose(huge)
    with pytest.raises(BudgetError, match=r"the simulate stage would need about [\d,.]+ GiB .* target.confirm=true"):
        check(cfg, validate(cfg))
    cfg = compose([*huge, "target.confirm=true"])
    assert check(cfg, validate(cfg))  # estimates still reported
    cfg = compose(["target.max_memory_gb=0.000001"])
    with pytest.raises(BudgetError, match="target.max_memory_gb allows"):
        check(cfg, validate(cfg))
    cfg = compose(["target.max_minutes=0.00001"])
    with pytest.raises(BudgetError, match="over target.max_minutes"):
        check(cfg, validate(cfg))
    monkeypatch.setattr(budget, "available_memory", lambda: 0)  # unknown: no memory limit of the machine's
    cfg = compose(huge + ["target.max_minutes=0"])
    assert check(cfg, validate(cfg))


def test_available_memory_reads_the_machine():
    assert budget.available_memory() > 2 ** 26
