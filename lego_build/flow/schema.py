"""Structured-config schemas: one dataclass per config-group option.

Hydra composes ``conf/`` against these schemas (registered as ``base_<option>`` in
the ConfigStore), so an unknown key or a wrong type fails during composition with
the key's full name. Value checks that types cannot express (positive sizes,
known objective names) live in ``__post_init__`` and raise :class:`ConfigError`
naming the key; they run when the composed config is turned into objects.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List

from omegaconf import MISSING


class ConfigError(ValueError):
    """A bad configuration value. The message is one line and names the key."""


def _positive(group: str, obj: Any, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if value <= 0:
            raise ConfigError(f"{group}.{name}={value}: must be a positive integer")


def _choice(group: str, name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"{group}.{name}={value!r}: must be one of {', '.join(choices)}")


# --------------------------------------------------------------------------- workload
@dataclass
class GemmWorkload:
    """``Y[m, n] += A[m, k] * B[k, n]`` with signed ``bits``-bit operands."""

    name: str = "gemm"
    kernel: str = "gemm"
    M: int = 16
    N: int = 16
    K: int = 16
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kernel", self.kernel, ("gemm",))
        _positive("workload", self, "M", "N", "K", "bits")


@dataclass
class Conv2dWorkload:
    """``Y[n, k, oh, ow] += X[n, c, oh*stride + kh - pad, ow*stride + kw - pad] * W[k, c, kh, kw]``."""

    name: str = "conv2d"
    kernel: str = "conv2d"
    batch: int = 1
    in_ch: int = 16
    out_ch: int = 16
    in_h: int = 14
    in_w: int = 14
    kh: int = 3
    kw: int = 3
    stride: int = 1
    pad: int = 1
    bits: int = 8

    def __post_init__(self) -> None:
        _choice("workload", "kernel", self.kernel, ("conv2d",))
        _positive("workload", self, "batch", "in_ch", "out_ch", "in_h", "in_w", "kh", "kw", "stride", "bits")
        if self.pad < 0:
            raise ConfigError(f"workload.pad={self.pad}: must be >= 0")
        for axis, size, k in (("h", self.in_h, self.kh), ("w", self.in_w, self.kw)):
            if size + 2 * self.pad < k:
                raise ConfigError(f"workload.in_{axis}={size}: smaller than the kernel k{axis}={k} even with padding")


# --------------------------------------------------------------------------- arch
@dataclass
class EnergyConf:
    """Per-access energies in pJ (seed 001 Table 5.2, 28 nm)."""

    mac_pj: float = 0.075
    hop_pj: float = 0.035
    l1_pj: float = 6.0
    dram_pj: float = 200.0


@dataclass
class ArchConf:
    """A 2-D FU array with one spatial dataflow.

    ``spatial`` is ``M_S->I`` written by name: ``spatial[j]`` is the iteration dim
    unrolled along array axis ``j`` (rows, then cols). ``control_flow`` is the
    vector ``c`` of seed 004 eq. 3.6.
    """

    name: str = "systolic"
    rows: int = 4
    cols: int = 4
    fu: str = "mac"
    operand_bits: int = 8
    acc_bits: int = 32
    spatial: List[str] = field(default_factory=lambda: ["m", "n"])
    control_flow: List[int] = field(default_factory=lambda: [1, 1])
    d_s: int = 1
    buffer_depth: int = 4096
    max_fus: int = 4096
    clock_mhz: float = 500.0
    dram_bytes_per_cycle: float = 16.0
    energy: EnergyConf = field(default_factory=EnergyConf)

    def __post_init__(self) -> None:
        _positive("arch", self, "rows", "cols", "operand_bits", "acc_bits", "d_s", "buffer_depth", "max_fus")
        _choice("arch", "fu", self.fu, ("mac",))
        if self.rows * self.cols > self.max_fus:
            raise ConfigError(
                f"arch.rows x arch.cols = {self.rows * self.cols} FUs exceeds arch.max_fus={self.max_fus}"
            )
        if len(self.spatial) != 2:
            raise ConfigError(f"arch.spatial={list(self.spatial)}: needs one iteration dim per array axis (2)")
        if len(set(self.spatial)) != 2:
            raise ConfigError(f"arch.spatial={list(self.spatial)}: the two axes must unroll different dims")
        if len(self.control_flow) != 2 or any(c not in (-1, 0, 1) for c in self.control_flow):
            raise ConfigError(f"arch.control_flow={list(self.control_flow)}: needs two values from -1, 0, 1")
        if self.operand_bits > 32 or self.acc_bits > 64:
            raise ConfigError(
                f"arch.operand_bits={self.operand_bits}, arch.acc_bits={self.acc_bits}: limits are 32 and 64 bits"
            )
        if self.acc_bits < 2 * self.operand_bits:
            raise ConfigError(f"arch.acc_bits={self.acc_bits}: must hold a product (>= 2 x arch.operand_bits)")


# --------------------------------------------------------------------------- mapper
@dataclass
class MapperConf:
    name: str = "pfm"
    objective: str = "energy"
    mapspace: str = "pfm"

    def __post_init__(self) -> None:
        _choice("mapper", "objective", self.objective, ("energy", "latency", "edp"))
        _choice("mapper", "mapspace", self.mapspace, ("pfm",))


# --------------------------------------------------------------------------- optimizer
@dataclass
class OptimizerConf:
    name: str = "lego"
    delay_matching: str = "lp"
    solver: str = "cbc"
    time_limit_s: float = 60.0

    def __post_init__(self) -> None:
        _choice("optimizer", "delay_matching", self.delay_matching, ("lp", "greedy"))
        _choice("optimizer", "solver", self.solver, ("cbc",))
        if self.time_limit_s <= 0:
            raise ConfigError(f"optimizer.time_limit_s={self.time_limit_s}: must be > 0 seconds")


# --------------------------------------------------------------------------- target
@dataclass
class TargetConf:
    name: str = "verilator"
    simulate: bool = True
    lint: bool = True
    waveform: bool = False
    seed: int = 1
    max_cycles: int = 10_000_000

    def __post_init__(self) -> None:
        _positive("target", self, "max_cycles")


# --------------------------------------------------------------------------- root
@dataclass
class LegoConfig:
    workload: Any = MISSING
    arch: ArchConf = MISSING
    mapper: MapperConf = MISSING
    optimizer: OptimizerConf = MISSING
    target: TargetConf = MISSING


#: (group, option name in the ConfigStore, schema)
SCHEMAS: tuple[tuple[str, str, type], ...] = (
    ("workload", "base_gemm", GemmWorkload),
    ("workload", "base_conv2d", Conv2dWorkload),
    ("arch", "base_arch", ArchConf),
    ("mapper", "base_mapper", MapperConf),
    ("optimizer", "base_optimizer", OptimizerConf),
    ("target", "base_target", TargetConf),
)
GROUPS: tuple[str, ...] = ("workload", "arch", "mapper", "optimizer", "target")
