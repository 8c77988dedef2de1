"""The post-route check's netlists: the flow's netlist renamed for qflow's tools, qrouter's RC trees as SPEF."""
import re

from lego_build.targets import pnr_netlist


def test_rc_trees_become_spef_with_every_pin(tmp_path):
    """qrouter's RC record (a driver, segments of R and C ending at pins or branch points) as SPEF:
    one resistor per segment, half its capacitance at each end, the I/O pin of a macro's net tied
    to the macro's pins."""
    verilog = ("module lego_top (clk, y);\n  input clk;\n  output y;\n  wire \\u_a.x ;\n  wire \\u_a.w ;\n"
               "  INVX1 \\u_a.inv  (.A(\\u_a.x ), .Y(y));\n"
               "  lego_bank_w8_d16 u_bank (.clk(clk), .rdata({\\u_a.x , \\u_a.z }), .wdata(\\u_a.w ));\n"
               "  NAND2X1 nd (.A(\\u_a.x ), .B(1'b0), .Y(\\u_a.w ));\nendmodule\n")
    pins = {"INVX1": {"A": "input", "Y": "output"}, "NAND2X1": {"A": "input", "B": "input", "Y": "output"}}
    macros = {"lego_bank_w8_d16": {"clk": {"direction": "input", "bits": [2]},
                                   "rdata": {"direction": "output", "bits": [3, 4]},
                                   "wdata": {"direction": "input", "bits": [5]}}}
    phys = pnr_netlist.rename(pnr_netlist.parse(verilog), pins, macros)
    # the port, the macro's rdata[1] driving the block and its wdata driven by it (rdata[0] reaches no cell)
    assert phys.pads == {"p1": "output", "n0": "input", "n2": "output"}
    assert phys.original["n0"] == "u_a.x" and phys.original["INVX1_1"] == "u_a.inv" and phys.original["m0"] == "u_bank"
    assert ".inputs n0\n.outputs p1 n2\n.gate INVX1 A=n0 Y=p1\n.gate NAND2X1 A=n0 Y=n2\n" in phys.blif
    assert "NAND2X1 NAND2X1_1 (.A(n0), .B(1'b0), .Y(n2));" in phys.verilog
    rc = "n0 1 PIN/n0 2 ( 0.5 0.002 ( 1.5 0.004 NAND2X1_1/A , ( 2 0.006 INVX1_1/A ) ) ) \n"
    text, info = pnr_netlist.spef(rc, phys, "lego_top", cap_scale=2.0)
    assert info == {"nets": 1, "wire_pf": 0.024, "res_ohm": 4.0, "missing": 0}
    body = text.split("*D_NET n0 ")[1]
    assert "*I m0:rdata[1] O" in body and "*I INVX1_1:A I" in body and "n0:0 m0:rdata[1] 0.001" in body
    assert re.search(r"NAND2X1_1:A 0\.01\b", body)  # half of 0.004 and half of 0.006, doubled
