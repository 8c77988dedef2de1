"""NumPy golden model and test data.

The golden model computes ``out[d_out] += prod(in[d_in])`` over the whole iteration
domain (seed 004 §3.1, eq. 3.1) in *exact* integer arithmetic: it never wraps to the
accumulator width, so a datapath too narrow for a layer shows up as wrong outputs
instead of agreeing with the bug. Only a design built with ``arch.overflow=wrap`` (the
user accepts two's-complement wrap-around on purpose) compares against
:func:`wrap_signed` of the exact result. Widths are checked before any build
(:func:`lego_build.analysis.widths.required_acc_bits`).

Test data (``target.data``): ``random`` (seeded, uniform over the operand range) and
the extreme patterns that reach a datapath's worst cases: ``min`` (every operand the
most negative value: the largest positive sums), ``max`` (every operand the largest
value), ``mixed`` (the first input at its minimum, the others at their maximum: the
most negative sums) and ``alternating`` (minimum and maximum alternating element by
element, each tensor starting on the other value: toggles every operand bit); or
``file`` (``target.data_file``, see :func:`file_operands`).
"""
from __future__ import annotations

import zipfile
from itertools import product
from math import prod
from pathlib import Path

import numpy as np

from lego_build.analysis.widths import worst_case_sum
from lego_build.fulang.kinds import FU, MAC
from lego_build.ir.testdata import GENERATED
from lego_build.ir.testdata import GOLDEN_CHUNK as CHUNK
from lego_build.ir.workload import Kernel


def golden(kernel: Kernel, data: dict[str, np.ndarray], fu: FU = MAC) -> np.ndarray:
    """Exact outputs of ``kernel`` on ``data``: int64, or Python ints when a sum can pass 62 bits.

    The iteration domain is walked in blocks of at most
    :data:`lego_build.ir.testdata.GOLDEN_CHUNK` points (memory stays bounded whatever the
    tile): each input is zero-padded by the most its index map reaches outside the tensor
    (padding reads zero), gathered through flat indices built by broadcasting, multiplied (or
    given to ``fu``'s own product, :attr:`lego_build.fulang.kinds.FU.product`), summed over the
    block's reduction axes and scattered into the output."""
    bits = max(t.bits for t in kernel.inputs)
    if worst_case_sum(kernel, bits, fu.bound(bits, len(kernel.inputs))).bit_length() > 62:
        return _golden_points(kernel, data, object, fu)
    bounds = [d.bound for d in kernel.dims]
    out = kernel.output
    reduction = set(kernel.reduction_dims)
    gathers = [_flat_map(t, bounds, np.asarray(data[t.name], dtype=np.int64)) for t in kernel.inputs]
    result = np.zeros(out.size, dtype=np.int64)
    ocoef, obase, _ = _flat_map(out, bounds, None)
    for ranges in _blocks(bounds):
        vs = [values[_broadcast_index(coef, base, ranges)] for coef, base, values in gathers]
        product = _products(vs, fu)
        keep = [d for d in range(len(bounds)) if d not in reduction]
        summed = product.sum(axis=tuple(sorted(reduction)), keepdims=True) if reduction else product
        oidx = _broadcast_index([c if d in keep else 0 for d, c in enumerate(ocoef)], obase,
                                [r if d in keep else r[:1] for d, r in enumerate(ranges)])
        np.add.at(result, np.broadcast_to(oidx, summed.shape).ravel(), summed.ravel())
    return result.reshape(out.shape)


def _products(values: list[np.ndarray], fu: FU) -> np.ndarray:
    """One product per point: ``fu``'s own, or the operands' product (a padded operand is zero)."""
    if fu.product is not None:
        return fu.product(values)
    out = values[0]
    for v in values[1:]:
        out = out * v
    return out


def _flat_map(t, bounds: list[int], values: np.ndarray | None):
    """Per-dim coefficients and base of tensor ``t``'s flat index in its zero-padded copy, and that copy."""
    lo = [b + sum(min(0, m) * (n - 1) for m, n in zip(row, bounds)) for row, b in zip(t.matrix, t.bias)]
    hi = [b + sum(max(0, m) * (n - 1) for m, n in zip(row, bounds)) for row, b in zip(t.matrix, t.bias)]
    pad = [(max(0, -low), max(0, high - (size - 1))) for low, high, size in zip(lo, hi, t.shape)]
    padded_shape = [size + a + b for size, (a, b) in zip(t.shape, pad)]
    strides = [prod(padded_shape[i + 1:]) for i in range(len(padded_shape))]
    coef = [sum(row[d] * s for row, s in zip(t.matrix, strides)) for d in range(len(bounds))]
    base = sum((b + a) * s for b, (a, _), s in zip(t.bias, pad, strides))
    padded = None
    if values is not None:
        padded = np.pad(values.reshape(t.shape), pad).ravel() if any(a or b for a, b in pad) else values.ravel()
    return coef, base, padded


def _broadcast_index(coef, base: int, ranges) -> np.ndarray:
    """``base + sum_d coef_d * i_d`` over the block, one broadcast axis per dim."""
    n = len(ranges)
    index = np.full([1] * n, base, dtype=np.int64)
    for d, (c, r) in enumerate(zip(coef, ranges)):
        if c:
            shape = [1] * n
            shape[d] = len(r)
            index = index + c * np.asarray(r, dtype=np.int64).reshape(shape)
    return np.broadcast_to(index, [len(r) for r in ranges])


def _blocks(bounds: list[int]):
    """Index ranges per dim covering the domain in blocks of at most ``CHUNK`` points: whole inner
    dims, a slice of one dim, single values of the outer ones."""
    n = len(bounds)
    k = n
    while k > 0 and prod(bounds[k - 1:]) <= CHUNK:
        k -= 1
    if k == 0:
        yield [range(b) for b in bounds]
        return
    inner = prod(bounds[k:])
    step = max(1, CHUNK // inner)
    for outer in product(*(range(b) for b in bounds[:k - 1])):
        for start in range(0, bounds[k - 1], step):
            yield ([range(i, i + 1) for i in outer] + [range(start, min(start + step, bounds[k - 1]))]
                   + [range(b) for b in bounds[k:]])


def _golden_points(kernel: Kernel, data: dict[str, np.ndarray], dtype, fu: FU = MAC) -> np.ndarray:
    """The same sums point by point in ``dtype`` (Python ints: sums wider than int64)."""
    bounds = tuple(d.bound for d in kernel.dims)
    out = kernel.output
    result = np.zeros(out.shape, dtype=dtype)
    inputs = [(np.array(t.matrix, dtype=np.int64).T, np.array(t.bias, dtype=np.int64), np.array(t.shape),
               np.asarray(data[t.name]).astype(dtype)) for t in kernel.inputs]
    omat, obias = np.array(out.matrix, dtype=np.int64).T, np.array(out.bias, dtype=np.int64)
    total = prod(bounds)
    for start in range(0, total, CHUNK):
        flat = np.arange(start, min(start + CHUNK, total), dtype=np.int64)
        it = np.stack(np.unravel_index(flat, bounds), axis=1)
        vs = []
        for mat, bias, shape, values_of in inputs:
            idx = it @ mat + bias
            inside = np.all((idx >= 0) & (idx < shape), axis=1)
            values = np.zeros(len(it), dtype=dtype)
            values[inside] = values_of[tuple(idx[inside].T)]
            vs.append(values)
        terms = np.asarray(_products(vs, fu), dtype=dtype)
        np.add.at(result, tuple((it @ omat + obias).T), terms)
    return result


def outputs_computed(kernel: Kernel) -> int:
    """How many output elements the iteration domain writes (a tile at an offset writes a window)."""
    it = np.indices([d.bound for d in kernel.dims]).reshape(len(kernel.dims), -1).T
    out = kernel.output
    oidx = it @ np.array(out.matrix, dtype=np.int64).T + np.array(out.bias, dtype=np.int64)
    inside = np.all((oidx >= 0) & (oidx < np.array(out.shape)), axis=1)
    written = np.zeros(out.shape, dtype=bool)
    written[tuple(oidx[inside].T)] = True
    return int(written.sum())


def wrap_signed(values: np.ndarray, bits: int) -> np.ndarray:
    """Two's-complement wrap-around of integers to ``bits`` bits (what a ``bits``-bit register keeps)."""
    arr = np.asarray(values)
    if arr.dtype == object:
        mask, half = (1 << bits) - 1, 1 << (bits - 1)
        return np.array([((int(v) & mask) ^ half) - half for v in arr.ravel()], dtype=np.int64).reshape(arr.shape)
    v = arr.astype(np.int64)
    if bits >= 64:
        return v
    v = v & ((1 << bits) - 1)
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v)


def random_operands(kernel: Kernel, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        t.name: rng.integers(-(1 << (t.bits - 1)), 1 << (t.bits - 1), size=t.shape, dtype=np.int64)
        for t in kernel.inputs
    }


def pattern_operands(kernel: Kernel, pattern: str, seed: int = 0) -> dict[str, np.ndarray]:
    """Operands of one generated pattern (see the module docstring) at each input's width."""
    if pattern == "random":
        return random_operands(kernel, seed)
    data = {}
    for i, t in enumerate(kernel.inputs):
        lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
        if pattern == "min":
            data[t.name] = np.full(t.shape, lo, dtype=np.int64)
        elif pattern == "max":
            data[t.name] = np.full(t.shape, hi, dtype=np.int64)
        elif pattern == "mixed":
            data[t.name] = np.full(t.shape, lo if i == 0 else hi, dtype=np.int64)
        elif pattern == "alternating":
            flat = (np.arange(prod(t.shape), dtype=np.int64) + i) % 2
            data[t.name] = np.where(flat == 0, lo, hi).reshape(t.shape)
        else:
            raise ValueError(f"unknown test-data pattern {pattern!r}; choose from {', '.join(GENERATED)}")
    return data


def load_data_file(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a ``.npz`` test-data file; ``ValueError`` (one line, names the file) if unreadable."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {key: np.asarray(npz[key]) for key in npz.files}
    except FileNotFoundError:
        raise ValueError(f"target.data_file={path}: no such file; give an .npz file of integer arrays") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"target.data_file={path}: not a readable .npz file ({str(exc).splitlines()[0]}); "
                         "write it with numpy.savez") from None
    for key, arr in arrays.items():
        if arr.dtype.kind not in "iub":
            raise ValueError(f"target.data_file={path}: array {key!r} holds {arr.dtype} values; "
                             "give integer arrays (the operands' fixed-point values)")
    return arrays


def file_operands(kernel: Kernel, arrays: dict[str, np.ndarray], layer: str,
                  origin: dict[str, tuple[int, ...]], path: str) -> dict[str, np.ndarray]:
    """A tile's operands cut from a test-data file.

    Each input tensor comes from the array named ``<layer>/<tensor>`` (or, for every
    layer, ``<tensor>``), holding the whole tensor as the array runs the layer (a conv on a
    GEMM array: the im2col matrix ``A[g, M, K]``); the tile takes the window it touches
    (``origin`` per tensor). Values must fit the operand width."""
    data = {}
    for t in kernel.inputs:
        key = next((k for k in (f"{layer}/{t.name}", t.name) if k in arrays), None)
        if key is None:
            raise ValueError(f"target.data_file={path}: no array {layer}/{t.name} or {t.name} for layer {layer}; "
                             f"add it (numpy.savez(..., **{{'{layer}/{t.name}': ...}}))")
        arr = arrays[key]
        start = origin.get(t.name, (0,) * len(t.shape))
        need = tuple(s + n for s, n in zip(start, t.shape))
        if arr.ndim != len(t.shape) or any(a < n for a, n in zip(arr.shape, need)):
            raise ValueError(f"target.data_file={path}: array {key!r} has shape {tuple(arr.shape)}; layer {layer} "
                             f"needs {len(t.shape)} dims of at least {need}; write the whole tensor")
        lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
        window = arr[tuple(slice(s, s + n) for s, n in zip(start, t.shape))].astype(np.int64)
        if window.size and (window.min() < lo or window.max() > hi):
            raise ValueError(f"target.data_file={path}: array {key!r} has values outside the {t.bits}-bit "
                             f"operand range [{lo}, {hi}]; quantise them first")
        data[t.name] = window
    return data
