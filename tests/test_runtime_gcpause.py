"""lego_build.runtime.gcpause: the map stage pauses the cycle collector, which is safe only while
the searches make no reference cycles (a recursive closure in the cost model once leaked 80 MB on
ResNet-50 until the stage ended)."""
import contextlib
import gc
import io

import pytest

from lego_build import compose, run_stage
from lego_build.mapping import stage as map_stage
from lego_build.runtime import gcpause


def test_paused_disables_the_collector_and_restores_it():
    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()  # as it was before
    finally:
        gc.enable()


@pytest.mark.slow  # whole map stages of ResNet-18 on Eyeriss
@pytest.mark.parametrize("overrides", [
    ["arch=eyeriss_ruby", "mapper=ruby_s", "arch.operand_registers=false", "arch.window_forwarding=false"],
    ["arch=eyeriss_ruby", "mapper=pfm", "mapper.unroll=search"],
    ["arch=eyeriss", "mapper.objective=edp"],  # the generated memory system's latency model too
], ids=["forms", "unroll-search", "eyeriss-edp"])
def test_the_map_stage_leaves_no_reference_cycles(tmp_path, monkeypatch, overrides):
    found = []
    real = map_stage.best_dataflow

    def counted(*args, **kwargs):  # each layer's search, inside the paused region
        gc.collect()
        result = real(*args, **kwargs)
        found.append(gc.collect())  # objects only the cycle collector could free
        return result

    monkeypatch.setattr(map_stage, "best_dataflow", counted)
    cfg = compose([*overrides, "workload=resnet18"])
    with contextlib.redirect_stdout(io.StringIO()):
        for name in ("analyze", "graph", "optimize", "map"):
            run_stage(name, cfg, tmp_path)
    assert found and not any(found)
