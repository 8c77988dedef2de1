"""Kernel families (``arch.family``): the loop nests an array can be generated for.

Each family fixes its dims (in IR order; they name ``arch.dataflows.*.spatial``)
and the dims it accumulates over (the output does not depend on them). The
kernels themselves, as affine data mappings (seed 004 eq. 3.1), are built by
:mod:`lego_build.analysis.kernels`, one builder per family.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    name: str
    equation: str
    dims: tuple[str, ...]
    reduction: tuple[str, ...]

    @property
    def inputs(self) -> int:
        """Operands of one product (the factors right of ``+=``)."""
        return self.equation.partition("+=")[2].count(" * ") + 1


#: every kernel family; a new one is a :class:`Family` here plus its builder in analysis/kernels.py
FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("gemm", "Y[b,m,n] += A[b,m,k] * B[b,k,n]", ("b", "m", "n", "k"), ("k",)),
    Family("conv2d", "Y[n,g*OC+oc,oh,ow] += X[n,g*IC+ic,sh*oh+dh*kh-pt,sw*ow+dw*kw-pl] * W[g*OC+oc,ic,kh,kw]",
           ("n", "g", "oc", "ic", "oh", "ow", "kh", "kw"), ("ic", "kh", "kw")),
    Family("mttkrp", "D[i,j] += A[i,k,l] * B[k,j] * C[l,j]", ("i", "j", "k", "l"), ("k", "l")),
    Family("ttmc", "Y[i,j,k] += X[i,l,m] * B[l,j] * C[m,k]", ("i", "j", "k", "l", "m"), ("l", "m")),
)}
