"""A design's key figures, computed in one place (:func:`summarize`): the report stage writes
them to ``summary.json``, the HTML report shows them (recomputed from the design directory when
``summary.json`` is absent), and a sweep records them for every job, also one that stopped
at ``map`` (no ``sim/result.json`` then: the headline comes from the latency model or the
mapper's roofline).

The array's size is the ADG's shape (``adg.json``), the figures of the target's products
those its declaration names (:attr:`lego_build.targets.base.Product.summary`).
"""
from __future__ import annotations

import json
from math import prod
from pathlib import Path
from typing import Any

from lego_build.errors import ConfigError
from lego_build.report import evidence
from lego_build.targets import TARGETS
from lego_build.targets.base import Product

#: the JSON files the figures come from, by the names the tables use (``passes`` and ``sim``
#: may be missing: a build stopped before them)
FILES = {"analysis": "analysis.json", "mapping": "mapping.json", "adg": "adg.json", "passes": "passes.json",
         "sim": "sim/result.json"}


def read_doc(design_dir: Path) -> dict:
    """The design's JSON files as plain objects (``None`` for one that is absent)."""
    d = Path(design_dir)
    return {key: json.loads((d / name).read_text(encoding="utf-8")) if (d / name).is_file() else None
            for key, name in FILES.items()}


def products(sim: dict | None) -> list[tuple[Product, Any]]:
    """The products in ``sim/result.json``, in the order the target made them, each with its
    declaration (:data:`lego_build.targets.TARGETS`); a product whose target is not installed
    here gets a plain one (its key as title: the report lists its figures)."""
    values = (sim or {}).get("products") or {}
    declared: tuple[Product, ...] = ()
    if (sim or {}).get("target"):
        try:
            declared = TARGETS.get(sim["target"]).products
        except ConfigError:
            declared = ()
    by_key = {p.key: p for p in declared}
    return [(by_key.get(key) or Product(key, key), value) for key, value in values.items()]


def wrapping_layers(design_dir: Path, adg: dict) -> list[dict]:
    """With ``arch.overflow=wrap``: the layers whose worst-case sums exceed the accumulator, and
    the bits they would need (lego_build.analysis.widths)."""
    if not adg.get("acc_wraps"):
        return []
    from lego_build.analysis.lowering import lower
    from lego_build.analysis.stage import load_layers
    from lego_build.analysis.widths import required_acc_bits

    out = []
    for entry, kernel in load_layers(design_dir):
        if kernel is None or lower(kernel, adg["kernel"]) is None:
            continue
        need = required_acc_bits(kernel, adg["operand_bits"])
        if need > adg["acc_bits"]:
            out.append({"layer": entry["name"], "bits_needed": need})
    return out


def fu_summary(adg: dict) -> dict:
    """The array's FU kind (``arch.fu``): its name, what it computes and its operands' widths
    (the input buffers', which an FU-language FU sets from its parameters)."""
    from lego_build.fulang.kinds import FUS

    fu = FUS.get(adg["fu"])
    return {"name": fu.name, "doc": fu.doc, "expression": fu.product is not None,
            "operand_bits": {n["tensor"]: n["bits"] for n in adg["nets"] if n["role"] == "in"}}


def names(cfg, design: str) -> dict:
    """What the design is: its directory's name and the groups' option names. ``cfg`` is the
    composed config or the design's ``config.yaml`` as loaded (attribute access either way)."""
    from lego_build.config.compose import workload_label

    return {"design": design, "arch": cfg.arch.name, "workload": workload_label(cfg), "mapper": cfg.mapper.name,
            "optimizer": cfg.optimizer.name, "target": cfg.target.name}


def achieved_clock(target_mhz: float, sim: dict) -> tuple[float, str]:
    """The clock the throughput is stated at (issue 44): ``arch.clock_mhz``, the design's clock
    target, unless the asic flow measured a lower Fmax, which is then the clock; and its source."""
    fmax = ((sim.get("products") or {}).get("asic") or {}).get("fmax_mhz")
    if fmax is None:
        return target_mhz, "arch.clock_mhz"
    if fmax < target_mhz:
        return fmax, f"the asic flow's Fmax; arch.clock_mhz={target_mhz:g} not met"
    return target_mhz, f"arch.clock_mhz, met in the asic flow (Fmax {fmax:g} MHz)"


def summarize(cfg, doc: dict, design_dir: Path | None = None, design: str | None = None) -> dict:
    """The key figures. The headline cycles, utilization and throughput come from each layer's best
    evidence (:mod:`lego_build.report.evidence`); energy is the cost model's. Every figure covers
    the mapped layers only; ``unmappable_mac_share`` says how much of the workload's MACs that
    leaves out. ``design``: the design's name (default: :func:`lego_build.config.compose.design_id`)."""
    from lego_build.config.compose import design_id

    totals = doc["mapping"]["totals"]
    final = ((doc.get("passes") or {}).get("passes") or [{}])[-1]
    sim = doc.get("sim") or {}
    adg = doc["adg"]
    macs, macs_mapped = doc["analysis"]["totals"]["macs"], totals["macs"]
    clock, clock_source = achieved_clock(cfg.arch.clock_mhz, sim)
    head = evidence.headline(doc["mapping"], sim, prod(adg["shape"]), clock)
    return {
        **names(cfg, design or design_id(cfg)),
        "array": list(adg["shape"]),
        "fu": fu_summary(adg),
        "macs": macs,
        "macs_mapped": macs_mapped,
        "unmappable_mac_share": round(1 - macs_mapped / macs, 6) if macs else 0.0,
        "pj_per_mac": round(totals["energy_pj"] / macs_mapped, 6) if macs_mapped else 0.0,
        "layers_mapped": totals["layers_mapped"],
        "layers_unmappable": totals["layers_unmappable"],
        "unmapped_ops": len(doc["analysis"]["unmapped"]),
        "energy_pj": totals["energy_pj"],
        "energy_by_level_pj": totals.get("energy_by_level_pj", {}),
        "energy_by_tensor_pj": totals.get("energy_by_tensor_pj", {}),
        **head,
        "coverage": evidence.coverage(doc["mapping"], sim, macs),
        # end to end (seed 004 §6.2): the array layers' headline cycles plus the PPU passes
        "cycles_end_to_end": head["cycles"] + totals.get("ppu", {}).get("cycles", 0),
        "energy_end_to_end_pj": totals.get("end_to_end_energy_pj", totals["energy_pj"]),
        "register_bits": final.get("register_bits"),
        "clock_source": clock_source,
        "pipeline_latency": final.get("latency"),
        "accumulator": {"bits": adg["acc_bits"], "overflow": "wrap" if adg.get("acc_wraps") else "error",
                        "wrapping_layers": wrapping_layers(design_dir, adg) if design_dir else []},
        "simulation": sim.get("status"),
        "simulated_tiles": [{k: t[k] for k in ("layer", "kind", "dataflow", "match", "cycles_simulated",
                                                "cycles_predicted")} for t in sim.get("tiles") or []],
        "figures": {k: v for p, value in products(sim) for k, v in p.figures(value).items()},
    }


def design_summary(design_dir: Path, cfg=None) -> dict | None:
    """``summary.json`` when it is newer than ``mapping.json``, else the figures of what the build
    made (:func:`summarize`; ``cfg``: the design's config, default its ``config.yaml``); ``None``
    before the map stage has run."""
    d = Path(design_dir)
    if not (d / "mapping.json").is_file():
        return None
    summary = d / "summary.json"
    if summary.is_file() and summary.stat().st_mtime >= (d / "mapping.json").stat().st_mtime:
        return json.loads(summary.read_text(encoding="utf-8"))
    if cfg is None:
        cfg = design_config(d)
    doc = read_doc(d)
    if doc["sim"] is not None and (d / FILES["sim"]).stat().st_mtime < (d / "mapping.json").stat().st_mtime:
        doc["sim"] = None  # a simulation of an earlier mapping
    return summarize(cfg, doc, d, d.name)


def design_config(design_dir: Path):
    """The design's resolved config (``config.yaml``, written by every stage), as OmegaConf loads
    it: attribute access as the composed config's (``None`` when absent)."""
    path = Path(design_dir) / "config.yaml"
    if not path.is_file():
        return None
    from omegaconf import OmegaConf

    return OmegaConf.load(path)
