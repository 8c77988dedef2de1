"""Memory hierarchy IR for the cost model (seed 001 ch. 3 "resource allocation", ch. 5).

A :class:`Hierarchy` is the array plus its memory levels listed inner -> outer; the
last level is DRAM (unbounded). Levels with ``per_pe`` are replicated once per PE and
sit below the array's spatial fanout; the others are shared. A level holds the tensor
roles it lists and is bypassed by the others (seed 001 "bypass"; Ruby's Eyeriss-like
weights skip the GLB). Roles: ``input`` (a kernel's first input), ``weight`` (its other
inputs), ``output``.

Energies are per access of ``width_bits`` (Table 5.2 is per 16-bit access): moving a
``b``-bit word costs ``b / width_bits`` accesses, so a 64-bit SRAM port carries eight
int8 words per access.
"""
from __future__ import annotations

from dataclasses import dataclass

ROLES = ("input", "weight", "output")


@dataclass(frozen=True, slots=True)
class MemLevel:
    name: str
    size_bytes: int | None  # per instance; None: unbounded (DRAM)
    roles: tuple[str, ...]  # tensor roles stored here (the others bypass it)
    read_pj: float  # per access of width_bits
    write_pj: float
    width_bits: int = 16
    bandwidth_bits: float | None = None  # per cycle per instance, reads + writes; None: unlimited
    per_pe: bool = False  # one instance per PE, below the spatial fanout
    partition: tuple[tuple[str, int], ...] = ()  # per-role bytes instead of one shared size_bytes
    double_buffered: bool = True  # transfers overlap compute (seed 001 §5.2)

    def capacity(self, role: str) -> int | None:
        """Bytes available to ``role`` per instance (None: unbounded)."""
        if self.partition:
            return dict(self.partition).get(role)
        return self.size_bytes


@dataclass(frozen=True, slots=True)
class Hierarchy:
    name: str
    levels: tuple[MemLevel, ...]  # inner -> outer; levels[-1] is DRAM
    rows: int
    cols: int
    mac_pj: float
    hop_pj: float  # per word crossing the array network (one hop, or the multicast bus)
    operand_reuse: bool = False  # a MAC keeps its last input operand: no re-read while it does not change
    window_forwarding: bool = True  # PEs share their input windows' overlap: the shared level serves distinct words

    @property
    def pes(self) -> int:
        return self.rows * self.cols

    @property
    def fanout(self) -> int:
        """Index of the innermost shared level: the spatial loops sit just below it."""
        return next(i for i, lv in enumerate(self.levels) if not lv.per_pe)

    def level(self, name: str) -> MemLevel:
        for lv in self.levels:
            if lv.name == name:
                return lv
        raise KeyError(name)
