"""FU kinds (``arch.fu``): the multiplier each FU of the array opens into.

An :class:`FU` says which operand widths it supports and generates its multiplier;
codegen records its name on the ``mul`` nodes (:class:`lego_build.ir.dag.MulSpec`) and
emit instantiates ``make_mul``. The built-ins are a plain signed multiplier and
BitFusion's 2-bit BitBrick shift-add; a user's FU is an ``FU`` object behind an entry
point of group ``lego_build.fus`` (:mod:`lego_build.runtime.registry`), e.g.::

    [project.entry-points."lego_build.fus"]
    booth = "my_fus.booth:BOOTH"

then ``arch.fu=booth``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol

from lego_build.runtime.registry import Registry

if TYPE_CHECKING:
    from veriloggen import Module


class MulGenerator(Protocol):
    def __call__(self, a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
        """A registered multiplier, latency 1: ports ``clk``, ``a``, ``b`` (and ``c`` when ``c_bits``), ``p``
        (``a * b [* c]`` modulo ``2**out_bits``, operands signed); the module's name encodes the sizes."""
        ...


def any_width(operand_bits: int) -> str | None:
    """No width limit of the FU's own."""
    return None


@dataclass(frozen=True)
class FU:
    """One FU kind. ``check(operand_bits)`` gives the one-line reason a width is not supported
    (``None``: supported); ``dsp_fusable``: the FPGA pass ``mac_fusion`` may merge the multiplier
    and its accumulator into one DSP-slice MAC (:func:`rtl_templates_free.mk_mac`)."""

    name: str
    doc: str
    make_mul: MulGenerator
    check: Callable[[int], str | None] = any_width
    dsp_fusable: bool = False


def _mk_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
    from rtl_templates_free import mk_mul  # Veriloggen only when emitting, not when checking a config

    return mk_mul(a_bits, b_bits, out_bits, c_bits)


def _mk_bitfusion_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
    from rtl_templates_free import mk_bitfusion_mul

    return mk_bitfusion_mul(a_bits, b_bits, out_bits, c_bits)


def _even(operand_bits: int) -> str | None:
    if operand_bits % 2:
        return "arch.fu=bitfusion splits operands into 2-bit digits, so it must be even"
    return None


MAC = FU("mac", "a signed operand_bits x operand_bits multiplier", _mk_mul, dsp_fusable=True)
BITFUSION = FU("bitfusion", "BitFusion's shift-add of 2-bit x 2-bit BitBrick products (even operand_bits)",
               _mk_bitfusion_mul, check=_even)

FUS: Registry[FU] = Registry("lego_build.fus", "arch.fu", {
    "mac": "lego_build.backend.fus:MAC",
    "bitfusion": "lego_build.backend.fus:BITFUSION",
})
