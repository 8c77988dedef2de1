"""The stage table (lego_build.flow.stages): each stage declares the config keys it reads, and the
design id hashes the hardware and the workload, not the cost model.

The up-to-date check of a stage hashes only the keys it declares (``Stage.reads``), so a key
a stage reads without declaring it would leave the stage's outputs stale. The first test runs
the stages with every read of a config field recorded and checks each is declared.
"""
from __future__ import annotations

import importlib
import sys
import types
from dataclasses import fields, is_dataclass

import pytest

from lego_build.config.compose import (
    COST_MODEL,
    DESIGN_KEYS,
    HARDWARE,
    _schemas,
    compose,
    config_slice,
    design_id,
    key_value,
)
from lego_build.flow.stages import STAGES
from lego_build.runtime.artifacts import Inputs, write_outputs

#: keys a stage may read without declaring them: how to run, never what is built (no stage hashes them)
UNHASHED = ("run",)


def _paths(cfg) -> tuple[dict[int, str], dict[type, str]]:
    """Every dataclass of ``cfg`` by ``id``, and every dataclass type by its first instance: its dotted
    key (list items and dict values as their container)."""
    by_id: dict[int, str] = {}
    by_type: dict[type, str] = {}

    def walk(obj, path: str) -> None:
        if is_dataclass(obj):
            by_id[id(obj)] = path
            by_type.setdefault(type(obj), path)
            for f in fields(obj):
                walk(object.__getattribute__(obj, f.name), f"{path}.{f.name}" if path else f.name)
        elif isinstance(obj, (list, tuple)):
            for item in obj:
                walk(item, path)
        elif isinstance(obj, dict):
            for item in obj.values():
                walk(item, path)

    walk(cfg, "")
    return by_id, by_type


def record_reads(monkeypatch, cfg) -> tuple[list[tuple[str, str]], list]:
    """Patch every config dataclass so that reading one of its fields appends ``(stage, key)`` to the
    returned list while ``current[0]`` names a stage (a copy made with ``replace`` counts as the key of
    its type's instance in ``cfg``)."""
    reads: list[tuple[str, str]] = []
    by_id, by_type = _paths(cfg)
    current: list = [None]
    for cls in _schemas().values():
        names = {f.name for f in fields(cls)}

        def getattribute(self, name, _names=names, _home=by_type.get(cls, cls.__name__)):
            value = object.__getattribute__(self, name)
            if name in _names and current[0] is not None and not is_dataclass(value):
                base = by_id.get(id(self), _home)
                reads.append((current[0], f"{base}.{name}" if base else name))
            return value

        monkeypatch.setattr(cls, "__getattribute__", getattribute)
    return reads, current


def covered(key: str, declared) -> bool:
    return any(key == d or key.startswith(f"{d}.") for d in declared)


def test_every_stage_reads_only_the_keys_it_declares(tmp_path, monkeypatch):
    cfg = compose(["target=rtl"])
    reads, current = record_reads(monkeypatch, cfg)
    # the HTML page is drawn from the design directory's files, not from cfg (and its plots take seconds)
    page = types.ModuleType("lego_build.report.html")
    page.render_html = lambda *args: "<html></html>\n"
    monkeypatch.setitem(sys.modules, "lego_build.report.html", page)
    for stage in STAGES:  # run_stage's steps, the stage function's reads recorded (the runner writes all of cfg)
        module, func = stage.func.split(":")
        current[0] = stage.name
        run = getattr(importlib.import_module(module), func)
        outputs = run(cfg, tmp_path, Inputs(tmp_path, stage.inputs, stage.name))
        current[0] = None
        write_outputs(tmp_path, outputs or {}, stage.outputs, stage.name)
    seen = {stage.name: {key for name, key in reads if name == stage.name} for stage in STAGES}
    undeclared = {s.name: sorted(k for k in seen[s.name] if not covered(k, (*s.reads, *UNHASHED))) for s in STAGES}
    assert not any(undeclared.values()), undeclared
    assert seen["emit"] and seen["analyze"] and seen["map"], seen  # the recording works
    # the cost model changes no hardware: only the mapper reads it
    for stage in STAGES:
        if stage.name != "map":
            assert not [k for k in seen[stage.name] if covered(k, COST_MODEL)], stage.name


def test_declared_keys_exist_and_slices_are_plain_and_sorted():
    cfg = compose()
    for stage in STAGES:
        part = config_slice(cfg, stage.reads)
        assert list(part) == sorted(set(stage.reads))
        assert stage.what, stage.name
    assert key_value(cfg, "arch.energy.mac_pj") == cfg.arch.energy.mac_pj
    assert key_value(cfg, "arch.energy") == {f.name: getattr(cfg.arch.energy, f.name) for f in fields(cfg.arch.energy)}
    assert key_value(cfg, "arch.multicore.cores") is None  # below an unset optional part
    for bad in ("arch.energy.nope", "nope", "arch.nope.x"):
        with pytest.raises(KeyError, match=bad.replace(".", r"\.")):
            key_value(cfg, bad)
    assert not set(COST_MODEL) & set(HARDWARE)
    assert set(DESIGN_KEYS) == {"workload", *HARDWARE}


@pytest.mark.parametrize("override", ["arch.energy.mac_pj=0.1", "arch.energy.dram_pj=100", "arch.tiling=gemmini",
                                      "arch.unroll.axes=[[m],[n]]", "mapper.objective=latency", "optimizer=greedy",
                                      "target.seed=2"])
def test_design_id_ignores_the_cost_model_and_the_stage_settings(override):
    assert design_id(compose([override])) == design_id(compose())


def test_design_id_ignores_the_memory_levels_of_the_cost_model():
    base = ["arch=zigzag_eyeriss_like", "workload=lenet"]
    assert design_id(compose([*base, "arch.memory.1.size_bytes=64"])) == design_id(compose(base))


@pytest.mark.parametrize("override", ["arch.rows=2", "arch.memsys.axi_data_bits=64", "arch.clock_mhz=250",
                                      "workload.M=24"])
def test_design_id_covers_the_hardware_and_the_workload(override):
    assert design_id(compose([override])) != design_id(compose())
