"""The cost model's on-chip energy against the energy measured on the hardware it describes
(issue 19): per memory level, for the tiles the simulate stage ran with ``target=asic``.

* **Model**: the mapper's per-level energy of the run's layer (``mapping.json``: seed 001's
  per-access energies, Table 5.2, at 28 nm) per MAC, times the run's MACs (a tile's, or
  the whole layer's).
* **Measured**: the standard-cell flow's power of the classes that implement the level
  (:data:`LEVELS`, from simulated toggle rates, :mod:`lego_build.targets.stdcell`) times the
  run's measured cycles over the clock, moved from the library's node to the model's
  28 nm by the same classical scaling as :func:`lego_build.targets.models.scaled` (energy by
  ``s V'^2 / V^2``): an estimate, so the error includes the scaling's.
* **Levels**: ``mac`` (the model's MAC and per-FU accumulator energies) is the FUs;
  ``network`` (the model's per-hop energy of operands moving between FUs) is the array's
  pipeline registers, multiplexers and wires; ``l1`` is the SRAM banks (the RTL reads every
  bank every cycle: it has no read enable). The controller, PPU and FIFOs have no level in
  the model and are listed apart. DRAM is off chip.

:func:`calibrate` turns the measured figures into the per-access table the mapper reads
(``arch.energy.table``): ``mac_pj`` so that MAC plus accumulator energy match, ``hop_pj`` and
``l1_pj`` scaled by the measured/model ratio of their level.
"""
from __future__ import annotations

#: model level -> (the mapping breakdown's keys, the asic classes that implement it)
LEVELS = (
    ("mac", ("mac", "acc"), ("FUs",)),
    ("network", ("network",), ("array registers", "array muxes and interconnect")),
    ("l1", ("l1",), ("SRAM banks",)),
)
MODEL_NODE = (28.0, 0.9)  # seed 001's Table 5.2 node (nm, V)


def to_model_node(asic: dict) -> float:
    """The factor from the library's energies to the model's node (classical scaling)."""
    node, vdd = MODEL_NODE
    return node / asic["node_nm"] * (vdd / asic["vdd"]) ** 2


def check(asic: dict, runs: list[dict], layers: list[dict]) -> dict:
    """Per level, model and measured energy (pJ at 28 nm) summed over the simulated ``runs``
    (``{"layer", "macs", "cycles"}``: tiles, or whole layers; a tile's runs on reduced
    tiles, ``"full": False``, left out), and the model's error; ``layers``: mapping.json
    entries."""
    by_name = {e["name"]: e for e in layers if e.get("status") == "mapped"}
    scale = to_model_node(asic)
    mhz = asic["power_mhz"]
    model = {lv: 0.0 for lv, _, _ in LEVELS}
    measured = {lv: 0.0 for lv, _, _ in LEVELS}
    other = {c: 0.0 for c in asic["power_mw"] if not any(c in cl for _, _, cl in LEVELS)}
    parts = {"macs": 0, "acc_pj": 0.0, "runs": 0}
    for run in runs:
        entry = by_name.get(run["layer"])
        if entry is None or not entry.get("macs") or not run.get("full", True):
            continue
        macs = run["macs"]
        us = run["cycles"] / mhz
        parts["macs"] += macs
        parts["runs"] += 1
        parts["acc_pj"] += entry["energy_breakdown_pj"].get("acc", 0.0) / entry["macs"] * macs
        for lv, keys, classes in LEVELS:
            model[lv] += sum(entry["energy_breakdown_pj"].get(k, 0.0) for k in keys) / entry["macs"] * macs
            measured[lv] += sum(asic["power_mw"].get(c, 0.0) for c in classes) * us * 1e3 * scale  # mW us = nJ
        for c in other:
            other[c] += asic["power_mw"][c] * us * 1e3 * scale
    rows = [{"level": lv, "model_pj": round(model[lv], 3), "measured_pj": round(measured[lv], 3),
             "error": round((model[lv] - measured[lv]) / measured[lv], 4) if measured[lv] else None}
            for lv, _, _ in LEVELS]
    return {"node_nm": MODEL_NODE[0], "scale": round(scale, 6), "runs": parts["runs"], "macs": parts["macs"],
            "acc_pj": round(parts["acc_pj"], 3), "levels": rows,
            "not_modelled_pj": {c: round(v, 3) for c, v in sorted(other.items())}}


def calibrate(result: dict, energy: dict) -> dict:
    """The per-access table (pJ at 28 nm) that makes the model's levels equal the measured
    ones on the checked tiles; ``result`` is :func:`check`'s, ``energy`` the arch's table."""
    lv = {r["level"]: r for r in result["levels"]}
    if not result["macs"] or not all(r["model_pj"] > 0 and r["measured_pj"] > 0 for r in lv.values()):
        raise ValueError("the checked tiles have a level with no model or no measured energy")
    mac = (lv["mac"]["measured_pj"] - result["acc_pj"]) / result["macs"]
    if mac <= 0:  # the accumulator alone costs more in the model than the FUs measure
        mac = energy["mac_pj"] * lv["mac"]["measured_pj"] / lv["mac"]["model_pj"]
    return {"mac_pj": round(mac, 6),
            "hop_pj": round(energy["hop_pj"] * lv["network"]["measured_pj"] / lv["network"]["model_pj"], 6),
            "l1_pj": round(energy["l1_pj"] * lv["l1"]["measured_pj"] / lv["l1"]["model_pj"], 6)}
