"""The incremental address generator (jumps) equals the affine address sum_l stride_l t_l."""
import itertools

import numpy as np

from lego_build.analysis.kernels import gemm
from lego_build.ir.mapping import Loop, Mapping
from lego_build.sim.layout import jumps, strides


def _walk(bounds, jump):
    """What the generated controller does: add the jump of the innermost advancing level."""
    addr, out = 0, []
    for t in itertools.product(*[range(b) for b in bounds]):
        out.append(addr)
        for lv in reversed(range(len(bounds))):
            if t[lv] != bounds[lv] - 1:
                addr += jump[lv]
                break
    return out


def test_jumps_reproduce_affine_addresses_for_every_loop_order():
    kernel = gemm(10, 7, 5)
    loops = {"b": Loop("b", 1, 1), "m": Loop("m", 3, 4), "n": Loop("n", 2, 4), "k": Loop("k", 5, 1)}
    for order in itertools.permutations("bmnk"):
        mapping = Mapping((("m", 4), ("n", 4)), tuple(loops[d] for d in order))
        bounds = [lp.bound for lp in mapping.temporal]
        for tensor in "ABY":
            st = strides(kernel, mapping, tensor)
            expect = [int(np.dot(st, t)) for t in itertools.product(*[range(b) for b in bounds])]
            assert _walk(bounds, jumps(bounds, st)) == expect
            assert max(expect) + 1 == mapping.footprint(kernel, tensor)
