"""The asic target's per-module power probes (issue 44): every input port toggles, so a module fed
from its ports (a multiplier, a PPU lane) gets the dynamic power it has when registers drive it;
Yosys + OpenSTA on the OSU 0.18 µm library (qflow)."""
import shutil

import pytest

from lego_build.targets import stdcell
from rtl_templates_free import mk_mul, mk_ppu_lane_pipe

NO_QFLOW = shutil.which("sta") is None or shutil.which("yosys") is None
pytestmark = pytest.mark.skipif(NO_QFLOW, reason="needs Debian's qflow (apt-get install -y qflow)")


def _clocked(name: str, ports: list[tuple[str, int]], outs: list[tuple[str, int]]) -> str:
    """A wrapper that drives every input of ``name`` from a register of the same width."""
    decl = ", ".join(["input clk", *[f"input [{w - 1}:0] {p}_in" for p, w in ports],
                      *[f"output [{w - 1}:0] {p}" for p, w in outs]])
    regs = "\n".join(f"  reg [{w - 1}:0] {p}_r;\n  always @(posedge clk) {p}_r <= {p}_in;" for p, w in ports)
    conns = ", ".join([".clk(clk)", *[f".{p}({p}_r)" for p, _ in ports], *[f".{p}({p})" for p, _ in outs]])
    return f"module probe_{name} ({decl});\n{regs}\n  {name} u_dut ({conns});\nendmodule\n"


@pytest.mark.parametrize("module,ports,outs", [
    (mk_mul(8, 8, 16), [("a", 8), ("b", 8)], [("p", 16)]),
    (mk_ppu_lane_pipe(32), [("en", 1), ("x", 32), ("mode", 2), ("scale", 16), ("shift", 6)], [("y", 32)]),
], ids=["multiplier", "ppu_lane"])
def test_a_module_probe_toggles_its_inputs_as_registers_driving_them_would(tmp_path, module, ports, outs):
    """The module alone, its input ports at the rate, against the module behind registers of its
    inputs whose outputs toggle at that rate (OpenSTA's propagation): their combinational power
    (only the module's cells are combinational) agrees within 15 %, and is not near zero."""
    name = module.name
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / f"{name}.v").write_text(module.to_verilog())
    (rtl / "probe.v").write_text(_clocked(name, ports, outs))
    (rtl / "filelist.f").write_text(f"{name}.v\nprobe.v\n")
    lib = stdcell.Library.load("osu018")
    out = tmp_path / "syn"
    out.mkdir()
    stdcell._yosys(rtl, [f"{name}.v", "probe.v"], [], lib, f"probe_{name}", out)
    probe = stdcell._sta(out / "netlist.v", lib, [name, f"probe_{name}"], 10.0, 0.1)
    alone, behind = probe["combinational_w"][name], probe["combinational_w"][f"probe_{name}"]
    assert alone > 1e-4, alone  # a 0.18 µm multiplier at 100 MHz draws milliwatts, not microwatts
    assert alone == pytest.approx(behind, rel=0.15), (alone, behind)
