"""Primitive generators: buffer bank, multiplier and accumulator (the MAC FU opened up), the
BitFusion-style 2-bit multiply-shift-add multiplier, FIFO.

Arithmetic is two's complement modulo the result width with explicit sign
extension, so no ``signed`` declarations are needed and Verilator's width lint
stays quiet.
"""
from __future__ import annotations

from functools import reduce
from math import ceil, log2
from operator import and_

from veriloggen import Cat, If, Int, Module, Mux, Posedge, Repeat, StubModule

from rtl_templates_free.arith import tree_product


def sign_extend(sig, from_bits: int, to_bits: int):
    """``{{(to-from){sig[msb]}}, sig}``."""
    if to_bits == from_bits:
        return sig
    return Cat(Repeat(sig[from_bits - 1], to_bits - from_bits), sig)


def _memory(name: str, width: int, depth: int, registered: bool, outreg: bool = False) -> Module:
    """A memory of ``depth`` words: one write port and one read port, registered (read
    latency 1) or asynchronous; ``outreg`` registers the read word once more (latency 2)."""
    aw = max(1, ceil(log2(depth)))
    m = Module(name)
    clk = m.Input("clk")
    we = m.Input("we")
    waddr = m.Input("waddr", aw)
    wdata = m.Input("wdata", width)
    raddr = m.Input("raddr", aw)
    rdata = (m.OutputReg if registered else m.Output)("rdata", width)
    mem = m.Reg("mem", width, depth)
    write = If(we)(mem[waddr](wdata))
    if outreg:
        q = m.Reg("q", width)
        m.Always(Posedge(clk))(q(mem[raddr]), rdata(q), write)
    elif registered:
        m.Always(Posedge(clk))(rdata(mem[raddr]), write)
    else:
        m.Assign(rdata(mem[raddr]))
        m.Always(Posedge(clk))(write)
    return m


def mk_bank(width: int, depth: int, outreg: bool = False) -> Module:
    """One SRAM bank: a write port and a synchronous read port (read latency 1), or with
    ``outreg`` a register on the read word (latency 2: an FPGA block RAM's slow clock-to-output
    then ends at a flip-flop, :mod:`lego_build.backend.passes.registered_reads`)."""
    suffix = "_o" if outreg else ""
    return _memory(f"lego_bank_w{width}_d{depth}{suffix}", width, depth, registered=True, outreg=outreg)


def mk_bank_rows(width: int, depth: int, rows: int, outreg: bool = False) -> Module:
    """A bank that takes up to ``rows`` consecutive words per write (a DMA beat of several
    bank rows) and reads one per cycle, latency 1: ``rows`` sub-banks interleaved by address
    (word ``a`` in sub-bank ``a mod rows``, at ``a div rows``; each sub-bank one write and one
    read port, as :func:`mk_bank`; ``outreg`` as there, each sub-bank's word registered before the
    select, latency 2). A write puts ``wdata`` slot ``j`` into sub-bank ``j`` where
    ``we`` bit ``j`` is set: at the row of ``waddr`` for ``j >= waddr mod rows``, the next
    row below it, so the words at ``waddr .. waddr + n - 1`` are one write."""
    assert rows > 1 and rows & (rows - 1) == 0 and depth % rows == 0, (rows, depth)
    lk = rows.bit_length() - 1
    aw = max(1, ceil(log2(depth)))
    sub = depth // rows
    sw = max(1, ceil(log2(sub)))
    m = Module(f"lego_bank_w{width}_d{depth}_r{rows}" + ("_o" if outreg else ""))
    clk = m.Input("clk")
    we = m.Input("we", rows)
    waddr = m.Input("waddr", aw)
    wdata = m.Input("wdata", width * rows)
    raddr = m.Input("raddr", aw)
    rdata = m.Output("rdata", width)
    sel = m.Reg("sel", lk)
    low, row = waddr[0:lk], (waddr[lk:aw] if aw > lk else Int(0, sw, base=10))
    outs = []
    for j in range(rows):
        mem = m.Reg(f"mem{j}", width, sub)
        q = m.Reg(f"q{j}", width)
        at = m.Wire(f"waddr{j}", sw)
        m.Assign(at(Mux(low > Int(j, lk, base=10), row + Int(1, sw, base=10), row) if j < rows - 1 else row))
        m.Always(Posedge(clk))(
            q(mem[raddr[lk:aw] if aw > lk else Int(0, sw, base=10)]),
            If(we[j])(mem[at](wdata[j * width:(j + 1) * width])),
        )
        if outreg:
            q2 = m.Reg(f"q{j}_o", width)
            m.Always(Posedge(clk))(q2(q))
            q = q2
        outs.append(q)
    m.Always(Posedge(clk))(sel(raddr[0:lk]))
    if outreg:
        sel_o = m.Reg("sel_o", lk)
        m.Always(Posedge(clk))(sel_o(sel))
        sel = sel_o
    out = outs[-1]
    for j in reversed(range(rows - 1)):
        out = Mux(sel == Int(j, lk, base=10), outs[j], out)
    m.Assign(rdata(out))
    return m


def mk_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
    """Registered signed multiplier ``p <= a * b`` (or ``a * b * c`` when ``c_bits``), latency 1;
    ``out_bits`` comes from range inference."""
    third = f"x{c_bits}" if c_bits else ""
    m = Module(f"lego_mul_{a_bits}x{b_bits}{third}_{out_bits}")
    clk = m.Input("clk")
    a = m.Input("a", a_bits)
    b = m.Input("b", b_bits)
    product = _product(m, a, a_bits, b, b_bits, out_bits)
    if c_bits:
        c = m.Input("c", c_bits)
        c_ext = m.Wire("c_ext", out_bits)
        m.Assign(c_ext(sign_extend(c, c_bits, out_bits)))
        product = product * c_ext
    p = m.OutputReg("p", out_bits)
    m.Always(Posedge(clk))(p(product))
    return m


def mk_bitfusion_mul(a_bits: int, b_bits: int, out_bits: int, c_bits: int = 0) -> Module:
    """BitFusion-style multiplier (Sharma et al., ISCA 2018): ``p <= a * b`` (or ``a * b * c``)
    modulo ``2**out_bits``, registered, latency 1, with the ports of :func:`mk_mul`.

    Each signed operand is split into 2-bit digits, ``a = sum_i a_i * 4**i``, where every
    digit is unsigned (0..3) except the top one, which is signed (-2..1). A *BitBrick*
    multiplies one digit of ``a`` by one digit of ``b``: both are widened to 3 bits (sign
    bit for a top digit, zero otherwise) and multiplied as signed 3-bit numbers into a
    6-bit product (only its bits that survive the shift modulo ``2**out_bits`` are built).
    The bricks' products, shifted left by ``2 * (i + j)``, are summed
    (``(a_bits / 2) * (b_bits / 2)`` bricks: 16 for int8). An odd width is sign-extended
    by one bit first. With ``c_bits`` the exact product ``a * b`` (``a_bits + b_bits``
    bits) is fused with ``c`` by a second brick array.
    """
    third = f"x{c_bits}" if c_bits else ""
    m = Module(f"lego_bfmul_{a_bits}x{b_bits}{third}_{out_bits}")
    clk = m.Input("clk")
    a = m.Input("a", a_bits)
    b = m.Input("b", b_bits)
    if c_bits:
        c = m.Input("c", c_bits)
        ab_bits = _even(a_bits) + _even(b_bits)
        ab = m.Wire("ab", ab_bits)
        m.Assign(ab(_bitbricks(m, "ab", a, a_bits, b, b_bits, ab_bits)))
        product = _bitbricks(m, "abc", ab, ab_bits, c, c_bits, out_bits)
    else:
        product = _bitbricks(m, "ab", a, a_bits, b, b_bits, out_bits)
    p = m.OutputReg("p", out_bits)
    m.Always(Posedge(clk))(p(product))
    return m


def _fit(sig, bits: int, to_bits: int):
    """``sig`` sign-extended or truncated to ``to_bits``."""
    return sign_extend(sig, bits, to_bits) if to_bits >= bits else sig[0:to_bits]


def _even(bits: int) -> int:
    return bits + bits % 2


def _digits(m: Module, prefix: str, x, bits: int) -> list:
    """The 2-bit digits of signed ``x`` as 3-bit BitBrick operands (``{sign, digit}``), low digit first."""
    if bits % 2:
        wide = m.Wire(f"{prefix}_ext", bits + 1)
        m.Assign(wide(sign_extend(x, bits, bits + 1)))
        x, bits = wide, bits + 1
    digits = []
    for i in range(bits // 2):
        top = i == bits // 2 - 1  # the only signed digit
        d = m.Wire(f"{prefix}{i}", 3)
        m.Assign(d(Cat(x[2 * i + 1] if top else Int(0, 1, base=2), x[2 * i:2 * i + 2])))
        digits.append(d)
    return digits


def _bitbricks(m: Module, prefix: str, x, x_bits: int, y, y_bits: int, out_bits: int):
    """``x * y`` modulo ``2**out_bits`` as the shifted sum of 3-bit x 3-bit BitBrick products."""
    xs = _digits(m, f"{prefix}_x", x, x_bits)
    ys = _digits(m, f"{prefix}_y", y, y_bits)
    total = None
    for i, xd in enumerate(xs):
        for j, yd in enumerate(ys):
            shift = 2 * (i + j)
            if shift >= out_bits:  # vanishes modulo 2**out_bits
                continue
            keep = out_bits - shift  # the product bits that survive the shift
            w = min(6, keep)  # signed 3 x 3 bits: a 6-bit product, or its low ``keep`` bits
            brick = m.Wire(f"{prefix}_bb{i}_{j}", w)
            m.Assign(brick(_fit(xd, 3, w) * _fit(yd, 3, w)))
            term = m.Wire(f"{prefix}_pp{i}_{j}", out_bits)
            high = _fit(brick, w, keep)
            m.Assign(term(Cat(high, Int(0, shift, base=10)) if shift else high))
            total = term if total is None else total + term
    return total


def _product(m: Module, a, a_bits: int, b, b_bits: int, out_bits: int):
    """``a * b`` of two signed operands, modulo ``2**out_bits`` (sign-extended wires ``a_ext``, ``b_ext``)."""
    a_ext = m.Wire("a_ext", out_bits)
    b_ext = m.Wire("b_ext", out_bits)
    m.Assign(a_ext(sign_extend(a, a_bits, out_bits)))
    m.Assign(b_ext(sign_extend(b, b_bits, out_bits)))
    return a_ext * b_ext


def mk_acc(in_bits: int, acc_bits: int) -> Module:
    """Accumulator ``y <= first ? p : y + p`` (latency 1), ``p`` sign-extended to ``acc_bits``."""
    m = Module(f"lego_acc_{in_bits}_{acc_bits}")
    clk = m.Input("clk")
    first = m.Input("first")
    p = m.Input("p", in_bits)
    y = m.OutputReg("y", acc_bits)
    p_ext = m.Wire("p_ext", acc_bits)
    m.Assign(p_ext(sign_extend(p, in_bits, acc_bits)))
    m.Always(Posedge(clk))(y(Mux(first, p_ext, y + p_ext)))
    return m


def mk_acc_select(in_bits: int, chain_bits: int, acc_bits: int) -> Module:
    """Accumulator with a partial-sum chain input (latency 1, :mod:`lego_build.backend.passes.acc_fusion`):
    ``y <= p + (chain ? c : first ? 0 : y)``, ``p`` and ``c`` sign-extended to ``acc_bits``."""
    m = Module(f"lego_acc_sel_{in_bits}_{chain_bits}_{acc_bits}")
    clk = m.Input("clk")
    first, chain = m.Input("first"), m.Input("chain")
    p, c = m.Input("p", in_bits), m.Input("c", chain_bits)
    y = m.OutputReg("y", acc_bits)
    p_ext, c_ext = m.Wire("p_ext", acc_bits), m.Wire("c_ext", acc_bits)
    m.Assign(p_ext(sign_extend(p, in_bits, acc_bits)))
    m.Assign(c_ext(sign_extend(c, chain_bits, acc_bits)))
    m.Always(Posedge(clk))(y(p_ext + Mux(chain, c_ext, Mux(first, Int(0, acc_bits, base=10), y))))
    return m


def mk_acc_sum(in_bits: tuple[int, ...], acc_bits: int) -> Module:
    """Accumulator of a spatial sum (latency 1, :mod:`lego_build.backend.passes.acc_fusion`):
    ``y <= i0 + i1 + ... + (first ? 0 : y)``, each input sign-extended to ``acc_bits``."""
    m = Module(f"lego_acc_sum_{'_'.join(str(b) for b in in_bits)}_{acc_bits}")
    clk = m.Input("clk")
    first = m.Input("first")
    y = m.OutputReg("y", acc_bits)
    total = _input_sum(m, in_bits, acc_bits)
    m.Always(Posedge(clk))(y(total + Mux(first, Int(0, acc_bits, base=10), y)))
    return m


def _input_sum(m: Module, in_bits: tuple[int, ...], out_bits: int):
    """``i0 + i1 + ...`` of inputs ``i<k>`` of ``in_bits``, each sign-extended (or cut) to ``out_bits``."""
    total = None
    for i, bits in enumerate(in_bits):
        port = m.Input(f"i{i}", bits)
        ext = m.Wire(f"i{i}_ext", out_bits)
        m.Assign(ext(sign_extend(port, bits, out_bits) if bits < out_bits else port[0:out_bits]))
        total = ext if total is None else total + ext
    return total


def mk_add(in_bits: tuple[int, ...], out_bits: int) -> Module:
    """Registered adder ``s <= i0 + i1 + ...`` (latency 1): a node of a spatial reduction."""
    m = Module(f"lego_add_{'_'.join(str(b) for b in in_bits)}_{out_bits}")
    clk = m.Input("clk")
    total = _input_sum(m, in_bits, out_bits)
    s = m.OutputReg("s", out_bits)
    m.Always(Posedge(clk))(s(total))
    return m


def mk_rmw(bits: int) -> Module:
    """A folded output bank's read-modify-write sum, combinational: ``wdata = acc ? rd[half] +
    addend : addend``. A module of its own so that ABC maps the adder for delay on its own (inside
    ``lego_top`` of a 16 x 16 multi-dataflow array it was left rippling: 56 logic levels, 6.9 ns,
    lego_mnicoc's worst path)."""
    m = Module(f"lego_rmw_w{bits}")
    acc, half = m.Input("acc"), m.Input("half")
    rd0, rd1, addend = m.Input("rd0", bits), m.Input("rd1", bits), m.Input("addend", bits)
    wdata = m.Output("wdata", bits)
    m.Assign(wdata(Mux(acc, Mux(half, rd1, rd0) + addend, addend)))
    return m


def mk_rmw_pipe(bits: int, addr_bits: int) -> Module:
    """An output bank's read-modify-write over two halves in five cycles, for FPGA block RAM
    (:mod:`lego_build.backend.passes.pipelined_rmw`): a request (``we``, ``addr``, ``data``) reads
    the bank in its cycle A; in B both halves' read words are registered (each block RAM's output
    straight into a flip-flop, issue 45) with the half it writes (``half``, with ``acc``, both
    given in B); in C the old word is chosen and registered; in D ``sum = old + data`` is
    registered; in W the sum (``wdata``) goes to ``w_addr`` of the half it writes, where
    ``w_we<half>``. Every write port is driven by flip-flops alone (no gate between them and block
    RAMs far across an FPGA), and neither the bank's slow clock-to-output nor the choice of the old
    word meets the adder's carry chain (on the GW1NR-9 the choice and the adder in one cycle were
    the default 4x4's worst path, 100.8 MHz).

    A request reads before the four requests ahead of it have written (a read that meets a write
    of its address returns the old word, or on an FPGA block RAM an undefined one), so it takes
    their sums instead where they wrote its address and half, the latest write's first: the one
    just ahead (``k = 1``) in D, from ``wdata`` where that request's sum has just been registered
    (D is a 2:1 choice and the adder: an accumulation into one address every cycle runs through
    it); ``k = 2`` in C, from ``wdata``; ``k = 3, 4`` from ``fwd_c``, registered in B from
    ``wdata`` or ``sum_e``. The addresses are compared in A, two bits per LUT (``addr`` against
    those of the requests then in B, C, D and W, registered, ANDed in B), the enables and halves in B, where the old
    word's choice becomes three binary selects and a clear (no ``acc``): in C a 2:1 choice per
    pair, one behind them, and the clear as ``old_d``'s synchronous reset (on the GW1NR-9 an
    AND-OR of five words under one-hot selects was the default 4x4's worst path, 141.6 MHz)."""
    m = Module(f"lego_rmw_pipe_w{bits}_a{addr_bits}")
    clk = m.Input("clk")
    we, addr, data = m.Input("we"), m.Input("addr", addr_bits), m.Input("data", bits)
    half, acc = m.Input("half"), m.Input("acc")
    rd0, rd1 = m.Input("rd0", bits), m.Input("rd1", bits)
    w_we0, w_we1, w_addr = m.OutputReg("w_we0"), m.OutputReg("w_we1"), m.OutputReg("w_addr", addr_bits)
    wdata = m.OutputReg("wdata", bits)
    # the request in B, C, D; W's write (w_*, with w_we and w_half); E: what W wrote last
    we_b, addr_b, data_b = m.Reg("we_b"), m.Reg("addr_b", addr_bits), m.Reg("data_b", bits)
    we_c, addr_c, half_c, data_c = m.Reg("we_c"), m.Reg("addr_c", addr_bits), m.Reg("half_c"), m.Reg("data_c", bits)
    word0_c, word1_c = m.Reg("word0_c", bits), m.Reg("word1_c", bits)
    we_d, addr_d, half_d, data_d = m.Reg("we_d"), m.Reg("addr_d", addr_bits), m.Reg("half_d"), m.Reg("data_d", bits)
    old_d, near_d = m.Reg("old_d", bits), m.Reg("near_d")
    w_we, w_half = m.Reg("w_we"), m.Reg("w_half")
    we_e, half_e, sum_e = m.Reg("we_e"), m.Reg("half_e"), m.Reg("sum_e", bits)
    # B: the request k ahead has this address (k = 1..4), compared in A two bits at a time (a LUT
    # each, registered; ANDed in B)
    pairs = [(lo, min(lo + 2, addr_bits)) for lo in range(0, addr_bits, 2)]
    same = [[m.Reg(f"same_{k}_{j}") for j in range(len(pairs))] for k in range(1, 5)]
    ahead = [(we_c, half_c), (we_d, half_d), (w_we, w_half), (we_e, half_e)]  # the requests 1..4 ahead in B
    h1, h2, h3, h4 = [reduce(and_, s_k) & w_k & (h_k == half) for s_k, (w_k, h_k) in zip(same, ahead)]
    # C: the sum of the request 3 or 4 ahead (then in wdata and sum_e), and the old word's choice as
    # binary selects (each LUT a 2:1 choice, one more multiplexer behind them) and a clear (no acc)
    fwd_c, near_c = m.Reg("fwd_c", bits), m.Reg("near_c")
    sel_word, sel_fwd, sel_half, clear = m.Reg("sel_word_c"), m.Reg("sel_fwd_c"), m.Reg("sel_half_c"), m.Reg("clear_c")
    old = m.Wire("old", bits)
    m.Assign(old(Mux(sel_word, Mux(sel_half, word1_c, word0_c), Mux(sel_fwd, fwd_c, wdata))))
    m.Always(Posedge(clk))(
        we_b(we), addr_b(addr), data_b(data),
        *[s(addr[lo:hi] == a_k[lo:hi]) for s_k, a_k in zip(same, (addr_b, addr_c, addr_d, w_addr))
          for s, (lo, hi) in zip(s_k, pairs)],
        we_c(we_b), addr_c(addr_b), half_c(half), data_c(data_b), word0_c(rd0), word1_c(rd1),
        near_c(acc & h1), fwd_c(Mux(h3, wdata, sum_e)), sel_word(~(h2 | h3 | h4)), sel_fwd(~h2), sel_half(half),
        clear(~acc),
        we_d(we_c), addr_d(addr_c), half_d(half_c), data_d(data_c), near_d(near_c),
        If(clear)(old_d(Int(0, bits, base=10))).Else(old_d(old)),
        w_we(we_d), w_addr(addr_d), w_half(half_d), w_we0(we_d & ~half_d), w_we1(we_d & half_d),
        wdata(Mux(near_d, wdata, old_d) + data_d),
        we_e(w_we), half_e(w_half), sum_e(wdata),
    )
    return m


MAC_LATENCY = 2  # mk_mac: product, then accumulate


def mk_mac(a_bits: int, b_bits: int, acc_bits: int) -> Module:
    """Fused multiply-accumulate for FPGA DSP slices (latency 2): ``p <= a*b``, then
    ``y <= first ? p : y + p`` with ``first`` delayed one cycle to meet ``p``."""
    p_bits = a_bits + b_bits
    m = Module(f"lego_mac_{a_bits}x{b_bits}_{acc_bits}")
    clk = m.Input("clk")
    first = m.Input("first")
    a = m.Input("a", a_bits)
    b = m.Input("b", b_bits)
    y = m.OutputReg("y", acc_bits)
    product = _product(m, a, a_bits, b, b_bits, p_bits)
    p = m.Reg("p", p_bits)
    first_d = m.Reg("first_d")
    p_ext = m.Wire("p_ext", acc_bits)
    m.Assign(p_ext(sign_extend(p, p_bits, acc_bits)))
    m.Always(Posedge(clk))(p(product), first_d(first), y(Mux(first_d, p_ext, y + p_ext)))
    return m


def mk_fifo(width: int, capacity: int, depth_bits: int) -> Module:
    """Programmable-depth FIFO of a delay link (seed 004 §2, "delay interconnections"):
    ``q`` is ``d`` delayed by ``depth`` cycles (1 <= depth <= capacity, a run-time
    register), a shift register of ``capacity`` words with a tap multiplexer. A
    one-word FIFO has no ``depth`` port."""
    m = Module(f"lego_fifo_w{width}_c{capacity}" + (f"_d{depth_bits}" if capacity > 1 else ""))
    clk = m.Input("clk")
    depth = m.Input("depth", depth_bits) if capacity > 1 else None
    d = m.Input("d", width)
    q = m.Output("q", width)
    regs = [m.Reg(f"s{i}", width) for i in range(capacity)]
    m.Always(Posedge(clk))(*[r(prev) for r, prev in zip(regs, [d] + regs[:-1])])
    tap = regs[-1]
    for i in reversed(range(capacity - 1)):
        tap = Mux(depth == Int(i + 1, depth_bits, base=10), regs[i], tap)
    m.Assign(q(tap))
    return m


#: PPU ``mode`` bits
PPU_REQUANT, PPU_RELU, PPU_LUT = 1, 2, 4


def _requant_relu(m: Module, x, width: int, mode, scale, shift):
    """``mode`` bits 0 and 1 of the PPU on ``x``: the wire ``v`` (``width`` bits)."""
    pw = width + 16
    prod = m.Wire("prod", pw)
    m.Assign(prod(_product(m, x, width, scale, 16, pw)))
    half = m.Wire("half", pw)
    m.Assign(half((Int(1, pw, base=10) << shift) >> Int(1, pw, base=10)))
    rounded = m.Wire("rounded", pw)
    m.Assign(rounded(prod + half))
    ones = Int(2 ** pw - 1, pw, base=16)
    shifted = m.Wire("shifted", pw)
    # a shift of pw or more leaves 0: (v + 2^(shift-1)) >> shift with |v| < 2^(pw-1) (the half no longer fits)
    kept = (rounded >> shift) | Mux(rounded[pw - 1], ~(ones >> shift), Int(0, pw, base=10))
    m.Assign(shifted(Mux(shift >= Int(pw, 6, base=10), Int(0, pw, base=10), kept) if pw < 64 else kept))
    upper = m.Wire("upper", pw - 7)
    m.Assign(upper(shifted[7:pw]))
    q8 = m.Wire("q8", 8)
    fits = (upper == Int(0, pw - 7, base=10)) | (upper == Int(2 ** (pw - 7) - 1, pw - 7, base=16))
    m.Assign(q8(Mux(fits, shifted[0:8], Mux(shifted[pw - 1], Int(0x80, 8, base=16), Int(0x7F, 8, base=16)))))
    r = m.Wire("r", width)
    m.Assign(r(Mux(mode[0], sign_extend(q8, 8, width), x)))
    v = m.Wire("v", width)
    m.Assign(v(Mux(mode[1] & r[width - 1], Int(0, width, base=10), r)))
    return v


#: register stages of :func:`mk_ppu_lane_pipe`: partial products, their sum rounded, shifted, saturated
PPU_LANE_STAGES = 4
#: a memory system's PPU on its write path: the lane's stages and two registers behind the activation
#: table's read (issue 45: on an FPGA the table is a block RAM; Yosys merges the first register into
#: its read port, whose data then comes 5.8 ns after the clock on an LFE5U-85F, and the second keeps
#: that off the next path)
PPU_STAGES = PPU_LANE_STAGES + 2


def _dsp_product(m: Module, name: str, a, a_bits: int, a_signed: bool, b, b_bits: int, b_signed: bool,
                 width: int):
    """:func:`rtl_templates_free.arith.tree_product`'s ``a * b`` modulo ``2**width`` as one signed
    multiply (an unsigned operand gains a zero sign bit), for the tools to map onto a DSP block."""
    ops = []
    for k, (sig, bits, signed) in enumerate(((a, a_bits, a_signed), (b, b_bits, b_signed))):
        op = m.Wire(f"{name}_{'ab'[k]}", bits + (not signed), signed=True)
        m.Assign(op(sig[0:bits] if signed else Cat(Int(0, 1, base=10), sig[0:bits])))
        ops.append(op)
    full = a_bits + (not a_signed) + b_bits + (not b_signed)
    prod = m.Wire(name, full, signed=True)
    m.Assign(prod(ops[0] * ops[1]))
    return prod[0:width] if width < full else sign_extend(prod, full, width)


def mk_ppu_lane_pipe(width: int, dsp: bool = False) -> Module:
    """The PPU's requantisation and ReLU (``mode`` bits 0 and 1 of :func:`mk_ppu`, without its
    table: the caller's) in :data:`PPU_LANE_STAGES` register stages, each loaded when ``en``
    (the memory system's write path, issue 44): (1) ``x`` times ``scale`` as two partial
    products, ``x``'s low 16 bits (unsigned) and its high bits (signed), each a multiplier of
    at most 16 x 16 bits; (2) their sum, ``hi << 16`` plus ``lo``, with the rounding half,
    which is ``x * scale + half`` exactly (``x = hi * 2^16 + lo``); (3) the arithmetic shift;
    (4) saturation and ReLU (issue 45: shift and saturation in one stage were the next critical path
    of the default ``lego_soc`` on an LFE5U-85F, 65 MHz). ``y`` is what :func:`mk_ppu`'s
    requantisation and ReLU make of the ``x`` four loads before.

    ``dsp`` (an FPGA's array, :mod:`lego_build.backend.passes.mac_fusion`): each partial product is
    one signed Verilog multiply of at most 17 x 16 bits, which Yosys maps onto a DSP block (an
    ECP5 MULT18X18D, a Gowin MULT18X18) instead of the carry-save trees that a standard-cell flow
    maps well and an FPGA's LUTs do not (issue 45: the trees were the default ``lego_soc``'s
    critical path on an LFE5U-85F, 63.5 MHz)."""
    m = Module(f"lego_ppu_lane_w{width}_p{PPU_LANE_STAGES}" + ("_dsp" if dsp else ""))
    clk, en = m.Input("clk"), m.Input("en")
    x = m.Input("x", width)
    mode = m.Input("mode", 2)
    scale = m.Input("scale", 16)
    shift = m.Input("shift", 6)
    y = m.OutputReg("y", width)
    pw = width + 16
    lo_bits = min(16, width)
    hi_bits = width - lo_bits
    x1, mode1, shift1 = m.Reg("x1", width), m.Reg("mode1", 2), m.Reg("shift1", 6)
    lo_w = min(lo_bits + 17, pw)  # the low part times the scale: a narrow x's whole product fits in pw bits
    lo = m.Reg("lo", lo_w)
    lo_ext = m.Wire("lo_ext", lo_w)
    # the low part is unsigned when high bits follow it, else it is the whole (signed) x
    # the partial products as carry-save trees (rtl_templates_free.arith, issue 44: Yosys's array
    # multiplier was this stage's 4.9 ns)
    product = _dsp_product if dsp else tree_product
    m.Assign(lo_ext(product(m, "lo_p", x, lo_bits, not hi_bits, scale, 16, True, lo_w)))
    regs1 = [x1(x), mode1(mode), shift1(shift), lo(lo_ext)]
    if hi_bits:
        hi = m.Reg("hi", hi_bits + 16)
        x_hi = m.Wire("x_hi", hi_bits)
        m.Assign(x_hi(x[lo_bits:width]))
        regs1.append(hi(product(m, "hi_p", x_hi, hi_bits, True, scale, 16, True, hi_bits + 16)))
    x2, mode2, shift2 = m.Reg("x2", width), m.Reg("mode2", 2), m.Reg("shift2", 6)
    gone = m.Reg("gone")  # a shift of pw or more leaves 0 (the rounding half no longer fits in pw bits)
    rounded = m.Reg("rounded", pw)
    half = m.Wire("half", pw)
    m.Assign(half((Int(1, pw, base=10) << shift1) >> Int(1, pw, base=10)))
    total = sign_extend(lo, lo_w, pw) + half
    if hi_bits:
        total = total + Cat(sign_extend(hi, hi_bits + 16, pw - 16), Int(0, 16, base=10))
    ones = Int(2 ** pw - 1, pw, base=16)
    x3, mode3, shifted = m.Reg("x3", width), m.Reg("mode3", 2), m.Reg("shifted", pw)
    arith = Mux(gone, Int(0, pw, base=10),
                (rounded >> shift2) | Mux(rounded[pw - 1], ~(ones >> shift2), Int(0, pw, base=10)))
    upper = m.Wire("upper", pw - 7)
    m.Assign(upper(shifted[7:pw]))
    fits = (upper == Int(0, pw - 7, base=10)) | (upper == Int(2 ** (pw - 7) - 1, pw - 7, base=16))
    q8 = m.Wire("q8", 8)
    m.Assign(q8(Mux(fits, shifted[0:8], Mux(shifted[pw - 1], Int(0x80, 8, base=16), Int(0x7F, 8, base=16)))))
    r = m.Wire("r", width)
    m.Assign(r(Mux(mode3[0], sign_extend(q8, 8, width), x3)))
    big = shift1 >= Int(pw, 6, base=10) if pw < 64 else Int(0, 1, base=10)
    m.Always(Posedge(clk))(If(en)(
        *regs1, x2(x1), mode2(mode1), shift2(shift1), gone(big), rounded(total),
        x3(x2), mode3(mode2), shifted(arith),
        y(Mux(mode3[1] & r[width - 1], Int(0, width, base=10), r))))
    return m


def mk_table(width: int, depth: int) -> Module:
    """A small lookup table: one write port and an asynchronous read port, as a standard-cell
    flow builds a table this size, a register-file macro rather than ``width x depth``
    flip-flops and a ``depth``-way multiplexer (the asic flow black-boxes and prices it)."""
    return _memory(f"lego_table_w{width}_d{depth}", width, depth, registered=False)


#: the PPU's activation table (:func:`mk_table`): 256 int8 entries
PPU_TABLE = (8, 256)


def mk_ppu(width: int) -> Module:
    """Post-processing unit on the output path (seed 004 §2), configured per layer.

    ``mode`` bit 0 requantises to int8, ``clamp((x * scale + 2**(shift-1)) >> shift, -128, 127)``
    (arithmetic shift, rounding half up; ``scale`` signed 16-bit, ``shift`` 0..63); bit 1
    applies ReLU; bit 2 maps the int8 value through a 256-entry table (``lut[v & 255]``,
    e.g. GELU or sigmoid; a :func:`mk_table` instance, which the caller emits too) written
    through ``lut_we``. Mode 0 passes ``x`` through.
    ``y`` is registered: one cycle of latency.
    """
    m = Module(f"lego_ppu_w{width}")
    clk = m.Input("clk")
    x = m.Input("x", width)
    mode = m.Input("mode", 3)
    scale = m.Input("scale", 16)
    shift = m.Input("shift", 6)
    lut_we = m.Input("lut_we")
    lut_addr = m.Input("lut_addr", 8)
    lut_data = m.Input("lut_data", 8)
    y = m.OutputReg("y", width)
    v = _requant_relu(m, x, width, mode, scale, shift)
    looked = m.Wire("looked", 8)
    m.Instance(StubModule(mk_table(*PPU_TABLE).name), "u_lut", ports=[
        ("clk", clk), ("we", lut_we), ("waddr", lut_addr), ("wdata", lut_data), ("raddr", v[0:8]), ("rdata", looked)])
    m.Always(Posedge(clk))(y(Mux(mode[2], sign_extend(looked, 8, width), v)))
    return m
