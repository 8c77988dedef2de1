"""An FU in the FU language: 8-bit activations times 4-bit weights stored with a zero point of 8."""
from lego_build.fulang.expr import Int
from lego_build.fulang.kinds import expression_fu


def zp4(a: Int(8), w: Int(4, signed=False)):
    return a * (w - 8)


FU = expression_fu(zp4, "int8 x offset-binary int4 (weight code - 8)")
