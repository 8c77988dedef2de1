"""lego_build.sim.verilator: toggle counts from Verilator's coverage files."""
from lego_build.sim.verilator import toggle_rates


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
