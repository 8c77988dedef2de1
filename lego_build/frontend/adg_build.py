"""Build the ADG of one spatial dataflow (seed 004 ch. 4: eq. 4.1-4.2 then 4.5)."""
from __future__ import annotations

from lego_build.ir.adg import ADG, Link, TensorNet
from lego_build.ir.workload import Kernel

from .mst import spanning_forest
from .reuse import direct_links, spatial_matrix


def build_adg(kernel: Kernel, arch) -> ADG:
    shape = (arch.rows, arch.cols)
    spatial = tuple(arch.spatial)
    c = tuple(arch.control_flow)
    m_s = spatial_matrix(kernel, spatial)
    fus = tuple((r, q) for r in range(shape[0]) for q in range(shape[1]))
    fu_set = set(fus)
    nets = []
    for tensor in kernel.tensors:
        vectors, _ = direct_links(tensor, m_s, c, arch.d_s)
        candidates = tuple(
            Link(s, tuple(a + b for a, b in zip(s, v.ds)), v.delay)
            for v in vectors for s in fus
            if tuple(a + b for a, b in zip(s, v.ds)) in fu_set
        )
        links, ports = spanning_forest(fus, candidates, reverse=tensor.role == "out")
        bits = arch.acc_bits if tensor.role == "out" else arch.operand_bits
        nets.append(TensorNet(tensor.name, tensor.role, bits, tuple((v.ds, v.delay) for v in vectors), links, ports))
    return ADG(
        kernel=kernel.name,
        dims=tuple(d.name for d in kernel.dims),
        reduction_dims=tuple(kernel.dims[d].name for d in kernel.reduction_dims),
        shape=shape,
        spatial=spatial,
        control_flow=c,
        fu=arch.fu,
        operand_bits=arch.operand_bits,
        acc_bits=arch.acc_bits,
        buffer_depth=arch.buffer_depth,
        nets=tuple(nets),
    )
