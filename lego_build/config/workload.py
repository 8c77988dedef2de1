"""The ``workload`` group's schemas, one per ``kind``: ``kind`` selects how the workload is built
(lego_build.analysis.from_config.workload_from_config)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict

from omegaconf import MISSING

from lego_build.config.checks import check_choice, check_positive
from lego_build.errors import ConfigError

#: widest operand a workload may declare (``workload.bits``; ``arch.operand_bits`` has the same limit)
MAX_BITS = 32


def _bits(obj: Any) -> None:
    if obj.bits > MAX_BITS:
        raise ConfigError(f"workload.bits={obj.bits}: operands are at most {MAX_BITS} bits; use a narrower precision")


@dataclass
class GemmWorkload:
    """``Y[b, m, n] += A[b, m, k] * B[b, k, n]`` with signed ``bits``-bit operands."""

    name: str = "gemm"
    kind: str = "gemm"
    M: int = 16
    N: int = 16
    K: int = 16
    batch: int = 1
    bits: int = 8

    def __post_init__(self) -> None:
        check_choice("workload", "kind", self.kind, ("gemm",))
        check_positive("workload", self, "M", "N", "K", "batch", "bits")
        _bits(self)


@dataclass
class Conv2dWorkload:
    """``Y[n, k, oh, ow] += X[n, c, s*oh + d*kh - pad, s*ow + d*kw - pad] * W[k, c, kh, kw]``, grouped."""

    name: str = "conv2d"
    kind: str = "conv2d"
    batch: int = 1
    in_ch: int = 16
    out_ch: int = 16
    in_h: int = 14
    in_w: int = 14
    kh: int = 3
    kw: int = 3
    stride: int = 1
    pad: int = 1
    dilation: int = 1
    groups: int = 1
    bits: int = 8

    def __post_init__(self) -> None:
        check_choice("workload", "kind", self.kind, ("conv2d",))
        check_positive("workload", self, "batch", "in_ch", "out_ch", "in_h", "in_w", "kh", "kw", "stride",
                  "dilation", "groups", "bits")
        _bits(self)
        if self.pad < 0:
            raise ConfigError(f"workload.pad={self.pad}: must be >= 0")
        for key in ("in_ch", "out_ch"):
            if getattr(self, key) % self.groups:
                raise ConfigError(f"workload.{key}={getattr(self, key)}: not divisible by "
                                  f"workload.groups={self.groups}; make the channel counts multiples of the groups")
        for axis, size, k in (("h", self.in_h, self.kh), ("w", self.in_w, self.kw)):
            if size + 2 * self.pad < self.dilation * (k - 1) + 1:
                raise ConfigError(f"workload.in_{axis}={size}: smaller than the kernel k{axis}={k} even with padding; "
                                  "use a larger input, a smaller kernel or more padding")


@dataclass
class MttkrpWorkload:
    """``D[i, j] += A[i, k, l] * B[k, j] * C[l, j]``."""

    name: str = "mttkrp"
    kind: str = "mttkrp"
    I: int = 64
    J: int = 16
    K: int = 32
    L: int = 32
    bits: int = 8

    def __post_init__(self) -> None:
        check_choice("workload", "kind", self.kind, ("mttkrp",))
        check_positive("workload", self, "I", "J", "K", "L", "bits")
        _bits(self)


@dataclass
class TtmcWorkload:
    """``Y[i, j, k] += X[i, l, m] * B[l, j] * C[m, k]`` (tensor-times-matrix chain)."""

    name: str = "ttmc"
    kind: str = "ttmc"
    I: int = 16
    J: int = 8
    K: int = 8
    L: int = 16
    M: int = 16
    bits: int = 8

    def __post_init__(self) -> None:
        check_choice("workload", "kind", self.kind, ("ttmc",))
        check_positive("workload", self, "I", "J", "K", "L", "M", "bits")
        _bits(self)


@dataclass
class AttentionWorkload:
    """Scaled dot-product attention: ``S = Q K^T`` and ``O = softmax(S) V`` per head."""

    name: str = "attention"
    kind: str = "attention"
    batch: int = 1
    heads: int = 12
    seq_q: int = 128
    seq_kv: int = 128
    head_dim: int = 64
    bits: int = 8

    def __post_init__(self) -> None:
        check_choice("workload", "kind", self.kind, ("attention",))
        check_positive("workload", self, "batch", "heads", "seq_q", "seq_kv", "head_dim", "bits")
        _bits(self)


@dataclass
class NetworkWorkload:
    """A built-in network from published layer shapes (``lego_build.analysis.networks``)."""

    name: str = MISSING
    kind: str = "network"
    network: str = MISSING
    batch: int = 1
    bits: int = 8

    def __post_init__(self) -> None:
        check_choice("workload", "kind", self.kind, ("network",))
        check_positive("workload", self, "batch", "bits")
        _bits(self)


@dataclass
class ModelFileWorkload:
    """A model file: ONNX, TFLite flatbuffer, a Timeloop problem YAML, or a plugin's format
    (``kind`` names an importer: lego_build.analysis.importers.IMPORTERS, checked by
    :func:`lego_build.flow.validate.check_names`).

    ``symbols``: the values of an ONNX model's symbolic input dims by name (``dim_param``), e.g.
    ``'workload.symbols={N: 4}'`` for an input ``[N, 3, 32, 32]``; a symbolic dim without one is
    refused. ``batch``: a TFLite model's dynamic batch (or a plugin format's); ONNX and Timeloop
    files state their own, so they take only 1.
    """

    name: str = MISSING
    kind: str = MISSING
    path: str = MISSING
    batch: int = 1
    bits: int = 8
    symbols: Dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_positive("workload", self, "batch", "bits")
        _bits(self)
        if not self.path:
            raise ConfigError(f"workload.path: give the {self.kind} file, e.g. workload.path=model.{self.kind}")
        for symbol, value in self.symbols.items():
            if value <= 0:
                raise ConfigError(f"workload.symbols.{symbol}={value}: a dim's size must be a positive integer")
