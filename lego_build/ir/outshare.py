"""Output lanes shared by the FUs of a column (``arch.out_lanes``, issue 44).

An output-stationary FU writes its sum once per accumulation (``commit``), at its own cycle: FU
``s`` runs ``s . c`` cycles after FU 0 (seed 004 eq. 3.6), and delay matching (eq. 5.1-5.2) gives
each output port its write cycle ``D``. The ``G = rows / out_lanes`` ports of a column in rows
``[gG, (g+1)G)`` then
write in distinct cycles, and while every accumulation lasts at least as many cycles as their
writes spread over (:func:`periods`) no two of them write in one cycle: they share one bank *lane*
(one read-modify-write adder, one write register and one bank pair ``G`` times deeper), the
committing member's word picked by the commits themselves, which are one-hot (an AND-OR,
:func:`lego_build.emit.outbank.shared_port`). A shorter accumulation (a layer's whole reduction, or
a remainder tile's) holds its first step until it is that long (:mod:`lego_build.emit.ctrl`; the
latency model counts the cycles, :meth:`lego_build.ir.host.HostMap.held`), so every mapping runs.
Without sharing lego_mnicoc's 256 output-stationary FUs had 256 lanes: 2.9 mm² of
read-modify-write adders at OSU 0.18 µm, 1.84x gemmini_like's logic area.

Under a dataflow whose used members of a lane are ``n``, each is a *slot* ``j`` (its rank among
them) of ``S = 2**ceil(log2 n)``, and its word at the logical address ``a`` lives at bank row
``a * S + j``: a lane holds ``G * depth / S`` words per member, so a dataflow that uses one FU
per column (IC-OC, whose sums flow down the column) has the whole lane for it. The DRAM layout
is the one without sharing (:mod:`lego_build.ir.soc`); the memory system's write engine reads a
DRAM row's words from the ``S`` bank rows that hold them, a bus beat from one
(:func:`beat_rows`, :mod:`lego_build.emit.soc.storer`).

``lanes``: per output port (the ADG's order, row-major FUs), its lane; empty when every port has
a lane of its own. ``pack``: the port's word in a dataflow's packed row (-1: the dataflow does not
use the port, :mod:`lego_build.frontend.packing`).
"""
from __future__ import annotations

from lego_build.errors import ConfigError


def group_lanes(ports: tuple[tuple[int, ...], ...], group: int) -> tuple[int, ...]:
    """Per port (an FU ``(r, c)``), its lane: one per ``(r // group, c)``, numbered in port order;
    ``()`` for ``group`` 1."""
    if group == 1:
        return ()
    ids: dict[tuple[int, ...], int] = {}
    return tuple(ids.setdefault((s[0] // group, *s[1:]), len(ids)) for s in ports)


def count(lanes: tuple[int, ...], ports: int) -> int:
    """Bank lanes: ``ports`` without sharing."""
    return max(lanes) + 1 if lanes else ports


def members(lanes: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    """Per lane, its ports in port order."""
    out: dict[int, list[int]] = {}
    for port, lane in enumerate(lanes):
        out.setdefault(lane, []).append(port)
    return {lane: tuple(ps) for lane, ps in out.items()}


def _log2_up(n: int) -> int:
    return max(0, (n - 1).bit_length())


def depth_factor(lanes: tuple[int, ...]) -> int:
    """How many times a port's words a lane holds: its members, rounded up to a power of two."""
    return 1 << _log2_up(max((len(ps) for ps in members(lanes).values()), default=1))


def slots(lanes: tuple[int, ...], pack: tuple[int, ...]) -> tuple[int, ...]:
    """Per port, its slot under a dataflow (-1 where the dataflow does not use it)."""
    rank: dict[int, int] = {}
    out = []
    for port, lane in enumerate(lanes):
        if pack and pack[port] < 0:
            out.append(-1)
            continue
        out.append(rank.setdefault(lane, 0))
        rank[lane] += 1
    return tuple(out)


def shift(lanes: tuple[int, ...], pack: tuple[int, ...]) -> int:
    """``log2 S``: the address bits a dataflow's slots take below a member's logical address."""
    return _log2_up(max(slots(lanes, pack), default=0) + 1)


def capacity(lanes: tuple[int, ...], pack: tuple[int, ...], depth: int) -> int:
    """Words a used port holds per half under a dataflow, ``depth`` words per port without sharing."""
    return depth * depth_factor(lanes) >> shift(lanes, pack)


def physical(lanes: tuple[int, ...], pack: tuple[int, ...], port: int, addr: int) -> tuple[int, int]:
    """Port ``port``'s word at logical address ``addr``: its lane and bank row."""
    return lanes[port], (addr << shift(lanes, pack)) | slots(lanes, pack)[port]


def word_sources(lanes: tuple[int, ...], pack: tuple[int, ...],
                 word_of: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """Per word of a DRAM row (``word_of``: each port's word, -1 none), the (lane, slot) it is read from:
    the first port that holds it."""
    first: dict[int, int] = {}
    for port, w in enumerate(word_of):
        if w >= 0:
            first.setdefault(w, port)
    sl = slots(lanes, pack)
    return tuple((lanes[first[w]], sl[first[w]]) for w in range(len(first)))


def beat_rows(sources: tuple[tuple[int, int], ...], per_beat: int, beats: int) -> tuple[int, ...]:
    """Per bus beat of a DRAM row (``per_beat`` words each, ``beats`` of them, padding beats last,
    which keep the slot before them), the slot (bank row within the row's ``S``) its words are read
    from; one bank read serves a beat, so a beat's words must share a slot (a one-line
    :class:`ConfigError` names the fix)."""
    out = []
    for b in range(beats):
        rows = {j for _, j in sources[b * per_beat:(b + 1) * per_beat]}
        if len(rows) > 1:
            raise ConfigError(f"arch.out_lanes: a bus beat of {per_beat} output words takes them from {len(rows)} "
                              "bank rows of a shared lane; use more arch.out_lanes or a narrower "
                              "arch.memsys.axi_data_bits")
        out.append(min(rows) if rows else out[-1] if out else 0)
    return tuple(out)


def bank_reads(rows: tuple[int, ...]) -> tuple[int, ...]:
    """The slots of a DRAM row's bank reads in order: one per run of beats from one bank row
    (:func:`beat_rows`)."""
    return tuple(j for b, j in enumerate(rows) if b == 0 or rows[b - 1] != j)


def periods(lanes: tuple[int, ...], packs: tuple[tuple[int, ...], ...], when: tuple[int, ...],
            dataflows: tuple[str, ...]) -> tuple[int, ...]:
    """Per dataflow, the fewest cycles between one port's commits that keep a shared lane's writes
    apart: the spread of its used members' write cycles ``when`` (per port) plus one, over the lanes
    (1 without sharing). A run of period ``P`` writes member ``i`` at ``D_i + k P``; two members
    collide only if ``D_i - D_j`` is a multiple of ``P``, never when every difference is below it,
    and the next run's first write comes after this run's last (its steps start after these end).
    Two used members scheduled in one cycle cannot share: a one-line :class:`ConfigError` (a
    control flow ``c`` of 0 along the column gives every FU of it the same cycle)."""
    if not lanes:
        return tuple(1 for _ in dataflows)
    out = []
    for df, pack in zip(dataflows, packs):
        worst = 1
        for lane, ports in members(lanes).items():
            used = [when[p] for p in ports if pack[p] >= 0]
            if len(set(used)) < len(used):
                raise ConfigError(f"arch.out_lanes: two FUs of output lane {lane} write in the same cycle under "
                                  f"dataflow {df} (their control flow along the column is 0); they cannot share a "
                                  "lane: set arch.out_lanes=0")
            if used:
                worst = max(worst, max(used) - min(used) + 1)
        out.append(worst)
    return tuple(out)
