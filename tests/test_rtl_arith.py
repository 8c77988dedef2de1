"""``rtl_templates_free.arith``: the carry-save (Wallace) product tree equals Verilog's ``*``.

Each case builds the tree and a reference ``assign p = a * b`` (operands extended to the
product width as their signedness says) and asks Yosys's SAT solver to prove the two equal
for every operand pair (``miter -equiv``, ``sat -prove trigger 0``); a tree given the wrong
signedness must be refuted, so the check can fail.
"""
from __future__ import annotations

import subprocess

import pytest
from veriloggen import Cat, Int, Module, Repeat

from lego_build.targets.yosys import YOSYS
from rtl_templates_free.arith import tree_product

pytestmark = pytest.mark.slow  # a SAT proof per case in WebAssembly Yosys: about 10 s each


def _yosys() -> str:
    why = YOSYS.missing()
    if why:
        pytest.skip(why)
    return YOSYS.path()


def _extend(sig, bits: int, width: int, signed: bool):
    if width <= bits:
        return sig[0:width]
    return Cat(Repeat(sig[bits - 1] if signed else Int(0, 1, base=2), width - bits), sig)


def _pair(na: int, sa: bool, nb: int, sb: bool, w: int, tree_signed: tuple[bool, bool] | None = None) -> str:
    ta, tb = tree_signed or (sa, sb)
    text = []
    for kind in ("ref", "dut"):
        m = Module(kind)
        a, b, p = m.Input("a", na), m.Input("b", nb), m.Output("p", w)
        if kind == "ref":
            m.Assign(p(_extend(a, na, w, sa) * _extend(b, nb, w, sb)))
        else:
            m.Assign(p(tree_product(m, "t", a, na, ta, b, nb, tb, w)))
        text.append(m.to_verilog())
    return "\n".join(text)


def _equal(tmp_path, verilog: str) -> bool:
    src = tmp_path / "pair.v"
    src.write_text(verilog)
    script = (f"read_verilog {src.name}; proc; opt_clean; miter -equiv -flatten -make_outputs ref dut miter; "
              "hierarchy -top miter; sat -verify -prove trigger 0 -show-inputs miter")
    run = subprocess.run([_yosys(), "-q", "-p", script], cwd=tmp_path, capture_output=True, text=True)
    return run.returncode == 0


@pytest.mark.parametrize("na,sa,nb,sb,w", [
    pytest.param(8, True, 8, True, 16, marks=pytest.mark.long),  # the int8 MAC's product (every RTL run multiplies it)
    (6, False, 5, True, 13),  # mixed signedness, odd widths
    (7, True, 4, False, 14),
    (5, True, 5, True, 7),  # truncated: the low bits of the product
    (9, False, 6, False, 20),  # wider than the product needs
])
def test_tree_product_equals_multiply(tmp_path, na, sa, nb, sb, w):
    assert _equal(tmp_path, _pair(na, sa, nb, sb, w))


def test_wrong_signedness_is_refuted(tmp_path):
    assert not _equal(tmp_path, _pair(6, True, 5, True, 11, tree_signed=(False, True)))
