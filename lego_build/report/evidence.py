"""The headline figures from the best evidence a build has: :func:`headline`, :func:`coverage`.

Per mapped array layer (``mapping.json`` ``layers``) the cycles come from, best first:

* ``rtl``: the layer ran whole through the memory system in RTL (``sim/result.json``
  ``layers``, ``target.scope=layers`` or ``network``, a passing simulation);
* ``model``: the latency model of the generated memory system (the layer's ``cycles_model``,
  :mod:`lego_build.mapping.latency`, which the whole-layer runs check);
* ``roofline``: the mapper's per-tile roofline (the layer's ``cycles``), the figure it ranks
  mappings with; it leaves out the tile loads and stores the hardware waits for, so it is
  not the hardware's time.

A layer repeated ``count`` times (identical instances) counts ``count`` times with the cycles
of the one instance that ran or was modelled. Utilization and throughput are computed from
the same cycles; energy is the cost model's (``target=asic`` adds measured figures for the runs it simulates).
"""
from __future__ import annotations

from math import prod

#: where a layer's cycles come from, best first
SOURCES: tuple[str, ...] = ("rtl", "model", "roofline")
#: how the reports name each source
SOURCE_LABELS = {"rtl": "measured in RTL", "model": "latency model", "roofline": "mapper's roofline"}
#: where the energy figures come from
ENERGY_SOURCE = "cost model"


def measured_layers(sim: dict | None) -> dict[str, dict]:
    """The whole layers a passing simulation ran, by name (none for tiles or a skipped run)."""
    sim = sim or {}
    if sim.get("status") != "pass":
        return {}
    return {r["layer"]: r for r in sim.get("layers") or []}


def layer_evidence(mapping: dict, sim: dict | None, fus: int) -> list[dict]:
    """Per mapped layer, in ``mapping.json`` order: its cycles per instance from the best source,
    the source, the mapper's roofline figure and the utilization of those cycles."""
    runs = measured_layers(sim)
    out = []
    for e in mapping.get("layers", []):
        if e.get("status") != "mapped":
            continue
        if e["name"] in runs:
            cycles, source = runs[e["name"]]["cycles"], "rtl"
        elif e.get("cycles_model") is not None:
            cycles, source = e["cycles_model"], "model"
        else:
            cycles, source = e["cycles"], "roofline"
        out.append({"name": e["name"], "count": e.get("count", 1), "macs": e["macs"], "cycles": int(cycles),
                    "source": source, "cycles_mapper": e["cycles"],
                    "utilization": round(e["macs"] / (cycles * fus), 6) if cycles and fus else 0.0})
    return out


def describe(by_source: dict, layers: int) -> str:
    """``measured in RTL: 54 of 54 layers``, or the sources of a mixed total."""
    if not by_source:
        return "no mapped layer"
    return "; ".join(f"{SOURCE_LABELS[s]}: {by_source[s]['layers']} of {layers} layers" for s in SOURCES
                     if s in by_source)


def headline(mapping: dict, sim: dict | None, fus: int, clock_mhz: float | None = None) -> dict:
    """The network's cycles, utilization and throughput from the best evidence of each layer
    (:func:`layer_evidence`), their source, and the mapper's roofline figures beside them.

    ``ops_per_cycle``: 2 x MACs per cycle; ``gops``: that at ``clock_mhz`` (None without a clock);
    ``mapper_gap``: the headline cycles over the mapper's (how far the mapper's figure is from the hardware's)."""
    rows = layer_evidence(mapping, sim, fus)
    by_source: dict[str, dict] = {}
    for r in rows:
        s = by_source.setdefault(r["source"], {"layers": 0, "cycles": 0, "macs": 0})
        s["layers"] += r["count"]
        s["cycles"] += r["cycles"] * r["count"]
        s["macs"] += r["macs"] * r["count"]
    by_source = {s: by_source[s] for s in SOURCES if s in by_source}
    layers = sum(r["count"] for r in rows)
    macs = sum(r["macs"] * r["count"] for r in rows)
    cycles = sum(r["cycles"] * r["count"] for r in rows)
    mapper_cycles = sum(r["cycles_mapper"] * r["count"] for r in rows)
    ops = 2 * macs / cycles if cycles else 0.0
    return {
        "cycles": cycles,
        "cycles_source": describe(by_source, layers),
        "cycles_by_source": by_source,
        "utilization": round(macs / (cycles * fus), 6) if cycles and fus else 0.0,
        "ops_per_cycle": round(ops, 4),
        "gops": round(ops * clock_mhz / 1e3, 4) if clock_mhz else None,
        "clock_mhz": clock_mhz,
        "energy_source": ENERGY_SOURCE,
        "mapper_cycles": mapper_cycles,
        "mapper_utilization": round(macs / (mapper_cycles * fus), 6) if mapper_cycles and fus else 0.0,
        "mapper_gap": round(cycles / mapper_cycles, 4) if mapper_cycles else None,
    }


def coverage(mapping: dict, sim: dict | None, network_macs: int) -> dict:
    """What the simulation covered: ``tiles`` (each tile's MACs, once) or the layers run whole
    (a repeated layer counts every instance: they are identical), and their share of the
    network's MACs (unmappable layers included)."""
    sim = sim or {}

    def share(m):
        return round(m / network_macs, 6) if network_macs else 0.0

    mapped = {e["name"]: e for e in mapping.get("layers", []) if e.get("status") == "mapped"}
    layers_total = sum(e.get("count", 1) for e in mapping.get("layers", []))
    if sim.get("layers"):
        ran = [mapped[r["layer"]] for r in sim["layers"] if r["layer"] in mapped]
        macs = sum(e["macs"] * e.get("count", 1) for e in ran)
        return {"scope": sim.get("scope", "layers"), "layers": sum(e.get("count", 1) for e in ran),
                "distinct_layers": len(ran), "layers_total": layers_total, "macs": macs, "mac_share": share(macs)}
    if sim.get("tiles"):
        macs = sum(prod(t["tile"].values()) for t in sim["tiles"])
        return {"scope": "tiles", "tiles": len(sim["tiles"]), "layers": len({t["layer"] for t in sim["tiles"]}),
                "layers_total": layers_total, "macs": macs, "mac_share": share(macs)}
    return {"scope": None, "layers_total": layers_total, "macs": 0, "mac_share": 0.0}


def coverage_text(cov: dict) -> str:
    """One sentence on :func:`coverage`."""
    if cov.get("scope") is None:
        return "nothing simulated"
    if cov["scope"] == "tiles":
        return (f"{cov['tiles']} tile{'' if cov['tiles'] == 1 else 's'} of {cov['layers']} of the "
                f"{cov['layers_total']} array layers simulated (target.scope=tiles): {cov['macs']:,} MACs, "
                f"{fmt_share(cov['mac_share'])} of the network's")
    repeats = (f" ({cov['distinct_layers']} distinct, each repeat identical)"
               if cov["distinct_layers"] != cov["layers"] else "")
    return (f"{cov['layers']} of {cov['layers_total']} array layers run whole in RTL{repeats} "
            f"(target.scope={cov['scope']}): {cov['macs']:,} MACs, {fmt_share(cov['mac_share'])} of the network's")


def fmt_share(x: float) -> str:
    """A share in percent, two significant digits below 1 % (``0.027%``, not ``0.0%``)."""
    pct = 100 * x
    return f"{pct:.2g}%" if 0 < pct < 1 else f"{pct:.1f}%"


def at_1ghz(summary: dict) -> str:
    """The throughput at 1 GHz, as seed 004 §6 states its designs' (issue 44: the figures at each
    design's own clock first, this one labelled); empty when the design's clock is 1 GHz."""
    if summary.get("clock_mhz") in (None, 1000):
        return ""
    return f"; {summary['ops_per_cycle']:,.2f} GOP/s at 1 GHz, seed 004's convention"
