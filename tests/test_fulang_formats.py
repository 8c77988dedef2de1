"""Number formats (lego_build.fulang.formats) against hand-worked examples of their specs."""
import numpy as np
import pytest

from lego_build.errors import InputError
from lego_build.fulang.formats import FORMATS, FP4, FP16, INT4, INT8

MX4, MX6, MX9, VSQ4, FP4INT4 = (FORMATS[n] for n in ("mx4", "mx6", "mx9", "vsq4", "fp4int4"))


def test_integers_round_half_to_even_and_saturate():
    assert INT8.encode([-128.6, 127.5, 2.5, -2.5, 3.5, -0.4]).tolist() == [0x80, 0x7F, 2, 0xFE, 4, 0]
    assert INT8.decode([0x80, 0x7F, 0xFE]).tolist() == [-128, 127, -2]
    assert INT4.encode([7.6, -8.5, -1]).tolist() == [7, 8, 15] and INT4.decode([8, 15]).tolist() == [-8, -1]


def test_fp16_codes_of_ieee_754_binary16():
    codes = [0x3C00, 0xC000, 0x7BFF, 0x0400, 0x0001, 0x03FF, 0x7C00, 0xFC00, 0x8000]
    values = [1.0, -2.0, 65504.0, 2.0 ** -14, 2.0 ** -24, 1023 * 2.0 ** -24, np.inf, -np.inf, -0.0]
    assert FP16.decode(codes).tolist() == values
    assert FP16.encode(values).tolist() == codes
    assert np.isnan(FP16.decode(0x7E00)) and FP16.encode(np.nan) == 0x7E00
    assert FP16.encode(1 / 3) == 0x3555


def test_fp16_rounds_to_nearest_even_and_overflows_to_infinity():
    assert FP16.encode(1 + 2.0 ** -11) == 0x3C00  # halfway between 1 and 1 + 2^-10: the even one
    assert FP16.encode(1 + 3 * 2.0 ** -11) == 0x3C02
    assert FP16.encode(2.0 ** -25) == 0 and FP16.encode(3 * 2.0 ** -25) == 2  # subnormal ties
    assert FP16.encode(65519.0) == 0x7BFF and FP16.encode(65520.0) == 0x7C00  # 65520: halfway to 2^16
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 1, 20000), rng.normal(0, 3e4, 20000), rng.normal(0, 1e-5, 20000),
                        rng.uniform(-7e4, 7e4, 20000)])
    with np.errstate(over="ignore"):  # numpy's float16 overflows to inf, as IEEE does
        assert np.array_equal(FP16.encode(x), x.astype(np.float16).view(np.uint16).astype(np.int64))


def test_fp4_e2m1_values_of_the_ocp_mx_spec():
    assert FP4.decode(range(16)).tolist() == [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    assert FP4.decode(FP4.encode(ties)).tolist() == [0, 1, 1, 2, 2, 4, 4]
    assert FP4.encode([7.0, 100.0, -100.0]).tolist() == [7, 7, 15]  # saturation at +-6
    with pytest.raises(InputError, match="fp4: NaN"):
        FP4.encode([np.nan])


def test_mx_groups_share_an_exponent_and_pairs_a_microexponent():
    x = np.zeros(16)
    x[:4] = [1.0, 0.5, 0.25, 0.125]
    c9 = MX9.encode(x)
    assert c9["exp"] == 127 and c9["micro"][:2].tolist() == [0, 1] and c9["mag"][:4].tolist() == [64, 32, 32, 16]
    assert np.array_equal(MX9.decode(c9), x)
    c4 = MX4.encode(x)
    assert c4["mag"][:4].tolist() == [2, 1, 1, 0]  # 0.125 is halfway between 0 and 0.25: even
    assert MX4.decode(c4)[:4].tolist() == [1.0, 0.5, 0.25, 0.0]
    y = np.full(16, -1.99)
    assert MX4.decode(MX4.encode(y)).tolist() == [-1.5] * 16  # magnitude saturates at 2^m - 1
    assert (MX4.bits, MX6.bits, MX9.bits) == (4.0, 6.0, 9.0)


def test_mx_error_shrinks_with_mantissa_bits():
    x = np.random.default_rng(1).normal(0, 1, (500, 16))
    err = [np.abs(f.decode(f.encode(x)) - x).mean() for f in (MX4, MX6, MX9)]
    assert err[0] > err[1] > err[2]


def test_vs_quant_scales_per_vector():
    x = np.zeros((2, 16))
    x[0, :3] = [14, -14, 2]
    x[1, :2] = [7, 1]
    c = VSQ4.encode(x)
    assert c["gamma"] == pytest.approx(2 / 255) and c["scale"].tolist() == [255, 128]
    assert c["q"][0, :3].tolist() == [7, -7, 1] and c["q"][1, :2].tolist() == [7, 1]
    assert np.abs(VSQ4.decode(c) - x).max() < 0.1


def test_fp4_int4_dot_is_the_seeds_expression_exactly():
    rng = np.random.default_rng(2)
    a, w = rng.normal(0.5, 1, (50, 64)), rng.normal(0, 0.02, (50, 64))
    ca, cw = FP4INT4.encode_acts(a), FP4INT4.encode_weights(w)
    real_a = FP16.decode(ca["scale"])[:, None] * (ca["a"] + ca["zero"][:, None])
    real_w = FP16.decode(cw["scale"])[:, None] * FP4.decode(cw["w"])
    assert np.array_equal(FP4INT4.dot(ca, cw), (real_a * real_w).sum(axis=-1))
    assert ca["a"].min() >= 0 and ca["a"].max() <= 15
    assert np.corrcoef(FP4INT4.dot(ca, cw), (a * w).sum(axis=-1))[0, 1] > 0.9
