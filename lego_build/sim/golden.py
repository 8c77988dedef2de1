"""NumPy golden model: ``out[d_out] += prod(in[d_in])`` over the whole iteration domain,
wrapped to the accumulator width exactly as two's-complement hardware does."""
from __future__ import annotations

import numpy as np

from lego_build.ir.workload import Kernel


def golden(kernel: Kernel, data: dict[str, np.ndarray], acc_bits: int) -> np.ndarray:
    it = np.indices([d.bound for d in kernel.dims]).reshape(len(kernel.dims), -1).T
    product = np.ones(len(it), dtype=np.int64)
    for tensor in kernel.inputs:
        idx = it @ np.array(tensor.matrix, dtype=np.int64).T + np.array(tensor.bias, dtype=np.int64)
        inside = np.all((idx >= 0) & (idx < np.array(tensor.shape)), axis=1)
        values = np.zeros(len(it), dtype=np.int64)
        values[inside] = data[tensor.name][tuple(idx[inside].T)]
        product *= values
    out = kernel.output
    result = np.zeros(out.shape, dtype=np.int64)
    oidx = it @ np.array(out.matrix, dtype=np.int64).T + np.array(out.bias, dtype=np.int64)
    np.add.at(result, tuple(oidx.T), product)
    return wrap_signed(result, acc_bits)


def outputs_computed(kernel: Kernel) -> int:
    """How many output elements the iteration domain writes (a tile at an offset writes a window)."""
    it = np.indices([d.bound for d in kernel.dims]).reshape(len(kernel.dims), -1).T
    out = kernel.output
    oidx = it @ np.array(out.matrix, dtype=np.int64).T + np.array(out.bias, dtype=np.int64)
    inside = np.all((oidx >= 0) & (oidx < np.array(out.shape)), axis=1)
    return len(np.unique(oidx[inside], axis=0))


def wrap_signed(values: np.ndarray, bits: int) -> np.ndarray:
    mask = (1 << bits) - 1
    v = np.asarray(values, dtype=np.int64) & mask if bits < 64 else np.asarray(values, dtype=np.int64)
    if bits < 64:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def random_operands(kernel: Kernel, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        t.name: rng.integers(-(1 << (t.bits - 1)), 1 << (t.bits - 1), size=t.shape, dtype=np.int64)
        for t in kernel.inputs
    }
