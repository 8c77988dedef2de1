"""The post-processing operators the PPU knows, defined once (seed 004 §4.4: each PPU is a
256-entry lookup table for activations and a reduction unit for norms and softmax).

Used by the cost model (:mod:`lego_build.mapping.ppu`) and by the simulation's PPU model
(:mod:`lego_build.sim.ppu`, which holds the tables' functions).
"""
from __future__ import annotations

#: clamps the output path applies with its ReLU bit (ReLU6's upper clip is the int8 clamp)
RELU = ("relu", "relu6", "clip")
#: per-element affine steps that fold into the requantisation scale of the output path
FOLDED = ("batchnorm", "bias", "add", "mul", "scale", "dequantize", "quantize")
#: activations the PPU's 256-entry table computes
TABLE_OPS = ("gelu", "silu", "hswish", "sigmoid", "tanh")
#: tables whose output range is [-1, 1] (scaled by 127 rather than 16)
UNIT_RANGE = ("sigmoid", "tanh")
#: operators with a second tensor operand (a residual add, SE's channel gate): the PPU reads it
BINARY = ("add", "mul")
#: passes over the data of a reduction, each one element per lane per cycle: softmax sums the
#: table's exponentials, then scales by the reciprocal (the int8 input spans the table, so no
#: max pass); the norms accumulate sum and sum of squares together, then normalise
PASSES = {"softmax": 2, "layernorm": 2, "groupnorm": 2, "rmsnorm": 2}


def on_output_path(op: str) -> bool:
    """Can ``op`` run on the output path of the array layer before it (a binary one reading its
    second operand as the results stream out)?"""
    return op in RELU or op in FOLDED or op in TABLE_OPS
