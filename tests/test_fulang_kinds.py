"""FU kinds (lego_build.fulang.kinds): the built-ins' defaults and FU-language FUs as array FUs
(their widths, product range, products for the golden model and the refused definitions)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lego_build.fulang.expr import Float, FUError, Int, SignMag, Vec, dot
from lego_build.fulang.formats import FP16
from lego_build.fulang.kinds import FUS, LUT_BITS, expression_fu


def test_builtins_multiply_at_the_arch_width():
    mac = FUS.get("mac")
    assert mac.widths == () and mac.product is None and mac.width(1, 8) == 8
    assert mac.bound(8, 2) == 128 * 128 and mac.check_inputs(3) is None


def test_products_from_the_table_and_from_the_graph_agree_with_the_expression():
    def sm(a: Int(8), w: SignMag(4)):
        return (a * w << 1) - a

    def wide(a: Int(12), w: Int(11, signed=False)):
        return a * (w - 1000) + 3

    small, big = expression_fu(sm), expression_fu(wide)
    assert sum(big.widths) > LUT_BITS >= sum(small.widths)  # one through the table, one through evaluate
    rng = np.random.default_rng(3)
    a, w = rng.integers(-128, 128, 5000), rng.integers(-8, 8, 5000)
    mag = np.where(w & 8, -(w & 7), w & 7)
    assert (small.product([a, w]) == 2 * a * mag - a).all()
    assert small.bound(8, 2) == 128 * 7 * 2 + 128 and small.widths == (8, 4)
    a, w = rng.integers(-2048, 2048, 2000), rng.integers(0, 2048, 2000)
    assert (np.asarray(big.product([a, w]), dtype=np.int64) == a * (w - 1000) + 3).all()
    assert big.bound(12, 2) == 2048 * 1047 - 3  # the most negative: -2048 * 1047 + 3


def test_array_fu_checks():
    def zp(a: Int(8), w: Int(4, signed=False)):
        return a * (w - 8)

    fu = expression_fu(zp, "int8 x int4")
    assert fu.check(8) is None and "set arch.operand_bits=8" in fu.check(16)
    assert "takes 2 operands; the array's kernel family has 3" in fu.check_inputs(3)
    assert fu.make_mul(8, 4, 20).name == "lego_fu_zp_8x4_p20"


def test_refused_array_fus_name_the_fu():
    def group(a: Vec(Int(8), 4), w: Vec(Int(8), 4)):
        return dot(a, w)

    def flt(a: Float(FP16), w: Float(FP16)):
        return a * w

    def one(a: Int(8)):
        return a * a

    with pytest.raises(FUError, match=r"^FU group: input a is a group; an array FU takes one element per operand"):
        expression_fu(group)
    with pytest.raises(FUError, match=r"^FU flt: returns a float \(mantissa and exponent\)"):
        expression_fu(flt)
    with pytest.raises(FUError, match=r"^FU one: 1 parameters; an array FU takes 2 or 3 operands"):
        expression_fu(one)


def test_table_6_3_kinds_move_their_formats_bits(tmp_path):
    """The group FUs as mapper kinds: bits per element with the scales' share (MX4: a sign and 2-bit
    magnitude, a micro-exponent bit per pair, an 8-bit exponent per 16 = 4 bits), banks that wide
    rounded up; the mapper's DRAM energy of a GEMM follows them (DRAM is costed per bit)."""
    from lego_build import compose
    from lego_build.errors import InputError
    from lego_build.flow.stages import run_stage
    from lego_build.runtime.artifacts import read_artifact

    mx4, fp4 = FUS.get("mx4"), FUS.get("fp4_int4")
    assert mx4.storage == (4.0, 4.0) and mx4.widths == (4, 4) and mx4.group == 16
    assert fp4.storage == (4 + 24 / 64, 4 + 16 / 64) and fp4.group == 64
    with pytest.raises(InputError, match=r"^arch.fu=mx4: a group FU \(16-element dot products\) is costed"):
        mx4.make_mul(4, 4, 32)
    dram = {}
    for name in ("int8", "mx4"):
        cfg = compose([f"arch.fu={name}", "workload.M=64", "workload.N=64", "workload.K=64"])
        for stage in ("analyze", "graph", "optimize", "map"):
            run_stage(stage, cfg, tmp_path / name)
        doc = read_artifact(tmp_path / name, "mapping.json")
        dram[name] = doc.layers[0]["energy_level_tensor_pj"]
    for tensor in ("input", "weight"):  # the operands' DRAM reads halve; the outputs' (32 bits) do not
        assert dram["mx4"][f"dram/{tensor}"] == pytest.approx(dram["int8"][f"dram/{tensor}"] / 2)
    assert dram["mx4"]["dram/output"] == pytest.approx(dram["int8"]["dram/output"])


def test_building_rtl_with_a_group_fu_is_refused_in_one_line(tmp_path):
    """``doit build arch.fu=mx4``: exit 2, one line naming the key, ``out/`` as it was."""
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    shutil.copy(root / "dodo.py", tmp_path / "dodo.py")
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(tmp_path / "dodo.py"), "build", "arch.fu=mx4"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: arch.fu=mx4: a group FU (16-element dot products)")
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file() and ".doit" not in p.parts]
