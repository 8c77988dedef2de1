"""Reuse table of a kernel (seed 000 Table 1, seed 001 Table 3.1).

For tensor ``T`` and iteration dim ``d``: *full* reuse when ``T`` does not depend on
``d`` (column ``d`` of ``M_{I->D}`` is zero); *partial* reuse when ``d`` enters a
data row together with another dim (a sliding window such as ``ih = oh + kh``);
*none* otherwise.
"""
from __future__ import annotations

from lego_build.ir.workload import Kernel, TensorAccess


def reuse_kind(tensor: TensorAccess, dim: int) -> str:
    rows = [row for row in tensor.matrix if row[dim] != 0]
    if not rows:
        return "full"
    if any(sum(1 for v in row if v != 0) > 1 for row in rows):
        return "partial"
    return "none"


def reuse_table(kernel: Kernel) -> dict[str, dict[str, str]]:
    return {t.name: {d.name: reuse_kind(t, i) for i, d in enumerate(kernel.dims)} for t in kernel.tensors}
