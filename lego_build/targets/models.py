"""The asic target's estimates, kept apart from what the flow measures: the SRAM macros' area,
energy and leakage (:func:`sram_macro`) and node scaling, classical (:func:`scaled`) and
published (:func:`published`)."""
from __future__ import annotations

import math

SCALE_TO = ((28, 0.9), (16, 0.8))  # nodes (nm, V) of seed 004's figures: LEGO at 28 nm, NVDLA at 16 nm


def scaled(area_mm2: float, fmax_mhz: float, power_mw: float, lib, node_nm: float, vdd: float) -> dict:
    """The figures moved to another node by classical (Dennard) scaling, R. H. Dennard et al.,
    "Design of ion-implanted MOSFETs with very small physical dimensions", IEEE JSSC 9(5),
    1974: lengths by ``s = node / lib.node``, so area by s², gate delay by s (Fmax by 1 / s),
    switched capacitance by s and energy by s V'² / V²; power at the same clock by the
    energy's factor. Only an estimate: below about 90 nm voltages stopped scaling and wires
    did not speed up (Stillmaker and Baas, Integration 58, 2017, measure up to ~80x error at
    the extremes), so the report keeps these apart from the measured figures. The supplies
    at 28 and 16 nm (0.9 and 0.8 V) are assumed nominal values. ``lib``: a
    :class:`lego_build.targets.stdcell.Library` (its node and supply)."""
    k = node_nm / lib.node_nm
    return {"node_nm": node_nm, "vdd": vdd, "area_mm2": round(area_mm2 * k * k, 4), "fmax_mhz": round(fmax_mhz / k, 2),
            "power_mw": round(power_mw * k * (vdd / lib.vdd) ** 2, 3)}


#: Stillmaker and Baas, "Scaling equations for the accurate prediction of CMOS device performance
#: from 180 nm to 7 nm", Integration 58 (2017) 74-81: per node, its area relative to 180 nm (their
#: area table), and the coefficients of their fits in the supply V (HSPICE on PTM models, high-
#: performance devices below 45 nm): delay a3 V³ + a2 V² + a1 V + a0, energy per operation
#: b2 V² + b1 V + b0, power c2 V² + c1 V + c0 (each in the paper's arbitrary units: only ratios
#: between nodes mean anything).
STILLMAKER_BAAS = {
    180: (1.0, (0.0, 97.09, -356.7, 406.5), (0.0, 24.64, -17.98), (0.0, 101000.0, -79720.0)),
    130: (0.34, (-76.65, 334.9, -493.4, 275.8), (7.171, -6.709, 2.904), (27020.0, -15450.0, 5630.0)),
    90: (0.15, (-60.34, 262.5, -384.2, 210.9), (4.762, -4.781, 2.092), (17320.0, -11230.0, 4328.0)),
    65: (0.08, (-53.3, 230.4, -333.9, 178.6), (3.755, -4.398, 1.975), (12890.0, -10510.0, 4362.0)),
    45: (0.053, (-501.6, 1567.0, -1619.0, 566.1), (1.018, -0.3107, 0.1539), (5462.0, -1760.0, 522.4)),
    32: (0.025, (-1047.0, 2982.0, -2797.0, 873.5), (0.8367, -0.4341, 0.1701), (4001.0, -1733.0, 533.6)),
    20: (0.011, (0.0, 34.63, -66.37, 41.15), (0.373, -0.1582, 0.04104), (2922.0, -1286.0, 299.9)),
    16: (0.01, (0.0, 24.8, -47.52, 28.87), (0.2958, -0.1241, 0.03024), (2133.0, -882.6, 197.7)),
    14: (0.0093, (-40.66, 109.2, -100.6, 35.92), (0.2363, -0.09675, 0.02239), (1675.0, -711.0, 159.0)),
    10: (0.0055, (-34.95, 93.65, -85.99, 30.4), (0.2068, -0.09311, 0.02375), (1456.0, -621.6, 143.8)),
    7: (0.0032, (-28.58, 76.6, -70.26, 24.69), (0.1776, -0.09097, 0.02447), (1179.0, -515.7, 123.4)),
}


def _poly(coeffs: tuple, v: float) -> float:
    return sum(c * v ** (len(coeffs) - 1 - k) for k, c in enumerate(coeffs))


def _factors(node_nm: float, vdd: float) -> tuple[float, float, float, float] | None:
    """(area, delay, energy, power) factors of :data:`STILLMAKER_BAAS` at ``node_nm`` and ``vdd``;
    between two of its nodes each factor geometrically interpolated in the node (our reading:
    28 nm lies between their 32 and 20 nm); None outside 7 to 180 nm."""
    nodes = sorted(STILLMAKER_BAAS)
    if not nodes[0] <= node_nm <= nodes[-1]:
        return None

    def at(n):
        area, d, e, p = STILLMAKER_BAAS[n]
        return area, _poly(d, vdd), _poly(e, vdd), _poly(p, vdd)
    if node_nm in STILLMAKER_BAAS:
        return at(node_nm)
    lo = max(n for n in nodes if n < node_nm)
    hi = min(n for n in nodes if n > node_nm)
    w = math.log(node_nm / lo) / math.log(hi / lo)
    return tuple(a ** (1 - w) * b ** w for a, b in zip(at(lo), at(hi)))


def published(area_mm2: float, fmax_mhz: float, power_mw: float, dynamic_mw: float, lib, node_nm: float,
              vdd: float) -> dict | None:
    """The figures moved to another node by Stillmaker and Baas's published fits
    (:data:`STILLMAKER_BAAS`): area by their area table, Fmax by the inverse of the delay fit,
    dynamic power at the same clock by the energy fit, and total power at the same clock by
    their power fit, which (our reading of their ratios: from 180 to 65 nm it falls less than
    energy does, far more than energy over delay) is a fixed-clock power with its leakage, so
    the total takes the leakage's growth at small nodes that the energy alone leaves out. From
    ``lib``'s node at its supply; None where either node is outside their 7 to 180 nm. An
    estimate, kept apart from the measured figures."""
    src, dst = _factors(lib.node_nm, lib.vdd), _factors(node_nm, vdd)
    if src is None or dst is None:
        return None
    area, delay, energy, power = (b / a for a, b in zip(src, dst))
    return {"node_nm": node_nm, "vdd": vdd, "area_mm2": round(area_mm2 * area, 4),
            "fmax_mhz": round(fmax_mhz / delay, 2), "dynamic_mw": round(dynamic_mw * energy, 3),
            "power_mw": round(power_mw * power, 3)}


def sram_macro(width: int, depth: int, lib, ports: int = 1) -> dict:
    """Area (µm²), energy per read and per write (pJ) and leakage (nW) of one ``width x depth``
    SRAM macro in ``lib``'s node; ``ports=2``: a two-port (one read, one write in the same cycle)
    macro, as an output bank's read-modify-write needs: an 8-transistor cell (area and leakage
    x 8/6) and a second periphery (x 2), about 1.5x a single-port macro's area (this model's
    reading; the issue's estimate for such macros was about 2x).

    * Area: a 6T cell of 600 λ² (150 F², F the feature size; the rule of thumb of CACTI's
      single-ported SRAM in D. J. Greaves, *System-on-Chip Design*, Cambridge, 2012), and
      periphery (decoders, sense amplifiers, drivers) taking 30 % of the macro (assumed).
    * Access energy: Interstellar's CACTI 6.5 figures at 28 nm (seed 001, Table 5.2: 6 pJ per
      16-bit access at 32 KB, x1.5 per doubling of capacity), per bit of the word, moved to
      the node by classical scaling, energy ~ C V² with C ~ feature size (Dennard et al.,
      1974) from 28 nm at 0.9 V; a write costs what a read does.
    * Leakage: six transistors per bit, each leaking half the library's smallest inverter."""
    bits = width * depth
    f_um = lib.node_nm / 1000
    cell = 150 * f_um ** 2 * (8 / 6 if ports == 2 else 1)
    area = bits * cell + bits * 150 * f_um ** 2 * 0.3 / 0.7 * ports
    kbytes = max(bits / 8 / 1024, 1 / 64)
    per_bit_28 = 6.0 / 16 * 1.5 ** math.log2(kbytes / 32)
    energy = per_bit_28 * width * (lib.node_nm / 28) * (lib.vdd / 0.9) ** 2
    inv = min((v for k, v in lib.leakage_nw.items() if k.startswith("INV") and v > 0), default=0.0)
    return {"area_um2": area, "read_pj": energy, "write_pj": energy,
            "leakage_nw": bits * (8 if ports == 2 else 6) * inv / 2}
