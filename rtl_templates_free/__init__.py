"""FU and primitive generators written with Veriloggen (no hand-written Verilog).

Each ``mk_*`` builder takes sizes and returns a ``veriloggen.Module`` whose name
encodes those sizes, so one design never holds two different modules of one name.
:mod:`lego_build.emit` instantiates them from the DAG. An FU kind (``arch.fu``) is an
:class:`lego_build.fulang.kinds.FU` naming its multiplier generator; a user's FU comes from
its own package through the entry-point group ``lego_build.fus``, without editing this one.
"""
from .primitives import (
    PPU_LUT,
    PPU_RELU,
    PPU_REQUANT,
    mk_acc,
    mk_acc_select,
    mk_acc_sum,
    mk_add,
    mk_bank,
    mk_bank_rows,
    mk_bitfusion_mul,
    mk_fifo,
    mk_mac,
    mk_mul,
    mk_ppu,
    mk_ppu_lane_pipe,
    mk_rmw,
    mk_rmw_pipe,
    mk_table,
    sign_extend,
)

__all__ = ["PPU_LUT", "PPU_RELU", "PPU_REQUANT", "mk_acc", "mk_acc_select", "mk_acc_sum", "mk_add",
           "mk_bank", "mk_bank_rows", "mk_bitfusion_mul",
           "mk_fifo", "mk_mac", "mk_mul", "mk_ppu", "mk_ppu_lane_pipe", "mk_rmw", "mk_rmw_pipe",
           "mk_table", "sign_extend"]
