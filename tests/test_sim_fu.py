"""The arch config chooses the FU: 16-bit MAC and the BitFusion-style multiplier simulate bit-exactly end to end."""
import shutil

import pytest

from lego_build import compose, run_all, run_stage
from lego_build.errors import ConfigError
from lego_build.flow.validate import validate
from lego_build.ir.dag import DAG, MulSpec
from lego_build.ir.serialize import from_jsonable
from lego_build.runtime.atomic import read_json
from lego_build.sim.verilator import lint, require_verilator

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

SMALL_CONV = ["workload=conv2d", "arch=nvdla", "arch.rows=4", "arch.cols=4", "workload.in_h=6", "workload.in_w=6",
              "workload.in_ch=4", "workload.out_ch=4"]
WIDE = ["arch.operand_bits=16", "arch.acc_bits=48"]
MTTKRP = ["arch.family=mttkrp", "arch.dataflows.main.spatial=[k,j]", "arch.control_flow=[0,0]", "workload=mttkrp",
          "workload.I=5", "workload.J=6", "workload.K=7", "workload.L=3"]


@pytest.mark.parametrize("overrides,multiplier", [
    (WIDE, "lego_mul_16x16_32"),  # 16-bit MAC: int16 operands, 48-bit accumulators
    (WIDE + SMALL_CONV, "lego_mul_16x16_32"),
    (["arch.fu=bitfusion"], "lego_bfmul_8x8_16"),  # 16 BitBricks per int8 product
    (["arch.fu=bitfusion"] + SMALL_CONV, "lego_bfmul_8x8_16"),
], ids=["mac16-gemm", "mac16-conv", "bitfusion-gemm", "bitfusion-conv"])
def test_fu_bit_exact_and_cycles_predicted(tmp_path, overrides, multiplier):
    require_verilator()
    cfg = compose(overrides)
    validate(cfg)
    run_all(cfg, tmp_path)
    sim = read_json(tmp_path / "sim" / "result.json")
    assert sim["match"] and sim["cycles_match"] and sim["mismatches"] == 0, sim
    assert sim["products"]["lint"] == "clean"
    (result,) = sim["tiles"]
    assert result["cycles_simulated"] == result["cycles_predicted"], result
    rtl = {p.stem for p in (tmp_path / "rtl").glob("*.v")}
    assert multiplier in rtl and not {m for m in rtl if "mul" in m} - {multiplier}, rtl
    host = read_json(tmp_path / "rtl" / "host_interface.json")
    assert host["operand_bits"] == cfg.arch.operand_bits and host["out_bits"] == cfg.arch.acc_bits


def test_bitfusion_preset_and_dag_attribute(tmp_path):
    cfg = compose(["arch=bitfusion", "target=rtl"])
    assert (cfg.arch.fu, cfg.arch.rows, cfg.arch.cols) == ("bitfusion", 8, 8)
    for stage in ("analyze", "graph", "optimize"):
        run_stage(stage, cfg, tmp_path)
    dag = from_jsonable(DAG, read_json(tmp_path / "dag.json"))
    muls = [n for n in dag.nodes if n.kind == "mul"]
    assert len(muls) == 64 and all(n.spec(MulSpec).fu == "bitfusion" for n in muls)


def test_bitfusion_three_operand_design_lints_clean(tmp_path):
    # MTTKRP: a * b from one BitBrick array, times c from a second (its 65536-triple
    # Verilator check is in test_rtl_templates; the full flow takes ~10 s more to simulate)
    cfg = compose(["arch.fu=bitfusion", "target=rtl"] + MTTKRP)
    for stage in ("analyze", "graph", "optimize", "emit"):
        run_stage(stage, cfg, tmp_path)
    assert (tmp_path / "rtl" / "lego_bfmul_8x8x8_22.v").exists()
    if shutil.which("verilator-cli"):
        assert lint(tmp_path / "rtl") == []


def test_mac_fusion_leaves_bitfusion_multipliers_alone(tmp_path):
    for fu in ("mac", "bitfusion"):
        cfg = compose([f"arch.fu={fu}", "optimizer=fpga", "target=rtl"])
        for stage in ("analyze", "graph", "optimize"):
            run_stage(stage, cfg, tmp_path / fu)
        kinds = [n.kind for n in from_jsonable(DAG, read_json(tmp_path / fu / "dag.json")).nodes]
        assert (kinds.count("mac"), kinds.count("mul")) == ((16, 0) if fu == "mac" else (0, 16))


@pytest.mark.parametrize("overrides,message", [
    (["arch.fu=bitfusion", "arch.operand_bits=7"], r"^arch.operand_bits=7: arch.fu=bitfusion .* must be even$"),
    (["arch.fu=booth"], r"^arch\.fu=booth: unknown; choose one of mac, bitfusion"),
])
def test_fu_config_errors_are_one_line(overrides, message):
    with pytest.raises(ConfigError, match=message):
        compose(overrides)
