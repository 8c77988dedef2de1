"""The post-processing unit's model and configuration (sim.ppu)."""
import numpy as np

from lego_build.sim.ppu import PPUConfig, apply, epilogue_config, lut
from rtl_templates_free.primitives import PPU_LUT, PPU_RELU, PPU_REQUANT


def test_requantise_rounds_half_up_and_clamps_to_int8():
    cfg = PPUConfig(PPU_REQUANT, scale=3, shift=2)
    x = np.array([0, 1, 2, -2, -3, 100, 1000, -1000], dtype=np.int64)
    # (3x + 2) >> 2, arithmetic: 0, 1, 2, -1, -2, 75, then the clamps
    assert apply(cfg, x).tolist() == [0, 1, 2, -1, -2, 75, 127, -128]


def test_relu_and_lut_apply_after_requantisation():
    relu = PPUConfig(PPU_REQUANT | PPU_RELU, scale=1, shift=0)
    assert apply(relu, np.array([-5, 5, 300])).tolist() == [0, 5, 127]
    sig = PPUConfig(PPU_REQUANT | PPU_LUT, scale=1, shift=0, table="sigmoid")
    out = apply(sig, np.array([-128, 0, 127]))
    assert out[0] < 10 and out[1] == 64 and out[2] > 120  # sigmoid(-8), sigmoid(0) = 0.5, sigmoid(8)


def test_tables_are_int8_and_monotone_where_the_function_is():
    for name in ("sigmoid", "tanh", "gelu", "silu", "hswish"):
        t = lut(name)
        assert t.shape == (256,) and t.min() >= -128 and t.max() <= 127
    values = np.arange(-128, 128)
    assert np.all(np.diff(lut("sigmoid")[values & 0xFF]) >= 0)
    assert lut("gelu")[32] == 31  # index 32 is 2.0: gelu(2.0) * 16 = 31.27


def test_epilogue_maps_network_ops_onto_the_ppu():
    acc = np.array([-40000, 123, 39000])
    assert epilogue_config((), acc).mode == 0  # nothing after the layer: 32-bit outputs
    assert epilogue_config(("softmax",), acc).mode == 0  # a row operator stays on the host
    bn_relu = epilogue_config(("batchnorm", "relu6"), acc)
    assert bn_relu.mode == PPU_REQUANT | PPU_RELU
    assert np.abs(apply(PPUConfig(PPU_REQUANT, bn_relu.scale, bn_relu.shift), acc)).max() >= 64  # int8 range used
    gelu = epilogue_config(("gelu",), acc)
    assert gelu.mode == PPU_REQUANT | PPU_LUT and gelu.table == "gelu"


def test_tables_are_the_vocabulary():
    from lego_build.ir.ppu_ops import TABLE_OPS
    from lego_build.sim.ppu import TABLES

    assert tuple(TABLES) == TABLE_OPS
