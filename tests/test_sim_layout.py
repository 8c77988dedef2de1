"""The nested-base address generator of the controller (and of the DMA walkers) equals the
affine address sum_l stride_l t_l, for full tiles and for partial last tiles whose bounds
shrink while the strides stay those of the full tile."""
import itertools

import numpy as np

from lego_build.analysis.kernels import gemm
from lego_build.ir.mapping import Loop, Mapping
from lego_build.sim.layout import strides


def _walk(bounds, stride):
    """What the generated controller does: bases per level; the innermost advancing level
    adds its stride and every inner base takes the new value."""
    base, out = [0] * len(bounds), []
    for t in itertools.product(*[range(b) for b in bounds]):
        out.append(base[-1])
        for lv in reversed(range(len(bounds))):
            if t[lv] != bounds[lv] - 1:
                nxt = base[lv] + int(stride[lv])
                base[lv:] = [nxt] * (len(bounds) - lv)
                break
    return out


def test_nested_bases_reproduce_affine_addresses_for_every_loop_order():
    kernel = gemm(10, 7, 5)
    loops = {"b": Loop("b", 1, 1), "m": Loop("m", 3, 4), "n": Loop("n", 2, 4), "k": Loop("k", 5, 1)}
    for order in itertools.permutations("bmnk"):
        mapping = Mapping((("m", 4), ("n", 4)), tuple(loops[d] for d in order))
        bounds = [lp.bound for lp in mapping.temporal]
        for tensor in "ABY":
            st = strides(kernel, mapping, tensor)
            expect = [int(np.dot(st, t)) for t in itertools.product(*[range(b) for b in bounds])]
            assert _walk(bounds, st) == expect
            assert max(expect) + 1 == mapping.footprint(kernel, tensor)
            # a partial tile: smaller bounds, the full tile's strides, addresses still affine
            part = [max(1, b - 1) for b in bounds]
            expect = [int(np.dot(st, t)) for t in itertools.product(*[range(b) for b in part])]
            assert _walk(part, st) == expect
