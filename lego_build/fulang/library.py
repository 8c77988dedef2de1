"""The FUs of seed 004 Table 6.3, written in the FU language (:mod:`lego_build.fulang.expr`).

Each is a few lines over typed signals; widths, adder trees and the NumPy reference follow from
the expression. Scales and biases that are constant per tensor (VS-Quant's ``gamma``, the E8M0
bias of MX exponents, the fixed point of a float's mantissa) stay outside the FU: its result is
an exact integer (``y``), or a mantissa and an exponent (``y``, ``ye``) whose value is
``y * 2**(ye - frac)`` with the output node's ``frac``.

Table 6.3 compares arrays of the same MAC rate, so every FU here is a group's dot product and
an array of 1024 MACs per cycle has ``1024 / group`` of them (the paper's FU array, 128 x 8, with
the group's reduction across FUs).

* ``int8``: a dot product of 16 signed 8-bit pairs (the baseline; the paper gives no group).
* ``fp16``: a dot product of 16 IEEE half pairs, exact: each product's 22-bit mantissa shifted by
  its exponent into fixed point and summed without rounding (a Kulisch accumulation; a rounding
  FP16 adder tree would be smaller, the language has no rounding operator yet).
* ``fp4_int4``: seed 004's pseudo-code, a group of 64 (:data:`lego_build.fulang.formats.FORMATS`
  ``fp4int4``): ``sa * sw * (dot(a, w) + zp * total(w))``.
* ``vsq_int4``: VS-Quant, a vector of 16 signed 4-bit elements per side and their 8-bit
  per-vector scales: ``sa * sw * dot(a, w)``.
* ``mx4`` / ``mx6`` / ``mx9``: shared-microexponent groups of 16 (sign and 2-, 4-, 7-bit
  magnitudes, a 1-bit micro-exponent per pair, an 8-bit shared exponent per group): each product
  scaled down by its pair's micro-exponents, summed, scaled by the two shared exponents.
"""
from types import SimpleNamespace

from lego_build.fulang.expr import FU, Float, Int, SignMag, Vec, dot, scale, total, trace
from lego_build.fulang.formats import FORMATS, FP4, FP16
from lego_build.fulang.kinds import group_fu

U1, U8 = Int(1, signed=False), Int(8, signed=False)


def int8(a: Vec(Int(8), 16), w: Vec(Int(8), 16)):
    return dot(a, w)


def fp16(a: Vec(Float(FP16), 16), w: Vec(Float(FP16), 16)):
    return dot(a, w)


def fp4_int4(a: Vec(Int(4, signed=False), 64), w: Vec(Float(FP4), 64), zp: Int(8), sa: Float(FP16),
             sw: Float(FP16)):
    return sa * sw * (dot(a, w) + zp * total(w))


def vsq_int4(a: Vec(Int(4), 16), w: Vec(Int(4), 16), sa: U8, sw: U8):
    return sa * sw * dot(a, w)


def _mx(name: str, mag_bits: int):
    E = SignMag(mag_bits + 1)

    def mx(a: Vec(E, 16), ua: Vec(U1, 8), ea: U8, w: Vec(E, 16), uw: Vec(U1, 8), ew: U8):
        terms = [scale(a[i] * w[i], -(ua[i // 2] + uw[i // 2])) for i in range(16)]
        while len(terms) > 1:  # a balanced tree of the aligned products
            terms = [terms[i] + terms[i + 1] for i in range(0, len(terms), 2)]
        return scale(terms[0], ea + ew)
    mx.__name__ = name
    return mx


mx4, mx6, mx9 = _mx("mx4", 2), _mx("mx6", 4), _mx("mx9", 7)

#: Table 6.3's columns, in its order
TABLE_6_3 = ("fp16", "int8", "fp4_int4", "vsq_int4", "mx4", "mx6", "mx9")


def builtin(name: str) -> FU:
    """One of :data:`TABLE_6_3`, traced."""
    return trace(globals()[name], name)


#: bits per element in memory (activations, weights), each group's scales and exponents included:
#: what LLaMA-7B's weights cost in DRAM traffic under each format (seed 004 Table 6.3's speed-ups)
STORAGE = {"fp16": (16, 16), "int8": (8, 8),
           "fp4_int4": (FORMATS["fp4int4"].act_bits, FORMATS["fp4int4"].bits),
           "vsq_int4": (FORMATS["vsq4"].bits, FORMATS["vsq4"].bits),
           **{n: (FORMATS[n].bits, FORMATS[n].bits) for n in ("mx4", "mx6", "mx9")}}

#: Table 6.3's FUs as FU kinds for the mapper (``arch.fu=mx4``, :func:`lego_build.fulang.kinds.group_fu`)
KINDS = SimpleNamespace(**{name: group_fu(globals()[name], STORAGE[name], f"seed 004 Table 6.3 {name} group FU")
                           for name in TABLE_6_3})
