"""The asic target's estimates, kept apart from what the flow measures: the SRAM macros' area,
energy and leakage (:func:`sram_macro`) and node scaling (:func:`scaled`)."""
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
