"""The pin wrapper of an FPGA build (issue 45): a core's ports on five pins, so that it places
with its I/O and packs into a bitstream (nextpnr writes none for a design out of context).

``lego_fpga_wrap`` (:func:`wrapper`) keeps ``clk`` and ``rst`` on pins and reaches every other
port through registers: the inputs from a shift register fed by the pin ``sin`` and copied to
the core's inputs when ``load`` is high; the outputs registered every cycle, captured from
there when ``load`` is high and shifted out on ``sout`` otherwise. Every path into and out of
the core then starts and ends at a flip-flop, so the post-route Fmax is the core's own, not a
pin's. A measuring harness, as FPGA engineers time a core with more ports than the part has
pins; not a way to run the core.
"""
from __future__ import annotations

import re
from pathlib import Path

from veriloggen import Cat, If, Int, Module, Mux, Posedge, StubModule

from lego_build.emit.text import verilog_text

NAME = "lego_fpga_wrap"
_PORT = re.compile(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:\[(\d+)-1:0\]\s+)?(\w+)")


def ports(verilog: Path, module: str) -> list[tuple[str, str, int]]:
    """``(direction, name, width)`` of ``module``'s ports, as the emitter declares them (one per
    line, ``input [W-1:0] name``)."""
    text = verilog.read_text()
    start = text.index(f"module {module}")
    header = text[start:text.index(");", start)]
    return [(m.group(1), m.group(3), int(m.group(2) or 1)) for m in map(_PORT.match, header.splitlines()) if m]


def wrapper(verilog: Path, module: str) -> str:
    """The Verilog of :data:`NAME` around ``module`` (declared in ``verilog``)."""
    core = ports(verilog, module)
    ins = [(n, w) for d, n, w in core if d == "input" and n not in ("clk", "rst")]
    outs = [(n, w) for d, n, w in core if d == "output"]
    ni, no = sum(w for _, w in ins), sum(w for _, w in outs)
    m = Module(NAME)
    clk, rst, sin, load = m.Input("clk"), m.Input("rst"), m.Input("sin"), m.Input("load")
    sout = m.Output("sout")
    shift, held, captured = m.Reg("in_shift", ni), m.Reg("in_held", ni), m.Reg("out_shift", no)
    outputs = m.Reg("out_q", no)  # the core's outputs straight into flip-flops, then the shifter's select
    wires = {n: m.Wire(f"core_{n}", w) for n, w in (*ins, *outs)}
    m.Always(Posedge(clk))(
        shift(Cat(shift[0:ni - 1], sin) if ni > 1 else sin),
        If(load)(held(shift)),
        outputs(Cat(*[wires[n] for n, _ in outs])),
        captured(Mux(load, outputs, Cat(captured[0:no - 1], Int(0, 1, base=10)) if no > 1 else Int(0, 1, base=10))))
    low = 0
    for n, w in reversed(ins):  # the first input takes the high bits, as Cat orders them
        m.Assign(wires[n](held[low:low + w]))
        low += w
    m.Assign(sout(captured[no - 1]))
    m.Instance(StubModule(module), "u_core", ports=[("clk", clk), ("rst", rst)] + [(n, wires[n]) for _, n, _ in core
                                                                                 if n not in ("clk", "rst")])
    return verilog_text(m)
