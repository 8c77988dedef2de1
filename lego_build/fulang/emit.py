"""Verilog of a traced FU (:mod:`lego_build.fulang.expr`), with Veriloggen.

Module ``lego_fu_<name>``: an input port per FU parameter (a group packed element 0 lowest), a
registered output ``y`` (latency 1) holding the result's fixed-point integer in ``out_bits``. One
wire per graph node, as wide as its range: every operand is sign-extended (or cut) to the
node's width and the arithmetic runs modulo ``2**width``, which is exact because the width
holds the result's whole range; no ``signed`` declarations are needed.
"""
from __future__ import annotations

from veriloggen import Cat, Int, Module, Mux, Posedge

from lego_build.fulang.expr import FU
from rtl_templates_free.primitives import sign_extend


def _fit(sig, have: int, want: int, lost: list | None = None):
    """``sig`` (two's complement, ``have`` bits) as ``want`` bits: sign-extended, or its low bits
    (the others recorded in ``lost``: the arithmetic is modulo ``2**want``, they cannot matter)."""
    if want >= have:
        return sign_extend(sig, have, want)
    if lost is not None:
        lost.append(sig[want:have])
    return sig[0:want]


def _shifted(sig, have: int, shift: int, want: int, lost: list | None = None):
    """``sig << shift`` as ``want`` bits."""
    if shift == 0:
        return _fit(sig, have, want, lost)
    if shift >= want:
        if lost is not None:
            lost.append(sig)
        return Int(0, want, base=10)
    return Cat(_fit(sig, have, want - shift, lost), Int(0, shift, base=10))


def _fields(m: Module, name: str, code, fmt):
    """A float code's exponent field and its ``e != 0`` (the hidden bit), as wires."""
    e = m.Wire(f"{name}_e", fmt.exp_bits)
    m.Assign(e(code[fmt.man_bits:fmt.man_bits + fmt.exp_bits]))
    hidden = m.Wire(f"{name}_h")
    m.Assign(hidden(e != Int(0, fmt.exp_bits, base=10)))
    return e, hidden


def _bits(x) -> int:
    """Bits of a wire or of a slice of one."""
    return x.get_width() if hasattr(x, "get_width") else int(x.width)


def mk_fu(fu: FU) -> Module:
    m = Module(f"lego_fu_{fu.name}")
    clk = m.Input("clk")
    ports = {name: m.Input(name, t.width) for name, t in fu.ports}
    lost: list = []
    wires = _body(m, fu, ports, lost)
    _sink(m, lost)
    y = m.OutputReg("y", fu.out_bits)
    m.Always(Posedge(clk))(y(wires[fu.out]))
    if fu.out_exp >= 0:  # a float result: its exponent beside the mantissa
        ye = m.OutputReg("ye", fu.exp_bits)
        m.Always(Posedge(clk))(ye(wires[fu.out_exp]))
    return m


def _sink(m: Module, lost: list) -> None:
    """Bits no output depends on (modulo arithmetic) into one wire Verilator's lint ignores (``*unused*``)."""
    if lost:
        sink = m.Wire("unused_bits", sum(_bits(x) for x in lost))
        m.Assign(sink(Cat(*lost)))


def _body(m: Module, fu: FU, ports: dict, lost: list) -> dict:
    """One wire per live graph node of ``fu`` in ``m``, from the parameters' signals ``ports``."""
    g = fu.graph
    codes: dict = {}  # (port, offset) -> the float code's wire

    def code(port, off, bits):
        if (port, off) not in codes:
            codes[(port, off)] = m.Wire(f"c_{port}_{off // bits}", bits)
            m.Assign(codes[(port, off)](ports[port][off:off + bits]))
        return codes[(port, off)]
    wires: dict = {}
    for i in fu.live:
        n = g.nodes[i]
        w = wires[i] = m.Wire(f"n{i}", n.bits)  # noqa: F841 (assigned below)
        if n.op == "in":
            port, off, bits, signed = n.attr
            raw = ports[port][off:off + bits]
            m.Assign(w(_fit(raw, bits, n.bits) if signed else Cat(Int(0, n.bits - bits, base=10), raw)))
        elif n.op == "sm":  # sign and magnitude
            port, off, bits = n.attr
            c = code(port, off, bits)
            mag = _fit(Cat(Int(0, 1), c[0:bits - 1]), bits, n.bits)
            m.Assign(w(Mux(c[bits - 1], Int(0, n.bits, base=10) - mag, mag)))
        elif n.op in ("fmant", "fexp"):  # mantissa with the hidden bit, signed; or max(e, 1) - bias - man
            port, off, bits, name = n.attr
            fmt = g.formats[name]
            c = code(port, off, bits)
            e, hidden = _fields(m, f"n{i}", c, fmt)
            if n.op == "fmant":
                mag = _fit(Cat(Int(0, 1), hidden, c[0:fmt.man_bits]), fmt.man_bits + 2, n.bits)
                m.Assign(w(Mux(c[bits - 1], Int(0, n.bits, base=10) - mag, mag)))
            else:
                wide = max(n.bits, fmt.exp_bits + 1)
                t = m.Wire(f"n{i}_x", wide)
                m.Assign(t(Cat(Int(0, wide - fmt.exp_bits, base=10), Mux(hidden, e, Int(1, fmt.exp_bits, base=10)))
                           - Int((fmt.bias + fmt.man_bits) % (1 << wide), wide, base=10)))
                m.Assign(w(t[0:n.bits]))
                if wide > n.bits:
                    lost.append(t[n.bits:wide])
        elif n.op == "vshl":  # value << (amount - a0): a barrel shifter
            a, k = (g.nodes[j] for j in n.args)
            span = k.hi - k.lo
            sb = max(1, span.bit_length())
            sh = m.Wire(f"n{i}_sh", sb)
            low = _fit(wires[n.args[1]], k.bits, sb, lost)
            m.Assign(sh(low - Int(n.attr[0] & ((1 << sb) - 1), sb, base=10)))
            m.Assign(w(_fit(wires[n.args[0]], a.bits, n.bits, lost) << sh))
        elif n.op == "const":
            m.Assign(w(Int(n.attr[0] & ((1 << n.bits) - 1), n.bits, base=10)))
        elif n.op in ("add", "sub"):
            a, b = (g.nodes[j] for j in n.args)
            x = _shifted(wires[n.args[0]], a.bits, n.frac - a.frac, n.bits, lost)
            y = _shifted(wires[n.args[1]], b.bits, n.frac - b.frac, n.bits, lost)
            m.Assign(w(x + y if n.op == "add" else x - y))
        elif n.op == "neg":
            m.Assign(w(Int(0, n.bits, base=10) - _fit(wires[n.args[0]], g.nodes[n.args[0]].bits, n.bits, lost)))
        elif n.op == "mul":
            a, b = (g.nodes[j] for j in n.args)
            m.Assign(w(_fit(wires[n.args[0]], a.bits, n.bits, lost) * _fit(wires[n.args[1]], b.bits, n.bits, lost)))
        elif n.op == "shl":
            a = g.nodes[n.args[0]]
            m.Assign(w(_shifted(wires[n.args[0]], a.bits, n.attr[0], n.bits, lost)))
    return wires


def mk_array_fu(fu: FU, in_bits: tuple[int, ...], out_bits: int) -> Module:
    """``fu`` as an array FU (the multiplier interface of :class:`lego_build.fulang.kinds.FU`):
    ports ``clk``, ``a``, ``b`` (``c``) of ``in_bits`` and a registered ``p`` (``out_bits``,
    latency 1): each operand's low bits feed the FU's parameter in order, the result is
    sign-extended (or cut: the accumulator is modulo ``2**out_bits``) to ``p``."""
    m = Module(f"lego_fu_{fu.name}_{'x'.join(map(str, in_bits))}_p{out_bits}")
    clk = m.Input("clk")
    ins = [m.Input(p, w) for p, w in zip("abc", in_bits)]
    lost = [x[t.width:have] for x, (_, t), have in zip(ins, fu.ports, in_bits) if t.width < have]
    wires = _body(m, fu, {name: x for x, (name, _) in zip(ins, fu.ports)}, lost)
    p = m.OutputReg("p", out_bits)
    m.Always(Posedge(clk))(p(_fit(wires[fu.out], fu.out_bits, out_bits, lost)))
    _sink(m, lost)
    return m
