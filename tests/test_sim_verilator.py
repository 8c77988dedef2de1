"""lego_build.sim.verilator: toggle counts from Verilator's coverage files."""
from lego_build.sim.verilator import toggle_rates


def _point(module: str, signal: str, direction: str, count: int) -> str:
    key = "".join(f"\x01{k}\x02{v}" for k, v in (("f", f"{module}.v"), ("l", "10"), ("t", "toggle"),
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
    assert toggle_rates([a, b]) == {"m": {"toggles": 11, "bits": 3}, "n": {"toggles": 7, "bits": 1}}
