"""Datapath widths a layer needs: the worst-case sum of its reduction (checked before any build).

A hardware engineer sizes an accumulator for the largest magnitude its sums can reach:
with signed ``b``-bit operands each product of ``n`` inputs is at most ``(2^(b-1))^n`` in
magnitude (every operand at the minimum ``-2^(b-1)``; for two inputs that product is
positive, so the bound is reached), and one output element sums at most the product of
the reduction dims' bounds such terms (padding only removes terms). The accumulator's
``w`` two's-complement bits hold it when ``2^(w-1) - 1 >= bound``.
"""
from __future__ import annotations

from math import prod

from lego_build.ir.workload import Kernel


def reduction_length(kernel: Kernel) -> int:
    """Terms summed into one output element at most: the product of the reduction dims' bounds."""
    return prod(kernel.dims[d].bound for d in kernel.reduction_dims)


def worst_case_sum(kernel: Kernel, operand_bits: int, product: int | None = None) -> int:
    """Largest magnitude an output of ``kernel`` reaches with signed ``operand_bits`` operands,
    or with products of at most ``product`` in magnitude (an FU's own, :mod:`lego_build.fulang.kinds`)."""
    if product is None:
        product = (1 << (operand_bits - 1)) ** len(kernel.inputs)
    return reduction_length(kernel) * product


def required_acc_bits(kernel: Kernel, operand_bits: int, product: int | None = None) -> int:
    """Fewest two's-complement bits that hold every sum of ``kernel``."""
    return worst_case_sum(kernel, operand_bits, product).bit_length() + 1
