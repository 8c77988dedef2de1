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


def test_replicated_row_stationary_shares_input_rows_exactly():
    """Eyeriss's replicated forms: FU (kh, ic, oh) reads input row ``oh + kh`` of channel ``ic``
    (seed 004 eq. 4.1 with no temporal part), so of the 168 input lanes 4 x 16 words are distinct
    under 3 filter rows x 4 channels by 14 output rows, 4 x 9 under 2 output channels x 7 output
    rows, and 12 x 7 under 12 channels by 2 x 7. Every input lane is used (the channel forms give
    each FU a bank), so before exact sharing each row carried 168 words."""
    from lego_build import compose

    cfg = compose(["arch=eyeriss"])
    adg = build_adg(conv2d(1, 64, 64, 58, 58, 3, 3), cfg.arch)
    x = next(n for n in adg.nets if n.tensor == "X")
    words = {d.name: _words(p) for d, p in zip(adg.dataflows, x.packs)}
    assert words["khic_oh"] == 64 and words["khic_ohoc"] == 36 and words["ic_ohoc"] == 84
    assert words["khoh"] == 25  # the diagonal's roots: 12 + 14 - 1 input rows
    assert all(sum(p >= 0 for p in pack) == 168 for d, pack in zip(adg.dataflows, x.packs) if d.name != "khoh"
               and d.name != "khoh_s2")


def test_a_layer_may_not_read_apart_what_the_banks_share():
    """Under a dataflow planned for stride 1, FU (kh + 1, oh - 1) shares FU (kh, oh)'s input row;
    a stride-2 layer reads rows 2 oh + kh there, which differ: the mapper may not use it (the
    stride-2 twin shares by ``ih = 2 oh + kh`` instead)."""
    from lego_build import compose
    from lego_build.frontend.packing import shares_conflict

    adg = build_adg(conv2d(1, 64, 64, 58, 58, 3, 3), compose(["arch=eyeriss"]).arch)
    x = next(n for n in adg.nets if n.tensor == "X")
    packs = dict(zip((d.name for d in adg.dataflows), x.packs))
    stride1, stride2 = conv2d(1, 64, 64, 58, 58, 3, 3), conv2d(1, 64, 64, 57, 57, 3, 3, 2)
    for name in ("khic_oh", "khic_oh_s2", "ic_ohoc"):
        df = adg.dataflow(name)
        s1 = shares_conflict(stride1, "X", df, x.ports, packs[name])
        s2 = shares_conflict(stride2, "X", df, x.ports, packs[name])
        if name == "khic_oh":
            assert s1 == "" and s2.startswith("tensor X's banks share DRAM words under dataflow khic_oh (stride 1)")
        elif name == "khic_oh_s2":
            assert s2 == "" and "khic_oh_s2 (stride 2)" in s1
        else:  # channels and output rows: no two lanes share an input row at either stride
            assert s1 == s2 == ""
