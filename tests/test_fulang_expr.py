"""User-defined FUs (lego_build.fulang): tracing, widths, the reference against the formats'
own decoders, bad definitions, and the Verilog of Table 6.3's seven FUs under Verilator."""
from fractions import Fraction

import numpy as np
import pytest

from lego_build.fulang.expr import Float, FUError, Int, Vec, dot, evaluate, total, trace
from lego_build.fulang.formats import FORMATS, FP4, FP16, FloatFormat
from lego_build.fulang.library import TABLE_6_3, builtin
from lego_build.sim.fu_check import check
from lego_build.sim.verilator import lint

rng = np.random.default_rng(7)


def test_a_dot_product_gets_the_widths_and_tree_it_needs():
    def int8_dot(a: Vec(Int(8), 16), w: Vec(Int(8), 16)):
        return dot(a, w)
    fu = trace(int8_dot)
    assert (fu.multipliers, fu.adders) == (16, 15)  # a balanced tree of 15 two-input adders
    assert fu.out_bits == 20  # 16 x 128 x 128 = 2**18 needs 20 bits signed
    assert fu.result.lo == 16 * -128 * 127 and fu.result.hi == 16 * 128 * 128
    x = np.full((1, 16), 0x80)  # -128 everywhere: the largest sum
    assert int(evaluate(fu, {"a": x, "w": x})[0]) == 16 * 128 * 128


def test_fp4_int4_reference_is_the_formats_dot():
    fu = builtin("fp4_int4")
    f = FORMATS["fp4int4"]
    a, w = rng.normal(0.3, 1, (200, 64)), rng.normal(0, 0.05, (200, 64))
    ca, cw = f.encode_acts(a), f.encode_weights(w)
    y, ye = evaluate(fu, {"a": ca["a"], "w": cw["w"], "zp": ca["zero"] & 0xFF, "sa": ca["scale"], "sw": cw["scale"]})
    value = [int(m) * 2.0 ** (int(e) - fu.result.frac) for m, e in zip(y, ye)]
    assert value == f.dot(ca, cw).tolist()


@pytest.mark.parametrize("name", ["mx4", "mx6", "mx9"])
def test_mx_reference_is_the_sum_of_decoded_products(name):
    fu, f = builtin(name), FORMATS[name]
    a, w = f.encode(rng.normal(0, 1, (300, 16))), f.encode(rng.normal(0, 3, (300, 16)))
    inputs = {}
    for side, c in (("a", a), ("w", w)):
        inputs[side] = (c["sign"] << f.man_bits) | c["mag"]
        inputs["u" + side], inputs["e" + side] = c["micro"], c["exp"]
    y, ye = evaluate(fu, inputs)
    offset = -2 * 127 - 2 * (f.man_bits - 1) - fu.result.frac  # the E8M0 biases and fixed points
    value = np.array([int(m) * 2.0 ** (int(e) + offset) for m, e in zip(y, ye)])
    assert np.array_equal(value, (f.decode(a) * f.decode(w)).sum(axis=-1))


def test_vsq_and_fp16_references():
    f = FORMATS["vsq4"]
    a, w = f.encode(rng.normal(0, 1, (100, 16))), f.encode(rng.normal(0, 1, (100, 16)))
    y = evaluate(builtin("vsq_int4"), {"a": a["q"] & 15, "w": w["q"] & 15, "sa": a["scale"], "sw": w["scale"]})
    assert [int(v) for v in y] == (a["scale"] * w["scale"] * (a["q"] * w["q"]).sum(axis=-1)).tolist()
    fu = builtin("fp16")
    codes = rng.integers(0, 0x7C00, (2, 500, 16)) | (rng.integers(0, 2, (2, 500, 16)) << 15)  # finite halves
    y = evaluate(fu, {"a": codes[0], "w": codes[1]})
    exact = [sum(Fraction(a) * Fraction(w) for a, w in zip(ra, rw)) for ra, rw in zip(*FP16.decode(codes))]
    assert [Fraction(int(v), 2 ** fu.result.frac) for v in y] == exact


@pytest.mark.parametrize("body,message", [
    (lambda: trace(_zero_width), "FU _zero_width: input a: width 0"),
    (lambda: trace(_groups), "FU _groups: dot of groups of 16 and 8 elements"),
    (lambda: trace(_divide), "FU _divide: operator / is not supported"),
    (lambda: trace(_no_mantissa), "FU _no_mantissa: input a: float format e3m0 has no mantissa bit"),
    (lambda: trace(_untyped), "FU _untyped: input a: annotate it"),
    (lambda: trace(_empty_group), "FU _empty_group: input a: a group of 0 elements"),
])
def test_bad_fu_definitions_name_the_fu_and_the_problem(body, message):
    with pytest.raises(FUError, match=message):
        body()


def _zero_width(a: Int(0), b: Int(4)):
    return a * b


def _groups(a: Vec(Int(4), 16), b: Vec(Int(4), 8)):
    return dot(a, b)


def _divide(a: Int(8), b: Int(8)):
    return a / b


def _no_mantissa(a: Float(FloatFormat("e3m0", 3, 0, 3, ieee=False)), b: Int(4)):
    return a * b


def _untyped(a, b: Int(4)):
    return a * b


def _empty_group(a: Vec(Int(4), 0)):
    return total(a)


def _extremes(fu, n_random: int):
    """``n_random`` random vectors, then every port at each extreme code (0, 1, the top bit
    alone, all ones, all ones but the top) against every other port at each extreme."""
    inputs = {}
    pats = lambda w: [0, 1, 1 << (w - 1), (1 << w) - 1, (1 << (w - 1)) - 1]  # noqa: E731
    combos = [(i, j) for i in range(5) for j in range(5)]
    for k, (p, t) in enumerate(fu.ports):
        w = t.elem.width if isinstance(t, Vec) else t.width
        shape = (n_random, t.n) if isinstance(t, Vec) else (n_random,)
        extreme = [pats(w)[i if k % 2 == 0 else j] for i, j in combos]
        col = np.array(extreme)[:, None].repeat(t.n, 1) if isinstance(t, Vec) else np.array(extreme)
        inputs[p] = np.concatenate([rng.integers(0, 1 << w, shape), col])
    return inputs


@pytest.mark.slow
@pytest.mark.parametrize("name", TABLE_6_3)
def test_table_6_3_fus_are_bit_exact_in_verilator(tmp_path, name):
    """Seed 004 Table 6.3's seven FUs: 10,000 random groups and the extremes of every code
    (zero, smallest, most negative, all ones: FP16 subnormals and its top binade, MX's largest
    shared exponents), every output against the reference."""
    fu = builtin(name)
    res = check(fu, _extremes(fu, 10_000), tmp_path)
    assert res["vectors"] == 10_025 and res["mismatches"] == 0, res
    assert lint(tmp_path, f"lego_fu_{name}") == []


def test_fp4_decodes_to_its_table():
    def one(w: Float(FP4)):
        return w + 0
    fu = trace(one)
    got = evaluate(fu, {"w": np.arange(16)})
    assert [int(v) / 2 ** fu.result.frac for v in got] == FP4.decode(range(16)).tolist()
