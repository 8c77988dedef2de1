"""Post-processing of a layer's outputs: the configuration the host writes and the NumPy model.

A layer's *epilogue* is the element-wise operators the workload applies to its
output before the next array layer (``analysis.json``'s ``ppu`` entries). Folding
them onto the PPU of :func:`rtl_templates_free.primitives.mk_ppu`:

* batch norm, bias and residual adds fold into the requantisation scale, so any
  epilogue requantises to int8 (a layer without one keeps 32-bit outputs);
* ``relu`` / ``relu6`` / ``clip`` set the ReLU bit (ReLU6's upper clip is the
  int8 clamp of a scale that maps 6.0 to 127);
* ``gelu``, ``sigmoid``, ``tanh``, ``silu``, ``hswish`` load their 256-entry table,
  ``t[v] = round(f(v / 16) * 16)`` clamped to int8 (sigmoid and tanh: ``* 127``);
* anything else (softmax, layer norm) needs a whole row and stays on the host.

Scale and shift are calibrated on the tile's own outputs (largest magnitude to
about 127), the way a quantiser calibrates on sample data.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lego_build.ir.ppu_ops import FOLDED, RELU, UNIT_RANGE
from rtl_templates_free.primitives import PPU_LUT, PPU_RELU, PPU_REQUANT

TABLES = {
    "gelu": lambda x: 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))),
    "silu": lambda x: x / (1.0 + math.exp(-x)),
    "hswish": lambda x: x * min(max(x + 3.0, 0.0), 6.0) / 6.0,
    "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
    "tanh": math.tanh,
}


@dataclass(frozen=True)
class PPUConfig:
    mode: int = 0
    scale: int = 1
    shift: int = 0
    table: str = ""  # the activation in the LUT

    def words(self, hm) -> list[tuple[int, int]]:
        """Configuration writes: mode, scale (two's complement, 16 bits), shift, table."""
        words = [(hm.ppu_mode_reg, self.mode), (hm.ppu_scale_reg, self.scale & 0xFFFF), (hm.ppu_shift_reg, self.shift)]
        if self.mode & PPU_LUT:
            words += [(hm.ppu_lut_base + i, int(v) & 0xFF) for i, v in enumerate(lut(self.table))]
        return words


def lut(name: str) -> np.ndarray:
    """Entry ``i`` holds ``f`` of the int8 value whose low byte is ``i``."""
    f = TABLES[name]
    gain = 127.0 if name in UNIT_RANGE else 16.0
    xs = [(i - 256 if i >= 128 else i) / 16.0 for i in range(256)]
    return np.array([min(127, max(-128, round(f(x) * gain))) for x in xs], dtype=np.int64)


def on_chip(ops: tuple[str, ...]) -> list[str]:
    """The operators of an epilogue that the PPU applies (the rest stay on the host)."""
    return [op for op in ops if op in RELU or op in FOLDED or op in TABLES]


def epilogue_config(ops: tuple[str, ...], outputs: np.ndarray) -> PPUConfig:
    """The PPU setting for a layer followed by ``ops``, calibrated on ``outputs``."""
    onchip = on_chip(ops)
    if not onchip:
        return PPUConfig()
    peak = int(np.max(np.abs(outputs))) if outputs.size else 0
    scale = 181  # an odd multiplier, so the product is not a plain shift
    shift = max(0, (peak * scale // 127).bit_length())
    mode = PPU_REQUANT | (PPU_RELU if any(op in RELU for op in onchip) else 0)
    table = next((op for op in onchip if op in TABLES), "")
    return PPUConfig(mode | (PPU_LUT if table else 0), scale, shift, table)


def apply(cfg: PPUConfig, x: np.ndarray) -> np.ndarray:
    """What the PPU outputs for accumulator values ``x`` (int64 array)."""
    v = np.asarray(x, dtype=np.int64)
    if cfg.mode & PPU_REQUANT:
        rounded = v * cfg.scale + ((1 << cfg.shift) >> 1)
        v = np.clip(rounded >> cfg.shift, -128, 127)  # numpy >> on int64 is arithmetic
    if cfg.mode & PPU_RELU:
        v = np.maximum(v, 0)
    if cfg.mode & PPU_LUT:
        v = lut(cfg.table)[v & 0xFF]
    return v
