"""A user-defined FU's Verilog against its NumPy reference, under Verilator, vector by vector.

The FU (:func:`lego_build.fulang.emit.mk_fu`) sits in ``tb_fu``, whose one input ``din`` packs
every port (in the FU's parameter order, the first lowest) and whose output ``dout`` is ``y``;
both are at least 65 bits, so the C++ side moves 32-bit words whatever the widths. The host
writes one hex line per vector and reads one back; :func:`check` compares every output with
:func:`lego_build.fulang.expr.evaluate`. It stays in :mod:`lego_build.sim` rather than
:mod:`lego_build.targets`: it checks one FU's module by simulation (the FU language's tests
and benchmarks call it), it is not something the simulate stage does with a design's RTL.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
from veriloggen import Cat, Int, Module, StubModule

from lego_build.emit.text import verilog_text
from lego_build.errors import StageError
from lego_build.fulang.emit import mk_fu
from lego_build.fulang.expr import FU, Vec, evaluate
from lego_build.sim import objcache
from lego_build.sim.verilator import require_verilator

MAIN = r"""
#include <cstdio>
#include <cstring>
#include <cstdint>
#include "Vtb_fu.h"
#include "verilated.h"

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    Vtb_fu* top = new Vtb_fu;
    static char line[1 << 16];
    const int in_words = @IN_WORDS@, out_words = @OUT_WORDS@;
    while (fgets(line, sizeof line, stdin)) {
        int n = (int)strcspn(line, "\r\n");
        for (int k = 0; k < in_words; ++k) {  // word k: hex digits n-8(k+1) .. n-8k
            uint32_t v = 0;
            for (int i = n - 8 * (k + 1); i < n - 8 * k; ++i) {
                if (i < 0) continue;
                char c = line[i];
                v = (v << 4) | (uint32_t)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
            }
            top->din[k] = v;
        }
        top->clk = 0; top->eval(); top->clk = 1; top->eval();
        for (int k = out_words - 1; k >= 0; --k) printf("%08x", (unsigned)top->dout[k]);
        printf("\n");
    }
    top->final();
    delete top;
    return 0;
}
"""


def _widths(fu: FU) -> tuple[int, int]:
    return max(65, sum(t.width for _, t in fu.ports)), max(65, fu.out_bits + fu.exp_bits)


def harness(fu: FU) -> Module:
    din_bits, dout_bits = _widths(fu)
    m = Module("tb_fu")
    clk = m.Input("clk")
    din = m.Input("din", din_bits)
    dout = m.Output("dout", dout_bits)
    y = m.Wire("y", fu.out_bits)
    ports, at = [("clk", clk)], 0
    for name, t in fu.ports:
        ports.append((name, din[at:at + t.width]))
        at += t.width
    outs = [("y", y)]
    if fu.exp_bits:  # a float result: dout holds {ye, y}
        ye = m.Wire("ye", fu.exp_bits)
        outs.append(("ye", ye))
        y = Cat(ye, y)
    m.Instance(StubModule(f"lego_fu_{fu.name}"), "u_fu", ports=ports + outs)
    used = fu.out_bits + fu.exp_bits
    m.Assign(dout(Cat(Int(0, dout_bits - used, base=10), y) if dout_bits > used else y))
    return m


def build(fu: FU, work: Path) -> Path:
    """Verilate the FU and its harness in ``work``; returns the binary (from the model cache of
    :mod:`.objcache` when the same FU, harness and tools were built before)."""
    verilator = require_verilator()
    work.mkdir(parents=True, exist_ok=True)
    (work / f"lego_fu_{fu.name}.v").write_text(verilog_text(mk_fu(fu)))
    (work / "tb_fu.v").write_text(verilog_text(harness(fu)))
    (work / "filelist.f").write_text(f"lego_fu_{fu.name}.v\n")  # the FU alone, for lint
    din_bits, dout_bits = _widths(fu)
    main = MAIN.replace("@IN_WORDS@", str(-(-din_bits // 32))).replace("@OUT_WORDS@", str(-(-dout_bits // 32)))
    (work / "main.cpp").write_text(main)
    flags = ["--cc", "--exe", "--build", "-j", "2", "-Wno-fatal", "-Wno-WIDTHEXPAND", "--top-module", "tb_fu",
             "--Mdir", "obj"]
    sources = [work / "tb_fu.v", work / f"lego_fu_{fu.name}.v"]
    key = objcache.model_key(verilator, flags, main, sources)
    cached = objcache.model(key)
    if cached is not None:
        return cached
    proc = subprocess.run([verilator, *flags, *(p.name for p in sources), "main.cpp"],
                          cwd=work, capture_output=True, text=True)
    if proc.returncode:
        raise StageError(f"FU {fu.name}: Verilator build failed: {proc.stderr.strip().splitlines()[-1:]}")
    binary = work / "obj" / "Vtb_fu"
    return objcache.store_model(key, binary) or binary


def pack(fu: FU, inputs: dict[str, np.ndarray]) -> list[int]:
    """Per vector, every port's codes packed as ``din`` holds them."""
    n = len(next(iter(inputs.values())))
    words = [0] * n
    at = 0
    for name, t in fu.ports:
        codes = np.asarray(inputs[name], dtype=np.int64)
        per = [codes[:, k] for k in range(t.n)] if isinstance(t, Vec) else [codes]
        ew = t.elem.width if isinstance(t, Vec) else t.width
        for k, col in enumerate(per):
            for i, c in enumerate(col.tolist()):
                words[i] |= (c & ((1 << ew) - 1)) << (at + k * ew)
        at += t.width
    return words


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def run(binary: Path, fu: FU, inputs: dict[str, np.ndarray]) -> list:
    """The FU's outputs for ``inputs`` (per port: codes, (N,) or (N, n)): signed integers, or
    (mantissa, exponent) pairs for a float result."""
    din_bits, _ = _widths(fu)
    digits = -(-din_bits // 4)
    text = "".join(f"{w:0{digits}x}\n" for w in pack(fu, inputs))
    out = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True).stdout.split()
    words = [int(h, 16) for h in out]
    if fu.exp_bits:
        return [(_signed(v, fu.out_bits), _signed(v >> fu.out_bits, fu.exp_bits)) for v in words]
    return [_signed(v, fu.out_bits) for v in words]


def reference(fu: FU, inputs: dict[str, np.ndarray]) -> list:
    """:func:`evaluate` in the form :func:`run` returns (a constant output repeated per vector)."""
    n = len(next(iter(inputs.values())))
    parts = [np.broadcast_to(x, (n,)) for x in (evaluate(fu, inputs) if fu.exp_bits else (evaluate(fu, inputs),))]
    return [tuple(int(x) for x in row) if fu.exp_bits else int(row[0]) for row in zip(*parts)]


def check(fu: FU, inputs: dict[str, np.ndarray], work: Path) -> dict:
    """Run ``inputs`` through the FU's Verilog; every output against the reference."""
    got = run(build(fu, work), fu, inputs)
    want = reference(fu, inputs)
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    return {"vectors": len(want), "mismatches": len(bad), "first": bad[:5], "out_bits": fu.out_bits}
