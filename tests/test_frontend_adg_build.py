"""Bank sizing from the documented on-chip capacity (arch.onchip_kb, issue 18): the split over the
tensors is exact; every preset's generated capacity is checked at full size with its lint
(tests/test_emit_stage.py, which builds each preset once). Links planned for a strided
dataflow (``arch.dataflows.*.stride``)."""
import pytest

from lego_build.analysis.kernels import conv2d
from lego_build.config.compose import compose
from lego_build.errors import ConfigError
from lego_build.flow.validate import validate
from lego_build.frontend.adg_build import build_adg, split_capacity

#: the figures the presets' comments cite (seed 004 §6 / Table 6.1 and the papers they name)
DOCUMENTED_KB = {"gemmini_like": 256, "lego_mnicoc": 256, "lego_icoc_1k": 576, "eyeriss": 108, "eyeriss_khoh": 108,
                 "eyeriss_ruby": 128,
                 "nvdla": 128, "shidiannao": 288, "interstellar_ck2": 256, "nmp": 24, "nmp_nominal": 24}


def test_split_is_exact_and_balanced():
    rows = [("A", 2 * 16 * 8), ("B", 2 * 256 * 8), ("Y", 2 * 16 * 32)]
    depths = dict(split_capacity(256, rows))
    assert sum(depths[t] * bits for t, bits in rows) == 256 * 1024 * 8
    shares = [depths[t] * bits for t, bits in rows]
    assert max(shares) / min(shares) < 1.1  # about a third each


def test_a_capacity_off_the_rows_is_rounded_down_and_a_share_without_a_word_is_an_error():
    # 3 lanes: rows of 6 and 24 bytes; 1 KB is not a multiple of 6 B, 1020 B is
    depths = dict(split_capacity(1, [("A", 2 * 3 * 8), ("Y", 2 * 3 * 32)]))
    assert depths["A"] * 6 + depths["Y"] * 24 == 1020
    with pytest.raises(ConfigError, match=r"arch.onchip_kb=0.0234375: cannot be split"):
        split_capacity(0.0234375, [("A", 2 * 3 * 8), ("Y", 2 * 3 * 32)])  # 24 B: one row of Y, none of A



def test_a_stride_2_dataflow_gets_its_own_input_diagonal():
    """Eyeriss's row-stationary array (kh on rows, oh on columns): at stride 1 an input row is
    reused one FU down and one back, at stride 2 two down and one back (ih = 2 oh + kh); the
    filter and partial-sum links are the same in both, so the merge shares them."""
    cfg = compose(["arch=eyeriss_khoh", "arch.rows=4", "arch.cols=4"])
    validate(cfg)
    adg = build_adg(conv2d(1, 4, 4, 8, 8, 3, 3), cfg.arch)
    nets = {n.tensor: n for n in adg.nets}

    def vectors(tensor, df):
        return {tuple(b - a for a, b in zip(lk.src, lk.dst)) for lk in nets[tensor].links if df in lk.dataflows}

    assert vectors("X", "khoh") == {(1, -1)} and vectors("X", "khoh_s2") == {(2, -1)}
    for t in ("W", "Y"):
        assert vectors(t, "khoh") == vectors(t, "khoh_s2")


@pytest.mark.parametrize("arch, key", [("eyeriss", "arch.dataflows.khoh.stride=0"),
                                       ("systolic", "arch.dataflows.main.stride=2")])
def test_bad_dataflow_stride_is_a_one_line_error(arch, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        validate(compose([f"arch={arch}", key]))
