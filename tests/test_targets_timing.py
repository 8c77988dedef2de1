"""The asic target's timing (issue 44): buffer trees on high-fan-out nets, the memory macros in the
timing graph, the slack read unclamped; Yosys + OpenSTA on the OSU 0.18 µm library (qflow)."""
import json
import re
import shutil
import subprocess

import pytest

from lego_build.targets import stdcell, timing

NO_QFLOW = shutil.which("sta") is None or shutil.which("yosys") is None
pytestmark = pytest.mark.skipif(NO_QFLOW, reason="needs Debian's qflow (apt-get install -y qflow)")

# a select register read by 256 multiplexer inputs (a dataflow select in miniature), a 16-bit
# multiply-accumulate, an activation-table macro between two registers, and a module one of whose
# outputs (a multiplier's) nothing reads
RTL = """
module lego_table_w8_d256 (input clk, input we, input [7:0] waddr, input [7:0] wdata, input [7:0] raddr,
                           output [7:0] rdata);
  reg [7:0] mem [0:255];
  assign rdata = mem[raddr];
  always @(posedge clk) if (we) mem[waddr] <= wdata;
endmodule
module lego_part (input clk, input [7:0] a, input [7:0] b, output reg [7:0] used, output reg [15:0] unread);
  always @(posedge clk) begin used <= a ^ b; unread <= a * b; end
endmodule
module lego_soc (input clk, input [255:0] a, input [255:0] b, input [7:0] x, input [7:0] w, output [7:0] y,
                 output [31:0] acc_o, output [7:0] t);
  reg sel;
  reg [255:0] q;
  reg [31:0] acc;
  reg [7:0] ta, tq;
  wire [7:0] looked;
  always @(posedge clk) begin
    sel <= a[0] ^ b[0];
    q <= sel ? a : b;
    acc <= acc + $signed(x) * $signed(w);
    ta <= x;
    tq <= looked;
  end
  wire [7:0] part_used;
  wire [15:0] unused_z;  // a module output its parent leaves unread (lego_soc's unused_bits)
  lego_part u_part (.clk(clk), .a(x), .b(w), .used(part_used), .unread(unused_z));
  lego_table_w8_d256 u_table (.clk(clk), .we(1'b0), .waddr(8'd0), .wdata(8'd0), .raddr(ta), .rdata(looked));
  assign y = q[7:0] ^ q[255:248];
  assign acc_o = acc;
  assign t = tq ^ part_used;
endmodule
"""


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    rtl = tmp_path_factory.mktemp("rtl")
    (rtl / "lego_table_w8_d256.v").write_text(RTL.split("module lego_soc")[0])
    (rtl / "lego_soc.v").write_text("module lego_soc" + RTL.split("module lego_soc")[1])
    (rtl / "filelist.f").write_text("lego_table_w8_d256.v\nlego_soc.v\n")
    lib = stdcell.Library.load("osu018")
    hier, out = tmp_path_factory.mktemp("hier"), tmp_path_factory.mktemp("flat")
    stdcell._yosys(rtl, ["lego_table_w8_d256.v", "lego_soc.v"], ["lego_table_w8_d256"], lib, "lego_soc", hier)
    (out / "netlist.json").write_text((hier / "flat.json").read_text())
    (out / "hier.json").write_text((hier / "netlist.json").read_text())
    return lib, out


def _analyse(lib, flat, period):
    hier = json.loads((flat / "hier.json").read_text())
    return timing.analyse(stdcell.STA.path(), flat, hier, lib, "lego_soc", period, stdcell._class)


def test_high_fanout_nets_get_buffer_trees_that_fit_the_library(flat):
    """The select register drives 256 multiplexers (Yosys's ABC buffers only part of a flip-flop's
    fan-out); after repair no net drives more than MAX_FANOUT pins (OpenSTA's own count)."""
    lib, out = flat
    t = _analyse(lib, out, 10.0)
    assert t["worst_fanout"] > timing.MAX_FANOUT and t["buffers"] >= t["buffered_nets"] > 0
    script = out / "fanout.tcl"
    script.write_text(f"read_liberty {lib.path}\nread_liberty {out / 'macros.lib'}\nread_verilog {out / 'repaired.v'}\n"
                      "link_design lego_soc\nreport_check_types -max_fanout\n"
                      "foreach n [get_nets *] { puts \"FANOUT [get_full_name $n] "
                      "[llength [get_pins -of_objects $n -filter {direction == input}]]\" }\n")
    text = subprocess.run([stdcell.STA.path(), "-exit", str(script)], capture_output=True, text=True).stdout
    fanouts = {n: int(x) for n, x in re.findall(r"^FANOUT (\S+) (\d+)$", text, flags=re.M)}
    assert fanouts.pop("clk") > timing.MAX_FANOUT  # the clock is ideal: clock-tree synthesis is not modelled
    fanouts.pop("zero_", None)  # OpenSTA's constant 0 (tie cells, not a timed net)
    assert fanouts and max(fanouts.values()) <= timing.MAX_FANOUT, max(fanouts.items(), key=lambda kv: kv[1])


def test_the_slack_is_not_clamped_so_fmax_does_not_depend_on_the_probe_clock(flat):
    """report_wns reads 0 for any design faster than the probe; the worst path's slack does not."""
    lib, out = flat
    slow, fast = _analyse(lib, out, 100.0), _analyse(lib, out, 2.0)
    assert slow["slack_ns"] > 0 > fast["slack_ns"]
    assert slow["fmax_mhz"] == pytest.approx(fast["fmax_mhz"], rel=1e-3)
    assert 100 < slow["fmax_mhz"] < 1000  # a 8x8 multiply-accumulate at 0.18 µm


def test_paths_through_the_table_macro_are_timed_with_its_access_time(flat):
    """ta -> table read -> tq is a timed path, longer than the table's access time alone."""
    lib, out = flat
    t = _analyse(lib, out, 10.0)
    text = (out / "timing.txt").read_text()
    through = [p for p in t["paths"] if p["from"].startswith("ta[") and p["to"].startswith("tq[")]
    assert through, [p["to"] for p in t["paths"]]
    assert through[0]["delay_ns"] > timing.access_ns(8, 256, 180) and "u_table/rdata" in text
    classify = timing.classifier(timing.instance_classes(json.loads((out / "hier.json").read_text()), "lego_soc",
                                                         stdcell._class))
    assert classify("u_table") == stdcell.TABLES and classify("tq[0]") == stdcell._class("lego_soc")
    assert classify("u_part.used[0]") == stdcell._class("lego_part") != classify("tq[0]")


def test_logic_behind_an_unread_module_output_is_swept_before_timing(flat):
    """lego_part's multiplier survives the module-by-module synthesis (its output is a port there)
    but drives nothing in the flattened design: swept, and no path ends in it; its used part stays."""
    lib, out = flat
    t = _analyse(lib, out, 10.0)
    assert t["swept"] > 16  # the 8x8 multiplier's cells and its 16 flip-flops
    assert not any("unread" in p["to"] or "unused_z" in p["to"] for p in t["paths"])
    verilog = (out / "repaired.v").read_text()
    assert "u_part.unread" not in verilog and "unused_z" not in verilog and "u_part.used" in verilog
