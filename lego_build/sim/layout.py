"""Host-side data layout and configuration words for one mapped layer.

For an input tensor, bank ``lane`` (the data node on FU ``s``) holds at address
``sum_l stride_l t_l`` the element FU ``s`` uses at temporal point ``t``:
``d = M_{I->D} (M_T t + M_S s) + b`` (seed 004 eq. 3.1, 3.4); out-of-range
indices (padding, edge tiles) hold zero. Strides are dense over the levels the
tensor depends on, innermost fastest. The output is read back with the same map.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lego_build.emit.host import HostMap
from lego_build.flow.stages import StageError
from lego_build.ir.adg import ADG
from lego_build.ir.dataflow import Dataflow
from lego_build.ir.mapping import Mapping
from lego_build.ir.workload import Kernel


def used_ports(net, dataflow: str) -> list[tuple[int, tuple[int, ...]]]:
    """``(lane, FU)`` of the data nodes ``dataflow`` uses (all of them in a single-dataflow design)."""
    users = net.port_dataflows or [()] * len(net.ports)
    return [(lane, s) for lane, (s, dfs) in enumerate(zip(net.ports, users)) if not dfs or dataflow in dfs]


def strides(kernel: Kernel, mapping: Mapping, tensor: str) -> np.ndarray:
    levels = set(mapping.tensor_levels(kernel, tensor))
    out = np.zeros(len(mapping.temporal), dtype=np.int64)
    step = 1
    for lv in reversed(range(len(mapping.temporal))):
        if lv in levels:
            out[lv] = step
            step *= mapping.temporal[lv].bound
    return out


def jumps(bounds: list[int], stride: np.ndarray) -> list[int]:
    """Address increment when level ``l`` advances and all inner levels wrap."""
    return [int(stride[l] - sum(stride[j] * (bounds[j] - 1) for j in range(l + 1, len(bounds))))
            for l in range(len(bounds))]


def config_words(hm: HostMap, kernel: Kernel, mapping: Mapping, dataflow: str = "") -> list[tuple[int, int]]:
    if len(mapping.temporal) != hm.levels:
        raise StageError(f"mapping has {len(mapping.temporal)} loop levels, hardware has {hm.levels}")
    reduction = {kernel.dims[d].name for d in kernel.reduction_dims}
    inner = [lp.dim for lp in mapping.temporal[len(mapping.temporal) - hm.reduction_levels:]]
    if set(inner) != reduction:
        raise StageError(f"loop order {[lp.dim for lp in mapping.temporal]} does not end with the reduction "
                         f"loops {sorted(reduction)} that the controller accumulates over")
    bounds = [lp.bound for lp in mapping.temporal]
    limit = 1 << hm.counter_bits
    if max(bounds) > limit:
        raise StageError(f"loop bound {max(bounds)} exceeds the {hm.counter_bits}-bit counters")
    words = [(hm.bound_reg(l), b - 1) for l, b in enumerate(bounds)]
    amask = (1 << hm.addr_bits) - 1
    for ti, t in enumerate(hm.tensors):
        for l, j in enumerate(jumps(bounds, strides(kernel, mapping, t))):
            words.append((hm.jump_reg(ti, l), j & amask))
    if hm.dataflows:
        words.append((hm.df_reg, hm.dataflows.index(dataflow)))
    return words


def _points(mapping: Mapping) -> np.ndarray:
    bounds = [lp.bound for lp in mapping.temporal]
    return np.indices(bounds).reshape(len(bounds), -1).T  # (steps, levels), lexicographic


def _element_index(kernel: Kernel, mapping: Mapping, tensor: str, t: np.ndarray, s: tuple[int, ...]) -> np.ndarray:
    it = np.zeros((t.shape[0], len(kernel.dims)), dtype=np.int64)
    for lv, loop in enumerate(mapping.temporal):
        it[:, kernel.dim_index(loop.dim)] += loop.stride * t[:, lv]
    for (dim, _), stride, sv in zip(mapping.spatial, mapping.spatial_strides(), s):
        it[:, kernel.dim_index(dim)] += stride * sv
    access = kernel.tensor(tensor)
    return it @ np.array(access.matrix, dtype=np.int64).T + np.array(access.bias, dtype=np.int64)


@dataclass(frozen=True)
class BankImage:
    tensor: str
    lane: int
    words: np.ndarray  # int64 values by address


def input_banks(kernel: Kernel, mapping: Mapping, adg: ADG, dataflow: Dataflow, data: dict[str, np.ndarray],
                depth: int) -> list[BankImage]:
    t = _points(mapping)
    images = []
    for tensor in kernel.inputs:
        addr = t @ strides(kernel, mapping, tensor.name)
        size = int(addr.max()) + 1
        if size > depth:
            raise StageError(f"tensor {tensor.name} needs {size} words per bank > arch.buffer_depth={depth}")
        for lane, s in used_ports(adg.net(tensor.name), dataflow.name):
            idx = _element_index(kernel, mapping, tensor.name, t, dataflow.to_virtual(s))
            inside = np.all((idx >= 0) & (idx < np.array(tensor.shape)), axis=1)
            values = np.zeros(len(t), dtype=np.int64)
            values[inside] = data[tensor.name][tuple(idx[inside].T)]
            words = np.zeros(size, dtype=np.int64)
            words[addr] = values
            if not np.array_equal(words[addr], values):
                raise StageError(f"layout of tensor {tensor.name} maps two elements to one address")
            images.append(BankImage(tensor.name, lane, words))
    return images


def output_reads(kernel: Kernel, mapping: Mapping, adg: ADG, dataflow: Dataflow) -> list[tuple[int, int, tuple[int, ...]]]:
    """``(lane, addr, element index)`` of every real output element (padding skipped)."""
    out = kernel.output
    t = _points(mapping)
    addr = t @ strides(kernel, mapping, out.name)
    reads = {}
    for lane, s in used_ports(adg.net(out.name), dataflow.name):
        idx = _element_index(kernel, mapping, out.name, t, dataflow.to_virtual(s))
        inside = np.all((idx >= 0) & (idx < np.array(out.shape)), axis=1)
        for a, d in zip(addr[inside], idx[inside]):
            reads[(lane, int(a))] = tuple(int(v) for v in d)
    return [(lane, a, d) for (lane, a), d in sorted(reads.items())]
