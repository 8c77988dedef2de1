"""Host-side data layout and configuration words for one mapped layer.

For an input tensor, bank ``lane`` (the data node on FU ``s``) holds at address
``sum_l stride_l t_l`` the element FU ``s`` uses at temporal point ``t``:
``d = M_{I->D} (M_T t + M_S s) + b`` (seed 004 eq. 3.1, 3.4); out-of-range
indices (padding, edge tiles) hold zero. Strides are dense over the levels the
tensor depends on, innermost fastest. The output is read back with the same map.
FIFO groups (delay links) are configured per layer by :func:`fifo_steps`.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from lego_build.errors import StageError
from lego_build.ir import outshare
from lego_build.ir.adg import ADG
from lego_build.ir.dataflow import Dataflow
from lego_build.ir.host import HostMap
from lego_build.ir.mapping import Mapping
from lego_build.ir.workload import Kernel
from lego_build.mapping.sim_tile import strides


def used_ports(net, dataflow: str) -> list[tuple[int, tuple[int, ...]]]:
    """``(lane, FU)`` of the data nodes ``dataflow`` uses (all of them in a single-dataflow design)."""
    users = net.port_dataflows or [()] * len(net.ports)
    return [(lane, s) for lane, (s, dfs) in enumerate(zip(net.ports, users)) if not dfs or dataflow in dfs]


def config_words(hm: HostMap, kernel: Kernel, mapping: Mapping, dataflow: str = "",
                 adg: ADG | None = None) -> list[tuple[int, int]]:
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
        for l, st in enumerate(strides(kernel, mapping, t)):
            words.append((hm.stride_reg(ti, l), int(st) & amask))
    if hm.dataflows:
        words.append((hm.df_reg, hm.dataflows.index(dataflow)))
    if hm.shifts:
        if adg is None:
            raise StageError("a design with FIFOs needs its ADG to configure them")
        df = adg.dataflow(dataflow) if dataflow else adg.dataflows[0]
        for k, shift in enumerate(hm.shifts):
            t = fifo_steps(kernel, mapping, adg, df, shift, hm.fifo_capacities[k])
            words += fifo_registers(hm, k, bounds, t)
    return words


def fifo_registers(hm: HostMap, k: int, bounds: list[int], t: list[int] | None) -> list[tuple[int, int]]:
    """Depth and per-level index window of FIFO group ``k``; an empty window when unusable."""
    if t is None:  # never valid: every destination reads its fallback bank
        return [(hm.fifo_depth_reg(k), 1)] + [
            w for l, b in enumerate(bounds)
            for w in ((hm.fifo_lo_reg(k, l), 1 if l == 0 else 0), (hm.fifo_hi_reg(k, l), 0 if l == 0 else b - 1))]
    words = [(hm.fifo_depth_reg(k), delay_cycles(bounds, t))]
    for l, (b, tl) in enumerate(zip(bounds, t)):
        words += [(hm.fifo_lo_reg(k, l), max(0, tl)), (hm.fifo_hi_reg(k, l), b - 1 + min(0, tl))]
    return words


def delay_cycles(bounds: list[int], t: list[int]) -> int:
    """Eq. 3.5: cycles between time steps ``T - t`` and ``T`` (one step per cycle)."""
    return sum(tl * prod(bounds[l + 1:]) for l, tl in enumerate(t))


def fifo_steps(kernel: Kernel, mapping: Mapping, adg: ADG, dataflow: Dataflow, shift: tuple[int, ...],
               capacity: int) -> list[int] | None:
    """Loop-step displacement ``t`` that realises iteration ``shift`` under ``mapping``, or None.

    Each shifted dim moves on its innermost loop. The FIFO group is usable only if
    ``t`` is in the future by at most ``capacity`` cycles and, for every delay link of
    the group in this dataflow, the source's element at ``T - t`` is the destination's
    element at ``T`` with this layer's index maps (a strided conv breaks the reference
    kernel's links: the destinations then read memory)."""
    levels = len(mapping.temporal)
    t = [0] * levels
    for dim, delta in zip(adg.dims, shift):
        if not delta:
            continue
        at = [l for l, lp in enumerate(mapping.temporal) if lp.dim == dim]
        if not at:
            return None
        loop = mapping.temporal[at[-1]]
        if delta % loop.stride or abs(delta // loop.stride) >= loop.bound:
            return None
        t[at[-1]] = delta // loop.stride
    w = delay_cycles([lp.bound for lp in mapping.temporal], t)
    if not 0 < w <= capacity:
        return None
    here, earlier = np.zeros((1, levels), dtype=np.int64), -np.array([t], dtype=np.int64)
    for net in adg.nets:
        for lk in net.links:
            if lk.kind == "delay" and lk.shift == shift and dataflow.name in lk.dataflows:
                a = _element_index(kernel, mapping, net.tensor, here, dataflow.to_virtual(lk.dst))
                b = _element_index(kernel, mapping, net.tensor, earlier, dataflow.to_virtual(lk.src))
                if not np.array_equal(a, b):
                    return None
    return t


def _points(mapping: Mapping) -> np.ndarray:
    bounds = [lp.bound for lp in mapping.temporal]
    return np.indices(bounds).reshape(len(bounds), -1).T  # (steps, levels), lexicographic


def _iterations(kernel: Kernel, mapping: Mapping, t: np.ndarray, s: tuple[int, ...]) -> np.ndarray:
    """Iteration points (eq. 3.4) of FU ``s`` (virtual coordinates) at temporal points ``t``."""
    it = np.zeros((t.shape[0], len(kernel.dims)), dtype=np.int64)
    for lv, loop in enumerate(mapping.temporal):
        it[:, kernel.dim_index(loop.dim)] += loop.stride * t[:, lv]
    for (dim, _), stride, sv in zip(mapping.spatial, mapping.spatial_strides(), s):
        it[:, kernel.dim_index(dim)] += stride * sv
    return it


def _element_index(kernel: Kernel, mapping: Mapping, tensor: str, t: np.ndarray, s: tuple[int, ...]) -> np.ndarray:
    access = kernel.tensor(tensor)
    it = _iterations(kernel, mapping, t, s)
    return it @ np.array(access.matrix, dtype=np.int64).T + np.array(access.bias, dtype=np.int64)


@dataclass(frozen=True)
class BankImage:
    tensor: str
    lane: int
    words: np.ndarray  # int64 values by address


def input_banks(kernel: Kernel, mapping: Mapping, adg: ADG, dataflow: Dataflow, data: dict[str, np.ndarray],
                depth) -> list[BankImage]:
    """Bank images of every input; ``depth``: words per bank, or a function of the tensor's name."""
    t = _points(mapping)
    images = []
    for tensor in kernel.inputs:
        addr = t @ strides(kernel, mapping, tensor.name)
        size = int(addr.max()) + 1
        have = depth(tensor.name) if callable(depth) else depth
        if size > have:
            raise StageError(f"tensor {tensor.name} needs {size} words per bank; its banks hold {have} "
                             "(arch.buffer_depth, or arch.onchip_kb)")
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


def output_reads(kernel: Kernel, mapping: Mapping, adg: ADG,
                 dataflow: Dataflow) -> list[tuple[int, int, tuple[int, ...]]]:
    """``(lane, addr, element index)`` of every real output element (lane: its port; a shared
    output lane's bank and row: :func:`bank_reads`).

    Only iteration points inside the loop bounds count: an FU past the edge of a dim
    (e.g. output channel 1 of a depthwise conv, whose element index ``g + oc`` is
    another group's channel) computes nothing real."""
    out = kernel.output
    t = _points(mapping)
    addr = t @ strides(kernel, mapping, out.name)
    kept = [i for i in range(len(kernel.dims)) if i not in kernel.reduction_dims]
    bounds = np.array([kernel.dims[i].bound for i in kept], dtype=np.int64)
    lanes, addrs, elems = [], [], []
    for lane, s in used_ports(adg.net(out.name), dataflow.name):
        v = dataflow.to_virtual(s)
        idx = _element_index(kernel, mapping, out.name, t, v)
        it = _iterations(kernel, mapping, t, v)[:, kept]
        inside = np.all((idx >= 0) & (idx < np.array(out.shape)), axis=1) & np.all((it >= 0) & (it < bounds), axis=1)
        lanes.append(np.full(int(inside.sum()), lane, dtype=np.int64))
        addrs.append(addr[inside])
        elems.append(idx[inside])
    if not lanes:
        return []
    lane_of, addr_of, elem_of = np.concatenate(lanes), np.concatenate(addrs), np.concatenate(elems)
    # one read per (lane, address), sorted by both; where several points write an address the
    # last one in iteration order is the element it holds at the end
    key = lane_of * (int(addr_of.max(initial=0)) + 1) + addr_of
    _, first_from_end = np.unique(key[::-1], return_index=True)
    last = len(key) - 1 - first_from_end
    return [(int(lane_of[i]), int(addr_of[i]), tuple(int(x) for x in elem_of[i])) for i in last]


def bank_reads(adg: ADG, dataflow: Dataflow, reads: list) -> list[tuple[int, int, tuple[int, ...]]]:
    """:func:`output_reads` at the banks the host port reads: a port's word in its shared output
    lane's bank row (:func:`lego_build.ir.outshare.physical`); the same reads without sharing."""
    net = next(n for n in adg.nets if n.role == "out")
    if not net.lanes:
        return reads
    pack = net.packs[[d.name for d in adg.dataflows].index(dataflow.name)]
    return [(*outshare.physical(net.lanes, pack, lane, addr), idx) for lane, addr, idx in reads]


def _rows(kernel: Kernel, mapping: Mapping, tensor: str) -> np.ndarray:
    """The temporal points of the levels ``tensor`` depends on (the others at 0), in address
    order: row ``r`` of the tensor's image is point ``r`` (strides are dense over those levels)."""
    keep = set(mapping.tensor_levels(kernel, tensor))
    bounds = [lp.bound if lv in keep else 1 for lv, lp in enumerate(mapping.temporal)]
    return np.indices(bounds).reshape(len(bounds), -1).T


def _lane_shift(kernel: Kernel, mapping: Mapping, s: tuple[int, ...]) -> np.ndarray:
    """The iteration offset of FU ``s`` (virtual coordinates): eq. 3.4's ``M_S s``."""
    shift = np.zeros(len(kernel.dims), dtype=np.int64)
    for (dim, _), stride, sv in zip(mapping.spatial, mapping.spatial_strides(), s):
        shift[kernel.dim_index(dim)] += stride * sv
    return shift


def image_lanes(kernel: Kernel, mapping: Mapping, adg: ADG, dataflow: Dataflow, tensor: str,
                data: np.ndarray, lanes: int) -> list[np.ndarray]:
    """Per lane, the words of input ``tensor``'s image under ``mapping`` (what
    :func:`input_banks` puts in the banks, computed over the tensor's own rows only and with
    one affine offset per lane, so a whole layer of a real network takes seconds)."""
    t = _rows(kernel, mapping, tensor)
    access = kernel.tensor(tensor)
    matrix = np.array(access.matrix, dtype=np.int64)
    base = _iterations(kernel, mapping, t, (0,) * len(mapping.spatial)) @ matrix.T + np.array(access.bias)
    shape = np.array(access.shape, dtype=np.int64)
    flat = np.asarray(data).reshape(-1)
    out = [np.zeros(len(t), dtype=np.int64) for _ in range(lanes)]
    for lane, s in used_ports(adg.net(tensor), dataflow.name):
        idx = base + matrix @ _lane_shift(kernel, mapping, dataflow.to_virtual(s))
        inside = np.all((idx >= 0) & (idx < shape), axis=1)
        out[lane][inside] = flat[np.ravel_multi_index(tuple(idx[inside].T), tuple(shape))]
    return out


def image_reads(kernel: Kernel, mapping: Mapping, adg: ADG, dataflow: Dataflow) -> np.ndarray:
    """``(row, lane, flat element index)`` of every real output element in the output's image:
    :func:`output_reads` as arrays, over the output's own rows (the reduction levels at 0)."""
    out = kernel.output
    t = _rows(kernel, mapping, out.name)
    matrix = np.array(out.matrix, dtype=np.int64)
    it0 = _iterations(kernel, mapping, t, (0,) * len(mapping.spatial))
    kept = [i for i in range(len(kernel.dims)) if i not in kernel.reduction_dims]
    bounds = np.array([kernel.dims[i].bound for i in kept], dtype=np.int64)
    shape = np.array(out.shape, dtype=np.int64)
    rows = np.arange(len(t), dtype=np.int64)
    parts = []
    for lane, s in used_ports(adg.net(out.name), dataflow.name):
        it = it0 + _lane_shift(kernel, mapping, dataflow.to_virtual(s))
        idx = it @ matrix.T + np.array(out.bias, dtype=np.int64)
        inside = np.all((idx >= 0) & (idx < shape), axis=1) & np.all((it[:, kept] >= 0) & (it[:, kept] < bounds),
                                                                      axis=1)
        flat = np.ravel_multi_index(tuple(idx[inside].T), tuple(shape))
        parts.append(np.stack([rows[inside], np.full(int(inside.sum()), lane, dtype=np.int64), flat], axis=1))
    return np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
