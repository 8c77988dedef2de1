"""``arch.fu=shiftadd``: a radix-2 shift-add multiplier (one partial product per bit of ``b``).

Two's complement: ``a * b = sum_{i < n-1} b_i * (a << i) - b_{n-1} * (a << (n-1))``,
everything modulo ``2**out_bits``; registered, latency 1, the ports of the built-in FUs.
"""
from __future__ import annotations

from lego_build.fulang.kinds import FU


def make_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0):
    from veriloggen import Cat, Int, Module, Mux, Posedge, Repeat

    third = f"x{c_bits}" if c_bits else ""
    m = Module(f"demo_shiftadd_{a_bits}x{b_bits}{third}_{out_bits}")
    clk = m.Input("clk")
    a = m.Input("a", a_bits)
    b = m.Input("b", b_bits)
    a_ext = m.Wire("a_ext", out_bits)
    m.Assign(a_ext(Cat(Repeat(a[a_bits - 1], out_bits - a_bits), a) if out_bits > a_bits else a[0:out_bits]))
    total = None
    for i in range(b_bits):
        pp = m.Wire(f"pp{i}", out_bits)
        m.Assign(pp(Mux(b[i], a_ext << i, Int(0, out_bits, base=10))))
        total = pp if total is None else (total - pp if i == b_bits - 1 else total + pp)
    if b_bits == 1:  # a 1-bit signed b is 0 or -1
        total = Int(0, out_bits, base=10) - total
    product = m.Wire("product", out_bits)
    m.Assign(product(total))
    p = m.OutputReg("p", out_bits)
    if c_bits:
        c = m.Input("c", c_bits)
        c_ext = m.Wire("c_ext", out_bits)
        m.Assign(c_ext(Cat(Repeat(c[c_bits - 1], out_bits - c_bits), c) if out_bits > c_bits else c[0:out_bits]))
        m.Always(Posedge(clk))(p(product * c_ext))
    else:
        m.Always(Posedge(clk))(p(product))
    return m


def _at_most_16(operand_bits: int) -> str | None:
    return None if operand_bits <= 16 else "arch.fu=shiftadd builds one partial product per bit: use at most 16"


FU = FU("shiftadd", "radix-2 shift-add multiplier (the demo plugin's)", make_mul, check=_at_most_16)
