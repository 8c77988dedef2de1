"""Packed DMA rows: the lanes whose banks hold the same words under a dataflow share one word."""
import pytest

from lego_build import compose, run_all
from lego_build.analysis.kernels import conv2d
from lego_build.frontend.adg_build import build_adg
from lego_build.runtime.artifacts import read_artifact


def _words(pack):
    return max(pack) + 1


def test_lego_mnicoc_packs_what_each_dataflow_broadcasts():
    """16x16 MN / IC-OC / OH-OW: OH-OW gives inputs and weights a bank per FU, which MN and
    IC-OC then use too. Under MN the weights depend on the columns only (16 words per row), the
    inputs on the rows only; under IC-OC the outputs leave from the 16 banks of one row; under
    OH-OW a depthwise weight is one word for all 256 FUs."""
    adg = build_adg(conv2d(1, 64, 64, 16, 16, 3, 3), compose(["arch=lego_mnicoc", "arch.broadcast=ports"]).arch)
    names = [d.name for d in adg.dataflows]
    packs = {n.tensor: dict(zip(names, n.packs)) for n in adg.nets}
    assert [len(n.ports) for n in adg.nets] == [256, 256, 256]
    assert _words(packs["X"]["mn"]) == 16 and _words(packs["X"]["ohow"]) == 256
    assert _words(packs["W"]["mn"]) == 16 and _words(packs["W"]["icoc"]) == 256 and _words(packs["W"]["ohow"]) == 1
    assert _words(packs["Y"]["icoc"]) == 16 and sum(p >= 0 for p in packs["Y"]["icoc"]) == 16
    assert _words(packs["Y"]["mn"]) == 256
    # lanes sharing a word under MN sit in one column: FU (r, c) and (r', c) hold W[c's channel]
    w = next(n for n in adg.nets if n.tensor == "W")
    by_word: dict[int, set] = {}
    for fu, p in zip(w.ports, packs["W"]["mn"]):
        by_word.setdefault(p, set()).add(fu[1])
    assert all(len(cols) == 1 for cols in by_word.values())


@pytest.mark.slow
def test_a_packed_output_row_is_one_beat_in_rtl(tmp_path):
    """A 4x4 MN / IC-OC / OH-OW array runs a 1x16x16 GEMM on IC-OC: its outputs leave from the
    4 banks of the bottom row, so each 64-byte output row (16 banks x 4 bytes) goes out packed
    as one 16-byte beat. The AXI write beats counted by the RTL are the 4 rows' 4 beats (16
    unpacked), every output is compared and the latency model's beats agree."""
    run_all(compose(["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4", "arch.onchip_kb=0", "workload=gemm",
                     "workload.M=1", "workload.N=16", "workload.K=16", "target.scope=layers",
                     "target.max_cycles=20000", "mapper.objective=latency"]), tmp_path)
    assert read_artifact(tmp_path, "mapping.json").layers[0]["dataflow"] == "icoc"
    (layer,) = read_artifact(tmp_path, "sim/result.json").layers
    assert layer["mismatches"] == 0 and layer["outputs"] == 16
    assert layer["wr_beats"] == 4
    assert layer["rd_beats"] + layer["wr_beats"] == layer["beats_predicted"]
