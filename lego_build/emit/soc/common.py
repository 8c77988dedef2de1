"""What the blocks of ``lego_soc`` share: the context they build in (:class:`Ctx`) and small
expression helpers."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import reduce

from veriloggen import Int, Module, Mux, StubModule

from lego_build.ir.host import HostMap
from lego_build.ir.soc import SocMap

ADDR = 32  # AXI address bits
MAX_BURST = 256  # AXI4 INCR burst length limit (beats)


@dataclass
class Ctx:
    """Signals the blocks share."""

    m: Module
    hm: HostMap
    sm: SocMap
    clk: object
    rst: object
    regs: dict
    core: dict
    mi: dict
    mo: dict
    w: dict  # wires between blocks
    unused: list  # bits no block reads (collected on one wire Verilator's lint ignores by name)
    parts: dict = field(default_factory=dict)  # module name -> the small modules the blocks instantiate


def num(v: int, w: int):
    """The constant ``v`` of ``w`` bits (decimal in the Verilog)."""
    return Int(v, w, base=10)


def ors(terms):
    return reduce(lambda a, b: a | b, terms)


def ands(terms):
    return reduce(lambda a, b: a & b, terms)


def pick(sel, width: int, options: list):
    """``options[sel]`` as a multiplexer chain (the last option is the default)."""
    out = options[-1]
    for k in reversed(range(len(options) - 1)):
        out = Mux(sel == num(k, width), options[k], out)
    return out


def tree_pick(sel, width: int, options: list, merge: bool = False):
    """``options[sel]`` as a balanced multiplexer tree on ``sel``'s bits (``log2 n`` levels where
    :func:`pick`'s chain has ``n``), the last option for ``sel`` past the end, as :func:`pick`;
    ``merge``: a multiplexer of one signal twice is that signal (a shared output lane's word is
    several ports' of a row)."""
    if len(options) == 1:
        return options[0]
    k = (len(options) - 1).bit_length()
    assert k <= width, (len(options), width)
    level = options + [options[-1]] * ((1 << k) - len(options))
    for j in range(k):
        level = [lo if merge and hi is lo else Mux(bit(sel, j, width), hi, lo)
                 for lo, hi in zip(level[0::2], level[1::2])]
    out = level[0]
    if width > k:  # an index past the options' power of two
        out = Mux(sel[k:width] != num(0, width - k), options[-1], out)
    return out


def bit(sig, k: int, n: int):
    """Bit ``k`` of an ``n``-bit signal (a one-bit signal has no bit range)."""
    return sig[k] if n > 1 else sig


def deps(c: Ctx, t: int) -> list:
    """Per level, whether tensor ``t``'s rows move along it (its bank stride is not zero)."""
    return [c.regs["bank"][t][l] != num(0, c.hm.addr_bits) for l in range(c.hm.levels)]


def first_set(bits: list, indices: list, width: int):
    """The first of ``indices`` whose bit is set (the last one when none is)."""
    out = num(indices[-1], width)
    for u in reversed(indices[:-1]):
        out = Mux(bits[u], num(u, width), out)
    return out


def smaller(a, b):
    return Mux(a < b, a, b)


def wire(m: Module, name: str, width: int, expr):
    """``expr`` on a named wire (Verilog cannot part-select an expression)."""
    out = m.Wire(name, width)
    m.Assign(out(expr))
    return out


def per_df(c: Ctx, options: list):
    """``options[d]`` for the running dataflow ``d`` (the only option of a single-dataflow design)."""
    if len(options) == 1 or all(o is options[0] for o in options):
        return options[0]
    return pick(c.w["df"], c.hm.df_bits, options)


def ndf(c: Ctx) -> int:
    """The dataflows of the design (1 for a single-dataflow one)."""
    return max(1, len(c.hm.dataflows))


WIDE = 16  # sums at least this wide are built as their own modules (:func:`add`)


def mk_add(width: int) -> Module:
    """``s = a + b`` modulo ``2**width``, combinational, as a module of its own (named
    ``lego_soc_*``, so the asic target counts it with the memory system)."""
    m = Module(f"lego_soc_add_w{width}")
    a, b = m.Input("a", width), m.Input("b", width)
    s = m.Output("s", width)
    m.Assign(s(a + b))
    return m


def add(c: Ctx, name: str, a, b, width: int):
    """``a + b`` on the wire ``name``: a wide one through an instance of :func:`mk_add` (issue 44:
    inside ``lego_soc`` of a 16 x 16 multi-dataflow array ABC left the walkers' 32-bit sums
    rippling, 54 logic levels and 6.3 ns, lego_mnicoc's worst path; a module of its own is mapped
    for delay on its own, as the folded banks' read-modify-write sums are)."""
    if width < WIDE:
        return wire(c.m, name, width, a + b)
    part = mk_add(width)
    c.parts.setdefault(part.name, part)
    out = c.m.Wire(name, width)
    c.m.Instance(StubModule(part.name), f"u_{name}", ports=[("a", a), ("b", b), ("s", out)])
    return out
