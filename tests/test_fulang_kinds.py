"""FU kinds (lego_build.fulang.kinds): the built-ins' defaults and FU-language FUs as array FUs
(their widths, product range, products for the golden model and the refused definitions)."""
from __future__ import annotations

import numpy as np
import pytest

from lego_build.fulang.expr import Float, FUError, Int, SignMag, Vec, dot
from lego_build.fulang.formats import FP16
from lego_build.fulang.kinds import FUS, LUT_BITS, expression_fu


def test_builtins_multiply_at_the_arch_width():
    mac = FUS.get("mac")
    assert mac.widths == () and mac.product is None and mac.width(1, 8) == 8
    assert mac.bound(8, 2) == 128 * 128 and mac.check_inputs(3) is None


def test_products_from_the_table_and_from_the_graph_agree_with_the_expression():
    def sm(a: Int(8), w: SignMag(4)):
        return (a * w << 1) - a

    def wide(a: Int(12), w: Int(11, signed=False)):
        return a * (w - 1000) + 3

    small, big = expression_fu(sm), expression_fu(wide)
    assert sum(big.widths) > LUT_BITS >= sum(small.widths)  # one through the table, one through evaluate
    rng = np.random.default_rng(3)
    a, w = rng.integers(-128, 128, 5000), rng.integers(-8, 8, 5000)
    mag = np.where(w & 8, -(w & 7), w & 7)
    assert (small.product([a, w]) == 2 * a * mag - a).all()
    assert small.bound(8, 2) == 128 * 7 * 2 + 128 and small.widths == (8, 4)
    a, w = rng.integers(-2048, 2048, 2000), rng.integers(0, 2048, 2000)
    assert (np.asarray(big.product([a, w]), dtype=np.int64) == a * (w - 1000) + 3).all()
    assert big.bound(12, 2) == 2048 * 1047 - 3  # the most negative: -2048 * 1047 + 3


def test_array_fu_checks():
    def zp(a: Int(8), w: Int(4, signed=False)):
        return a * (w - 8)

    fu = expression_fu(zp, "int8 x int4")
    assert fu.check(8) is None and "set arch.operand_bits=8" in fu.check(16)
    assert "takes 2 operands; the array's kernel family has 3" in fu.check_inputs(3)
    assert fu.make_mul(8, 4, 20).name == "lego_fu_zp_8x4_p20"


def test_refused_array_fus_name_the_fu():
    def group(a: Vec(Int(8), 4), w: Vec(Int(8), 4)):
        return dot(a, w)

    def flt(a: Float(FP16), w: Float(FP16)):
        return a * w

    def one(a: Int(8)):
        return a * a

    with pytest.raises(FUError, match=r"^FU group: input a is a group; an array FU takes one element per operand"):
        expression_fu(group)
    with pytest.raises(FUError, match=r"^FU flt: returns a float \(mantissa and exponent\)"):
        expression_fu(flt)
    with pytest.raises(FUError, match=r"^FU one: 1 parameters; an array FU takes 2 or 3 operands"):
        expression_fu(one)
