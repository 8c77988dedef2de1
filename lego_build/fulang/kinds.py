"""FU kinds (``arch.fu``): the multiplier each FU of the array opens into.

An :class:`FU` says which operand widths it supports and generates its multiplier;
codegen records its name on the ``mul`` nodes (:class:`lego_build.ir.dag.MulSpec`) and
emit instantiates ``make_mul``. The built-ins are a plain signed multiplier and
BitFusion's 2-bit BitBrick shift-add; a user's FU is an ``FU`` object behind an entry
point of group ``lego_build.fus`` (:mod:`lego_build.runtime.registry`), e.g.::

    [project.entry-points."lego_build.fus"]
    booth = "my_fus.booth:BOOTH"

then ``arch.fu=booth``. An FU written in the FU language (:mod:`lego_build.fulang.expr`) becomes
a kind with :func:`expression_fu`: its parameters bind to the kernel's inputs in order (the
activations, then the weights), their widths become the operand buffers' widths (a 4-bit
weight is stored, moved and costed as 4 bits), the simulator's golden model sums the FU's own
products (its NumPy reference) and the accumulator check uses its product's range.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from lego_build.errors import InputError
from lego_build.runtime.registry import Registry

if TYPE_CHECKING:  # NumPy and the FU language load with an FU-language kind, not with dodo.py
    import numpy as np
    from veriloggen import Module


class MulGenerator(Protocol):
    def __call__(self, a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
        """A registered multiplier, latency 1: ports ``clk``, ``a``, ``b`` (and ``c`` when ``c_bits``), ``p``
        (``a * b [* c]`` modulo ``2**out_bits``, operands signed); the module's name encodes the sizes."""
        ...


def any_width(operand_bits: int) -> str | None:
    """No width limit of the FU's own."""
    return None


def signed_bound(operand_bits: int, inputs: int) -> int:
    """Largest magnitude of a product of ``inputs`` signed ``operand_bits`` operands."""
    return (1 << (operand_bits - 1)) ** inputs


@dataclass(frozen=True)
class FU:
    """One FU kind. ``check(operand_bits)`` gives the one-line reason a width is not supported
    (``None``: supported); ``dsp_fusable``: the FPGA pass ``mac_fusion`` may merge the multiplier
    and its accumulator into one DSP-slice MAC (:func:`rtl_templates_free.mk_mac`).

    An FU whose product is not the operands' signed product says so: ``widths`` are its
    operands' widths in the kernel's input order (empty: ``arch.operand_bits`` each),
    ``product(codes)`` its exact products from the operands' values (``None``: the signed
    product) and ``bound(operand_bits, inputs)`` the largest magnitude one product reaches."""

    name: str
    doc: str
    make_mul: MulGenerator
    check: Callable[[int], str | None] = any_width
    dsp_fusable: bool = False
    widths: tuple[int, ...] = ()
    product: Callable[[Sequence[np.ndarray]], np.ndarray] | None = None
    bound: Callable[[int, int], int] = signed_bound
    storage: tuple[float, ...] = ()
    group: int = 1

    def width(self, operand: int, operand_bits: int) -> int:
        """Bits of the kernel's input number ``operand`` (0: activations, 1: weights) in the array."""
        return self.widths[operand] if operand < len(self.widths) else operand_bits

    def stored(self, operand: int, operand_bits: float) -> float:
        """Bits per element of input ``operand`` in memory, which the mapper moves and costs: a
        group format's (``storage``, its shared scales included), else the array's width."""
        return self.storage[operand] if operand < len(self.storage) else self.width(operand, operand_bits)

    def check_inputs(self, inputs: int) -> str | None:
        """Why a kernel of ``inputs`` operands cannot run on this FU (``None``: it can)."""
        if self.widths and inputs != len(self.widths):
            return (f"arch.fu={self.name} takes {len(self.widths)} operands; the array's kernel family has "
                    f"{inputs}: choose an arch.family of that many inputs, or give the FU as many parameters")
        return None


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

#: operand widths whose every code pair fits a lookup table of the products (2**bits entries)
LUT_BITS = 20


def expression_fu(fn, doc: str = "", name: str | None = None) -> FU:
    """An FU kind from a function in the FU language (seed 004 §6.3), e.g. an 8-bit activation
    times a 4-bit weight stored with a zero point of 8 (the offset-binary int4 of GPTQ-style
    weights)::

        def zp4(a: Int(8), w: Int(4, signed=False)):
            return a * (w - 8)

    Its parameters are scalars (``Int``, ``SignMag`` or ``Float``; one per kernel input) and
    its result an integer, which the array accumulates (a float's mantissa product is exact
    and its sum in fixed point needs the exponents, so an array FU returns ``value * 2**frac``).
    The golden model's products come from :func:`lego_build.fulang.expr.evaluate` on the same
    graph the Verilog comes from (a lookup table of every code combination when the widths sum
    to at most :data:`LUT_BITS`)."""
    import numpy as np

    from lego_build.fulang import expr

    fu = expr.trace(fn, name)
    for port, t in fu.ports:
        if isinstance(t, expr.Vec):
            raise expr.FUError(f"FU {fu.name}: input {port} is a group; an array FU takes one element per "
                               "operand (write group FUs for lego_build.fulang.library's study)")
    if fu.out_exp >= 0:
        raise expr.FUError(f"FU {fu.name}: returns a float (mantissa and exponent); an array FU returns an "
                           "integer for the accumulator (adding 0 shifts a float into fixed point)")
    if not 2 <= len(fu.ports) <= 3:
        raise expr.FUError(f"FU {fu.name}: {len(fu.ports)} parameters; an array FU takes 2 or 3 operands")
    widths = tuple(t.width for _, t in fu.ports)
    names = [port for port, _ in fu.ports]
    table = None
    if sum(widths) <= LUT_BITS:  # every code combination, once
        codes = np.indices([1 << w for w in widths]).reshape(len(widths), -1)
        table = np.asarray(expr.evaluate(fu, dict(zip(names, codes))), dtype=np.int64).reshape(
            [1 << w for w in widths])

    def product(values: Sequence[np.ndarray]) -> np.ndarray:
        codes = [np.asarray(v, dtype=np.int64) & ((1 << w) - 1) for v, w in zip(values, widths)]
        if table is not None:
            return table[tuple(codes)]
        return expr.evaluate(fu, dict(zip(names, codes)))

    def check(operand_bits: int) -> str | None:
        if operand_bits != max(widths):
            return (f"arch.fu={fu.name}'s widest operand has {max(widths)} bits; set arch.operand_bits="
                    f"{max(widths)}")
        return None

    def make_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
        from lego_build.fulang.emit import mk_array_fu  # Veriloggen only when emitting

        return mk_array_fu(fu, (a_bits, b_bits, c_bits)[:len(widths)], out_bits)

    r = fu.result
    return FU(fu.name, doc or fu.name, make_mul, check, widths=widths, product=product,
              bound=lambda *_: max(abs(r.lo), abs(r.hi)))


def group_fu(fn, storage: tuple[float, float], doc: str = "", operands: tuple[str, str] = ("a", "w")) -> FU:
    """A group FU of seed 004 Table 6.3 (a dot product of ``n``-element groups with shared scales,
    :mod:`lego_build.fulang.library`) as an FU kind the mapper costs: its MAC rate is the array's
    (the group's reduction spans ``n`` positions, so 1024 positions do 1024 MACs per cycle, the
    paper's equal-rate comparison), its operands move at ``storage`` bits per element
    (activations, weights; the format's scales and exponents included) and sit in banks of
    that width rounded up. The generated array
    places one scalar FU per position, so emitting one is refused in one line; the group FU's
    own Verilog is checked alone (:mod:`lego_build.sim.fu_check`)."""
    from lego_build.fulang import expr

    fu = expr.trace(fn)
    ports = dict(fu.ports)
    group = ports[operands[0]].n

    def make_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
        raise InputError(f"arch.fu={fu.name}: a group FU ({group}-element dot products) is costed by the mapper "
                         "(doit map) but not placed in the generated array; build RTL with a scalar arch.fu "
                         "(mac, or one from lego_build.fulang.kinds.expression_fu)")

    return FU(fu.name, doc or fu.name, make_mul, widths=tuple(ceil(b) for b in storage), storage=tuple(storage),
              group=group)


FUS: Registry[FU] = Registry("lego_build.fus", "arch.fu", {
    "mac": "lego_build.fulang.kinds:MAC",
    "bitfusion": "lego_build.fulang.kinds:BITFUSION",
    **{name: f"lego_build.fulang.library:KINDS.{name}" for name in ("fp16", "int8", "fp4_int4", "vsq_int4", "mx4",
                                                                   "mx6", "mx9")},
})
