"""Build the workload IR from a validated workload config (parse -> validate -> build)."""
from __future__ import annotations

from typing import Any

from lego_build.analysis.kernels import conv2d, gemm, mttkrp, ttmc
from lego_build.errors import ConfigError
from lego_build.ir.workload import Layer, Workload, conv_op


def workload_from_config(wl: Any) -> Workload:
    """The workload's layers; model-file problems raise :class:`ConfigError` naming the file or node."""
    kind = wl.kind
    if kind == "gemm":
        return Workload(wl.name, (Layer(wl.name, "gemm", gemm(wl.M, wl.N, wl.K, wl.batch, wl.bits)),))
    if kind == "conv2d":
        kernel = conv2d(wl.batch, wl.in_ch, wl.out_ch, wl.in_h, wl.in_w, wl.kh, wl.kw, wl.stride, wl.pad,
                        wl.dilation, wl.groups, wl.bits)
        return Workload(wl.name, (Layer(wl.name, conv_op(kernel), kernel),))
    if kind == "mttkrp":
        return Workload(wl.name, (Layer(wl.name, "mttkrp", mttkrp(wl.I, wl.J, wl.K, wl.L, wl.bits)),))
    if kind == "ttmc":
        return Workload(wl.name, (Layer(wl.name, "ttmc", ttmc(wl.I, wl.J, wl.K, wl.L, wl.M, wl.bits)),))
    if kind == "attention":
        return Workload(wl.name, attention_layers(wl.name, wl.batch, wl.heads, wl.seq_q, wl.seq_kv, wl.head_dim,
                                                  wl.bits))
    if kind == "network":
        from lego_build.analysis.networks import NETWORKS, network

        if wl.network not in NETWORKS:
            raise ConfigError(f"workload.network={wl.network!r}: unknown network; choose one of: "
                              f"{', '.join(sorted(NETWORKS))}")
        return Workload(wl.name, network(wl.network, wl.batch, wl.bits))
    from lego_build.analysis.importers import IMPORTERS, load_model

    if kind in IMPORTERS:
        return load_model(kind, wl.path, wl.name, wl.batch, wl.bits, wl.symbols)
    raise ConfigError(f"workload.kind={kind!r}: unknown workload kind; choose a workload preset "
                      "(doit build workload=<name>, see conf/workload)")


def attention_layers(name: str, batch: int, heads: int, seq_q: int, seq_kv: int, head_dim: int,
                     bits: int, count: int = 1) -> tuple[Layer, ...]:
    """``S = Q K^T`` and ``O = P V`` as batched matmuls over ``batch * heads``; softmax on the PPU."""
    bh = batch * heads
    return (
        Layer(f"{name}.qk", "attention_qk", gemm(seq_q, seq_kv, head_dim, bh, bits), count=count),
        Layer(f"{name}.softmax", "softmax", None, bh * seq_q * seq_kv, count),
        Layer(f"{name}.av", "attention_av", gemm(seq_q, head_dim, seq_kv, bh, bits), count=count),
    )
