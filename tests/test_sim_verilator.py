"""lego_build.sim.verilator: toggle counts and bank accesses from Verilator's coverage files."""
import subprocess

import pytest

from lego_build.sim.verilator import bank_accesses, require_verilator, toggle_rates
from rtl_templates_free import mk_bank, mk_bank_rows


def _point(module: str, signal: str, direction: str, count: int, line: int = 10) -> str:
    key = "".join(f"\x01{k}\x02{v}" for k, v in (("f", f"/elsewhere/{module}.v"), ("l", str(line)), ("t", "toggle"),
                                                   ("page", f"v_toggle/{module}"), ("o", f"{signal}:{direction}"),
                                                   ("h", f"TOP.lego_top.u_{module}_*")))
    return f"C '{key}' {count}\n"


def test_toggles_sum_over_files_and_directions_and_count_each_bit_once(tmp_path):
    """Two runs' files: a 2-bit signal and a 1-bit one of ``m``, each bit with a 0->1 and a
    1->0 point (Verilator's format, instances summed); the clock is left out."""
    a, b = tmp_path / "t.0.dat", tmp_path / "t.1.dat"
    a.write_text("# SystemC::Coverage-3\n" + _point("m", "x[0]", "0->1", 3) + _point("m", "x[0]", "1->0", 2)
                 + _point("m", "x[1]", "0->1", 1) + _point("m", "x[1]", "1->0", 1) + _point("m", "y", "0->1", 0)
                 + _point("m", "y", "1->0", 0) + _point("m", "clk", "0->1", 50) + _point("m", "clk", "1->0", 50))
    b.write_text(_point("m", "x[0]", "0->1", 4) + _point("n", "z", "0->1", 7))
    assert toggle_rates([a, b]) == {
        "m": {"toggles": 11, "bits": 3, "reg_toggles": 0, "reg_bits": 0,
              "bit_toggles": {"x[0]": 9, "x[1]": 2, "y[0]": 0}},
        "n": {"toggles": 7, "bits": 1, "reg_toggles": 0, "reg_bits": 0, "bit_toggles": {"z[0]": 7}}}


def test_register_toggles_are_those_of_signals_declared_reg_in_the_sources(tmp_path):
    """A coverage point names its signal's declaration line; with the sources the points of
    ``reg`` lines count apart (the file is found by name in ``rtl``, wherever it was built)."""
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "m.v").write_text("module m(input clk, input [1:0] a);\n  wire [1:0] w;\n  reg [1:0] r;\nendmodule\n")
    cov = tmp_path / "t.0.dat"
    (rtl / "m.v").write_text(rtl.joinpath("m.v").read_text().replace("endmodule", "  reg q__x;\nendmodule"))
    cov.write_text(_point("m", "w[0]", "0->1", 5, line=2) + _point("m", "r[0]", "0->1", 2, line=3)
                   + _point("m", "r[1]", "1->0", 1, line=3) + _point("m", "a[1]", "0->1", 4, line=1)
                   + _point("m", "q___05Fx", "0->1", 6, line=4) + _point("m", "q___05Fx", "1->0", 5, line=4))
    # per signal bit, under the RTL's names (Verilator's escape of "__" undone; one bit is [0])
    assert toggle_rates([cov], rtl) == {"m": {"toggles": 23, "bits": 5, "reg_toggles": 14, "reg_bits": 3,
                                              "bit_toggles": {"w[0]": 5, "r[0]": 2, "r[1]": 1, "a[1]": 4,
                                                              "q__x[0]": 11}}}


@pytest.mark.slow  # a Verilator compile
def test_bank_accesses_count_every_read_edge_and_each_write_as_verilator_runs_them(tmp_path):
    """Two plain banks and one of two sub-banks under Verilator's line coverage, driven for 10
    cycles with known write enables: the reads are every clock edge of every macro (the banks
    read each cycle), the writes those the enables asked for, summed over a module's instances."""
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    bank, rows = mk_bank(8, 16), mk_bank_rows(8, 16, 2)
    (rtl / "banks.v").write_text(bank.to_verilog() + rows.to_verilog() + """
module top(input clk, input [3:0] we, output [23:0] q);
  lego_bank_w8_d16 b0(.clk(clk), .we(we[0]), .waddr(4'd1), .wdata(8'd3), .raddr(4'd1), .rdata(q[7:0]));
  lego_bank_w8_d16 b1(.clk(clk), .we(we[1]), .waddr(4'd2), .wdata(8'd3), .raddr(4'd2), .rdata(q[15:8]));
  lego_bank_w8_d16_r2 r0(.clk(clk), .we(we[3:2]), .waddr(4'd2), .wdata(16'd5), .raddr(4'd3), .rdata(q[23:16]));
endmodule
""")
    (tmp_path / "tb.cpp").write_text("""#include "Vtop.h"
#include "verilated.h"
#include "verilated_cov.h"
int main() {
    Vtop t;
    const int we[10] = {1, 1, 3, 3, 2, 12, 4, 0, 8, 0};  // b0: 4, b1: 3, r0: 2 + 2 sub-bank writes
    for (int i = 0; i < 10; i++) { t.we = we[i]; t.clk = 0; t.eval(); t.clk = 1; t.eval(); }
    Verilated::defaultContextp()->coveragep()->write("cov.0.dat");
    return 0;
}
""")
    cmd = [require_verilator(), "--cc", "--exe", "--build", "--coverage-line", "-Wno-fatal", "--top-module", "top",
           str(rtl / "banks.v"), "tb.cpp", "-o", "sim"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    subprocess.run([str(tmp_path / "obj_dir" / "sim")], cwd=tmp_path, check=True)
    assert bank_accesses([tmp_path / "cov.0.dat"], rtl) == {
        "lego_bank_w8_d16": {"reads": 20, "writes": 7}, "lego_bank_w8_d16_r2": {"reads": 20, "writes": 4}}
