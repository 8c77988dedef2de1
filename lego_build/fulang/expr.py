"""User-defined FUs: a Python function over typed signals, traced into an expression graph.

Seed 004 §6.3: "a user describes a new functional unit in a few lines and the back end derives
bit-widths, pipelining and adder trees". An FU is a function whose parameters are annotated
with signal types, e.g. seed 004's FP4-INT4 group::

    def fp4_int4(a: Vec(Int(4, signed=False), 64), w: Vec(Float(FP4), 64), zp: Int(8),
                 sa: Float(FP16), sw: Float(FP16)):
        return sa * sw * (dot(a, w) + zp * total(w))

Calling it on :class:`Sig` objects records every operation as a :class:`Node` of one
:class:`Graph` (equal sub-expressions are one node). Every integer value is an exact
fixed-point integer: a node holds ``value * 2**frac`` in ``[lo, hi]`` (range inference, so its
width is the fewest two's-complement bits that hold the range: nothing wraps). A float input is
a :class:`FSig`, a mantissa and an exponent (``value = mantissa * 2**exponent``, the hidden bit
explicit, no inf or NaN inside an FU): a product of floats multiplies the mantissas and adds
the exponents, exactly, with no normalisation or rounding (seed 004's FP4-INT4 scales); a sum
that takes a float first shifts its mantissa by its exponent into fixed point (a barrel
shifter), so nothing rounds there either. ``dot`` and ``total`` are balanced adder trees, whose
adders the back end sees one by one. The same graph gives the NumPy reference
(:func:`evaluate`) and the Verilog (:mod:`lego_build.fulang.emit`). An FU's result is one
integer (``y``) or, for a float, a mantissa ``y`` and an exponent ``ye``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import numpy as np

from lego_build.errors import InputError
from lego_build.fulang.formats import FloatFormat

#: the operators an FU expression may use; anything else is refused with this list
OPERATORS = ("+", "-", "*", "unary -", "<< constant", "dot", "total")


class FUError(InputError):
    """A bad FU definition (reported with the FU's name)."""


@dataclass(frozen=True)
class _Bits:
    bits: int

    @property
    def width(self) -> int:
        return self.bits


@dataclass(frozen=True)
class SignMag(_Bits):
    """A sign bit (the top one) and a ``bits - 1``-bit magnitude (MX elements)."""


@dataclass(frozen=True)
class Int(_Bits):
    """A two's complement (``signed``) or unsigned integer of ``bits`` bits."""

    signed: bool = True


@dataclass(frozen=True)
class Float:
    """A small float of format ``fmt`` (:class:`lego_build.fulang.formats.FloatFormat`)."""

    fmt: FloatFormat

    @property
    def width(self) -> int:
        return self.fmt.bits


@dataclass(frozen=True)
class Vec:
    """A group of ``n`` elements of one type, packed element 0 in the low bits."""

    elem: Int | SignMag | Float
    n: int

    @property
    def width(self) -> int:
        return self.elem.width * self.n


@dataclass(frozen=True)
class Node:
    op: str  # in | sm | fmant | fexp | const | add | sub | neg | mul | shl | vshl
    args: tuple[int, ...]
    lo: int
    hi: int
    frac: int = 0  # the value is the integer / 2**frac
    # in: (port, offset, bits, signed); sm: (port, offset, bits); fmant/fexp: (port, offset, bits, format
    # name); const: (value,); shl: (k,); vshl (value << (amount - a0)): (a0,)
    attr: tuple = ()

    @property
    def bits(self) -> int:
        """Two's complement bits that hold every value in ``[lo, hi]``."""
        return max(1, max(self.hi.bit_length(), (-self.lo - 1).bit_length() if self.lo < 0 else 0) + 1)


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    index: dict[Node, int] = field(default_factory=dict)
    formats: dict[str, FloatFormat] = field(default_factory=dict)

    def add(self, node: Node) -> int:
        if node not in self.index:
            self.index[node] = len(self.nodes)
            self.nodes.append(node)
        return self.index[node]


def _unsupported(name: str):
    def refuse(self, *_):
        raise FUError(f"operator {name} is not supported; use {', '.join(OPERATORS)}")
    return refuse


class _Traced:
    """What no traced signal supports: each operator outside :data:`OPERATORS` is refused."""

    __truediv__ = __rtruediv__ = _unsupported("/")
    __floordiv__ = __rfloordiv__ = _unsupported("//")
    __mod__ = __rmod__ = _unsupported("%")
    __pow__ = __rpow__ = _unsupported("**")
    __rshift__ = _unsupported(">>")
    __and__ = __or__ = __xor__ = _unsupported("bitwise")
    __lt__ = __le__ = __gt__ = __ge__ = _unsupported("comparison")
    __abs__ = _unsupported("abs")

    def __bool__(self):
        raise FUError("a signal has no truth value at trace time; FUs have no data-dependent branches")


class Sig(_Traced):
    """A traced value: node ``i`` of ``g``."""

    def __init__(self, g: Graph, i: int) -> None:
        self.g, self.i = g, i

    @property
    def node(self) -> Node:
        return self.g.nodes[self.i]

    def _lift(self, other) -> Sig:
        if isinstance(other, FSig):
            return other.fixed()
        if isinstance(other, Sig):
            return other
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            v = int(other)
            return Sig(self.g, self.g.add(Node("const", (), v, v, 0, (v,))))
        raise FUError(f"cannot combine a signal with {type(other).__name__} {other!r}; use signals or integers")

    def _aligned(self, other: Sig, op: str, sign: int) -> Sig:
        a, b = self.node, other.node
        frac = max(a.frac, b.frac)
        sa, sb = 1 << (frac - a.frac), 1 << (frac - b.frac)
        alo, ahi, blo, bhi = a.lo * sa, a.hi * sa, b.lo * sb, b.hi * sb
        lo, hi = (alo + blo, ahi + bhi) if sign > 0 else (alo - bhi, ahi - blo)
        return Sig(self.g, self.g.add(Node(op, (self.i, other.i), lo, hi, frac)))

    def __add__(self, other) -> Sig:
        return self._aligned(self._lift(other), "add", 1)

    def __radd__(self, other) -> Sig:
        return self._lift(other)._aligned(self, "add", 1)

    def __sub__(self, other) -> Sig:
        return self._aligned(self._lift(other), "sub", -1)

    def __rsub__(self, other) -> Sig:
        return self._lift(other)._aligned(self, "sub", -1)

    def __neg__(self) -> Sig:
        n = self.node
        return Sig(self.g, self.g.add(Node("neg", (self.i,), -n.hi, -n.lo, n.frac)))

    def __mul__(self, other):
        if isinstance(other, FSig):
            return other * self
        other = self._lift(other)
        a, b = self.node, other.node
        corners = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return Sig(self.g, self.g.add(Node("mul", (self.i, other.i), min(corners), max(corners), a.frac + b.frac)))

    __rmul__ = __mul__

    def __lshift__(self, k) -> Sig:
        if not isinstance(k, int) or k < 0:
            raise FUError("<< takes a non-negative integer constant")
        n = self.node
        return Sig(self.g, self.g.add(Node("shl", (self.i,), n.lo << k, n.hi << k, n.frac, (k,))))


class VecSig(tuple):
    """A traced group: a tuple of element signals."""


class FSig(_Traced):
    """A traced float: ``mantissa * 2**exponent`` (two integer signals)."""

    def __init__(self, m: Sig, e: Sig) -> None:
        self.m, self.e = m, e

    def fixed(self) -> Sig:
        """The value in fixed point: the mantissa shifted left by ``exponent - min exponent``."""
        m, e = self.m.node, self.e.node
        span = e.hi - e.lo
        corners = (m.lo, m.lo << span, m.hi, m.hi << span)
        g = self.m.g
        return Sig(g, g.add(Node("vshl", (self.m.i, self.e.i), min(corners), max(corners), m.frac - e.lo, (e.lo,))))

    def __mul__(self, other):
        if isinstance(other, FSig):
            return FSig(self.m * other.m, self.e + other.e)
        return FSig(self.m * other, self.e)

    __rmul__ = __mul__

    def __add__(self, other):
        return self.fixed() + (other.fixed() if isinstance(other, FSig) else other)

    def __radd__(self, other):
        return (other.fixed() if isinstance(other, FSig) else other) + self.fixed()

    def __sub__(self, other):
        return self.fixed() - (other.fixed() if isinstance(other, FSig) else other)

    def __rsub__(self, other):
        return (other.fixed() if isinstance(other, FSig) else other) - self.fixed()

    def __neg__(self):
        return FSig(-self.m, self.e)

    def __lshift__(self, k):
        return FSig(self.m, self.e + k)


def _tree(terms: list[Sig]) -> Sig:
    """A balanced adder tree (pairs first, as a reduction tree extracts them)."""
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]


def dot(a: VecSig, b: VecSig) -> Sig:
    """``sum(a[i] * b[i])`` over two groups of one size."""
    if not isinstance(a, VecSig) or not isinstance(b, VecSig):
        raise FUError("dot takes two groups (Vec inputs)")
    if len(a) != len(b):
        raise FUError(f"dot of groups of {len(a)} and {len(b)} elements: group sizes must match")
    return _tree([x * y for x, y in zip(a, b)])


def total(v: VecSig) -> Sig:
    """The sum of a group's elements."""
    if not isinstance(v, VecSig):
        raise FUError("total takes a group (a Vec input)")
    return _tree(list(v))


def scale(x: Sig, e: Sig | int) -> FSig:
    """``x * 2**e`` with ``e`` a signal (a shared or micro exponent) or an integer."""
    if not isinstance(x, Sig):
        raise FUError("scale takes an integer signal and an exponent")
    return FSig(x, x._lift(e) if not isinstance(e, Sig) else e)


def _input(g: Graph, port: str, offset: int, t: Int | SignMag | Float) -> Sig:
    if isinstance(t, SignMag):
        top = (1 << (t.bits - 1)) - 1
        return Sig(g, g.add(Node("sm", (), -top, top, 0, (port, offset, t.bits))))
    if isinstance(t, Int):
        lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.signed else (0, (1 << t.bits) - 1)
        return Sig(g, g.add(Node("in", (), lo, hi, 0, (port, offset, t.bits, t.signed))))
    fmt = t.fmt
    g.formats[fmt.name] = fmt
    top = (1 << (fmt.man_bits + 1)) - 1
    e0 = fmt.bias + fmt.man_bits  # exponent = max(code's exponent field, 1) - bias - man_bits
    attr = (port, offset, fmt.bits, fmt.name)
    m = Sig(g, g.add(Node("fmant", (), -top, top, 0, attr)))
    e = Sig(g, g.add(Node("fexp", (), 1 - e0, (1 << fmt.exp_bits) - 1 - e0, 0, attr)))
    return FSig(m, e)


@dataclass(frozen=True)
class FU:
    """A user-defined FU, traced: its ports (name, type) in order, the graph, the output node
    and, for a float result, its exponent's node (``out_exp``; else -1)."""

    name: str
    ports: tuple[tuple[str, Int | Float | Vec], ...]
    graph: Graph
    out: int
    out_exp: int = -1

    @property
    def result(self) -> Node:
        return self.graph.nodes[self.out]

    @property
    def out_bits(self) -> int:
        return self.result.bits

    @property
    def exp_bits(self) -> int:
        return self.graph.nodes[self.out_exp].bits if self.out_exp >= 0 else 0

    @property
    def live(self) -> list[int]:
        """The nodes the outputs depend on, in graph order."""
        seen, stack = set(), [self.out] + ([self.out_exp] if self.out_exp >= 0 else [])
        while stack:
            i = stack.pop()
            if i not in seen:
                seen.add(i)
                stack.extend(self.graph.nodes[i].args)
        return sorted(seen)

    @property
    def adders(self) -> int:
        return sum(self.graph.nodes[i].op in ("add", "sub") for i in self.live)

    @property
    def multipliers(self) -> int:
        return sum(self.graph.nodes[i].op == "mul" for i in self.live)


def _check_type(name: str, port: str, t) -> None:
    if isinstance(t, Vec):
        if t.n < 1:
            raise FUError(f"FU {name}: input {port}: a group of {t.n} elements; give at least one")
        _check_type(name, port, t.elem)
    elif isinstance(t, SignMag):
        if t.bits < 2:
            raise FUError(f"FU {name}: input {port}: width {t.bits}; a sign and magnitude needs at least 2 bits")
    elif isinstance(t, Int):
        if t.bits < 1:
            raise FUError(f"FU {name}: input {port}: width {t.bits}; an integer needs at least 1 bit")
    elif isinstance(t, Float):
        if t.fmt.man_bits < 1:
            raise FUError(f"FU {name}: input {port}: float format {t.fmt.name} has no mantissa bit")
        if t.fmt.exp_bits < 1:
            raise FUError(f"FU {name}: input {port}: float format {t.fmt.name} has no exponent bit")
    else:
        raise FUError(f"FU {name}: input {port}: annotate it with Int(bits), SignMag(bits), Float(format) or "
                      "Vec(type, n)")


def trace(fn, name: str | None = None) -> FU:
    """Trace ``fn`` (parameters annotated with :class:`Int`, :class:`Float` or :class:`Vec`) into an FU."""
    name = name or fn.__name__
    g = Graph()
    ports, args = [], []
    hints = inspect.get_annotations(fn, eval_str=True)
    for p in inspect.signature(fn).parameters.values():
        t = hints.get(p.name)
        _check_type(name, p.name, t)
        ports.append((p.name, t))
        if isinstance(t, Vec):
            args.append(VecSig(_input(g, p.name, k * t.elem.width, t.elem) for k in range(t.n)))
        else:
            args.append(_input(g, p.name, 0, t))
    try:
        out = fn(*args)
    except FUError as e:
        raise FUError(f"FU {name}: {e}") from None
    if isinstance(out, FSig):
        return FU(name, tuple(ports), g, out.m.i, out.e.i)
    if not isinstance(out, Sig):
        raise FUError(f"FU {name}: returns {type(out).__name__}; an FU returns one signal")
    return FU(name, tuple(ports), g, out.i)


def evaluate(fu: FU, inputs: dict[str, np.ndarray]):
    """The NumPy reference: the output's integers (``value * 2**frac``) for ``inputs`` (per port,
    the codes: shape (N,) for a scalar, (N, n) for a group), as Python ints (no width limit); for
    a float result, the pair (mantissa, exponent)."""
    g = fu.graph
    vals: list = [None] * len(g.nodes)
    for i in fu.live:
        n = g.nodes[i]
        if n.op == "in":
            port, off, bits, signed = n.attr
            code = _codes(inputs, fu, port, off, bits)
            vals[i] = np.where(code >> (bits - 1), code - (1 << bits), code) if signed else code
        elif n.op == "sm":
            port, off, bits = n.attr
            code = _codes(inputs, fu, port, off, bits)
            mag = code & ((1 << (bits - 1)) - 1)
            vals[i] = np.where(code >> (bits - 1), -mag, mag)
        elif n.op in ("fmant", "fexp"):
            port, off, bits, name = n.attr
            fmt = g.formats[name]
            code = _codes(inputs, fu, port, off, bits)
            e = (code >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
            if n.op == "fexp":
                vals[i] = np.where(e == 0, 1, e) - (fmt.bias + fmt.man_bits)
            else:
                mag = (code & ((1 << fmt.man_bits) - 1)) + np.where(e == 0, 0, 1 << fmt.man_bits)
                vals[i] = np.where((code >> (fmt.bits - 1)) & 1, -mag, mag)
        elif n.op == "const":
            vals[i] = n.attr[0]
        elif n.op in ("add", "sub"):
            a, b = (g.nodes[j] for j in n.args)
            x = vals[n.args[0]] * (1 << (n.frac - a.frac))
            y = vals[n.args[1]] * (1 << (n.frac - b.frac))
            vals[i] = x + y if n.op == "add" else x - y
        elif n.op == "neg":
            vals[i] = -vals[n.args[0]]
        elif n.op == "mul":
            vals[i] = vals[n.args[0]] * vals[n.args[1]]
        elif n.op == "shl":
            vals[i] = vals[n.args[0]] * (1 << n.attr[0])
        elif n.op == "vshl":
            shift = np.asarray(vals[n.args[1]] - n.attr[0], dtype=object)
            power = np.vectorize(lambda k: 1 << int(k), otypes=[object])
            vals[i] = np.asarray(vals[n.args[0]], dtype=object) * power(shift)
    out = np.asarray(vals[fu.out], dtype=object)
    return (out, np.asarray(vals[fu.out_exp], dtype=object)) if fu.out_exp >= 0 else out


def _codes(inputs, fu: FU, port: str, off: int, bits: int) -> np.ndarray:
    t = dict(fu.ports)[port]
    x = np.asarray(inputs[port], dtype=np.int64)
    if isinstance(t, Vec):
        x = x[..., off // t.elem.width]
    return (x & ((1 << bits) - 1)).astype(object)
