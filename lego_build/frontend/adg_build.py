"""Build the ADG (seed 004 ch. 4): candidates by eq. 4.1-4.4, then eq. 4.5 or the §4.3 merge.

Delay-link destinations get a fallback data node (see :mod:`lego_build.ir.adg`).
"""
from __future__ import annotations

from dataclasses import replace
from math import gcd

from lego_build.analysis.lowering import strided
from lego_build.errors import ConfigError
from lego_build.frontend.dataflow import arch_dataflows
from lego_build.frontend.links import candidate_links
from lego_build.frontend.merge import merge_dataflows
from lego_build.frontend.mst import spanning_forest
from lego_build.frontend.packing import lane_packs
from lego_build.fulang.kinds import FUS
from lego_build.ir.adg import ADG, TensorNet
from lego_build.ir.outshare import count, depth_factor, group_lanes
from lego_build.ir.workload import Kernel


def build_adg(kernel: Kernel, arch) -> ADG:
    """Input buffers are as wide as the FU's operand (``arch.fu``'s widths, else
    ``arch.operand_bits``), the output's as the accumulator."""
    dataflows = arch_dataflows(arch)
    fu = FUS.get(arch.fu)
    operand = {t.name: i for i, t in enumerate(kernel.inputs)}
    fus = tuple((r, c) for r in range(arch.rows) for c in range(arch.cols))
    nets = []
    for tensor in kernel.tensors:
        per_df, solutions = [], {}
        for df in dataflows:
            links, sols = candidate_links(strided(kernel, df.stride), df, tensor.name, df.reach(arch.d_s), arch.d_t)
            per_df.append((df.name, links))
            for s in sols:
                solutions.setdefault((s.ds, s.t), s.w)
        reverse = tensor.role == "out"
        if len(dataflows) == 1:
            name = dataflows[0].name
            kept, ports = spanning_forest(fus, per_df[0][1], reverse)
            kept = tuple(replace(lk, dataflows=(name,)) for lk in kept)
            port_dfs = tuple((name,) for _ in ports)
        else:
            kept, ports, port_dfs = merge_dataflows(fus, per_df, reverse, arch.broadcast)
        if not reverse:
            ports, port_dfs = with_fallback_ports(kept, ports, port_dfs)
        vectors = sorted({(tuple(b - a for a, b in zip(lk.src, lk.dst)), lk.delay)
                          for _, links in per_df for lk in links if lk.kind == "direct"})
        bits = arch.acc_bits if reverse else fu.width(operand[tensor.name], arch.operand_bits)
        lanes = group_lanes(ports, -(-arch.rows // arch.out_lanes)) if reverse and arch.out_lanes else ()
        nets.append(TensorNet(
            tensor.name, tensor.role, bits, tuple(vectors), kept, ports, port_dfs,
            tuple(sorted((ds, t, w) for (ds, t), w in solutions.items())),
            lane_packs(kernel, tensor.name, dataflows, ports, port_dfs),
            lanes if lanes and count(lanes, len(ports)) < len(ports) else (),  # a lane per port: nothing shared
        ))
    return ADG(
        kernel=kernel.name,
        dims=tuple(d.name for d in kernel.dims),
        reduction_dims=tuple(kernel.dims[d].name for d in kernel.reduction_dims),
        shape=(arch.rows, arch.cols),
        dataflows=dataflows,
        control_flow=tuple(arch.control_flow),
        fu=arch.fu,
        operand_bits=arch.operand_bits,
        acc_bits=arch.acc_bits,
        buffer_depth=arch.buffer_depth,
        nets=tuple(nets),
        d_t=arch.d_t,
        ppu=arch.ppu,
        acc_wraps=arch.overflow == "wrap",
        depths=bank_depths(arch, kernel, nets),
    )


def bank_depths(arch, kernel: Kernel, nets) -> tuple[tuple[str, int], ...]:
    """Words per bank half of each tensor: ``arch.onchip_split`` (KB per role, e.g. Gemmini's
    scratchpad for inputs and weights and its accumulator for outputs), else ``arch.onchip_kb``
    split equally (:func:`split_capacity`), else ``arch.buffer_depth`` everywhere (``()``)."""
    # a word per port takes a word of every bank; a shared lane's bank holds depth_factor words per port
    rows = [(n.tensor, 2 * (count(n.lanes, len(n.ports)) * depth_factor(n.lanes) if n.lanes else len(n.ports))
             * n.bits) for n in nets]
    if not arch.onchip_split:
        return split_capacity(arch.onchip_kb, rows) if arch.onchip_kb else ()
    roles = {t.name: ("output" if t.role == "out" else "input" if t is kernel.inputs[0] else "weight")
             for t in kernel.tensors}
    out = []
    for tensor, bits in rows:
        kb = arch.onchip_split[roles[tensor]]
        words = int(kb * 1024 * 8) // bits
        if words < 1:
            raise ConfigError(f"arch.onchip_split.{roles[tensor]}={kb}: holds no word of tensor {tensor}'s banks "
                              f"({bits // 8} B per word in both halves); give at least {bits / 8 / 1024:.3g} KB")
        out.append((tensor, words))
    return tuple(out)


def split_capacity(kb: float, rows: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """Words per bank half of each tensor so that the banks hold exactly ``kb`` KB.

    ``rows``: per tensor, the bits one word of every bank takes in both ping-pong halves
    (2 x lanes x word bits). Each tensor gets an equal share of the capacity, rounded down
    to whole words; the tensor with the narrowest rows takes what is left, so the total is
    exact. A capacity that is not a multiple of the rows' common divisor (an array resized
    from a preset) is rounded down to one. One-line error when a share holds no word."""
    total = round(kb * 1024 * 8)
    if abs(total - kb * 1024 * 8) > 1e-6:
        raise ConfigError(f"arch.onchip_kb={kb}: not a whole number of bytes")
    total -= total % gcd(*[bits for _, bits in rows])
    last = min(range(len(rows)), key=lambda i: (rows[i][1], i))
    depths = {t: max(1, total // len(rows) // bits) for t, bits in rows}
    unit = rows[last][1]
    others = [(t, bits) for i, (t, bits) in enumerate(rows) if i != last]
    left = total - sum(depths[t] * bits for t, bits in others)
    # fewest words taken from the other tensors so that what is left is whole rows of the last:
    # a breadth-first search over the residues modulo its row (each word taken adds its row)
    need = -left % unit
    parent: dict[int, tuple[int, int] | None] = {0: None}
    frontier = [0]
    while frontier and need not in parent:
        nxt = []
        for r in frontier:
            for k, (_, bits) in enumerate(others):
                q = (r + bits) % unit
                if q not in parent:
                    parent[q] = (r, k)
                    nxt.append(q)
        frontier = nxt
    if need in parent:
        r = need
        while parent[r] is not None:
            r, k = parent[r]
            depths[others[k][0]] -= 1
            left += others[k][1]
    if need not in parent or left <= 0 or min(depths.values()) < 1:
        raise ConfigError(f"arch.onchip_kb={kb}: cannot be split exactly over banks of "
                          f"{', '.join(f'{t} {b // 8} B' for t, b in rows)} per word (both halves); "
                          f"use a multiple of {gcd(*[b for _, b in rows]) // 8 or 1} B")
    depths[rows[last][0]] = left // rows[last][1]
    return tuple((t, depths[t]) for t, _ in rows)


def with_fallback_ports(links, ports, port_dfs):
    """Add a data node, in the link's dataflows, at every FU a delay link feeds: the FU reads
    memory whenever the link's source step falls outside the loop nest (window edges)."""
    users = {p: set(d) for p, d in zip(ports, port_dfs)}
    for lk in links:
        if lk.kind == "delay":
            users.setdefault(lk.dst, set()).update(lk.dataflows)
    order = tuple(sorted(users))
    return order, tuple(tuple(sorted(users[p])) for p in order)
