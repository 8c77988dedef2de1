"""``target.flow=asic`` (issue 19): lint, simulate with Verilator's toggle coverage
(``target.scope``: tiles, whole layers, or ``none``), then area by module class, Fmax and
power from the standard-cell flow (:mod:`.stdcell`: Yosys + ABC + OpenSTA on a Liberty
library, Debian's ``qflow``), each simulated run's energy, and the cost model's per-level
energy checked against them (:mod:`.energy_check`).

The simulated toggles price the modules the runs cover; the others toggle at
``target.activity`` (a stated default). ``target.asic_top``: the design with its memory
system (``lego_soc``) or the array alone (``lego_top``).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from lego_build.config.schema import ASIC_TOPS
from lego_build.emit.top import operand_stages
from lego_build.ir.dag import DelaySpec
from lego_build.runtime.artifacts import read_artifact
from lego_build.sim.verilator import VERILATOR
from lego_build.targets import energy_check, pnr, stdcell
from lego_build.targets.base import Product, Target
from lego_build.targets.verilator import LINT, lint
from rtl_templates_free.primitives import PPU_LANE_STAGES


def gated_blocks(dag, runs: dict[str, int]) -> dict:
    """The power-gated delay blocks (seed 004 §5.5) and how long they were off in the runs:
    ``runs`` maps a dataflow to the cycles simulated in it; a block clocked only in the
    dataflows of its enable is off in the others. ``bit_cycles``: register bits x cycles off."""
    blocks = [(e.width * e.delay, e.enable) for e in dag.edges if e.delay and e.enable]
    blocks += [(n.width * n.latency, n.spec(DelaySpec).enable) for n in dag.nodes
               if n.kind == "delay" and n.spec(DelaySpec).enable]
    return {"blocks": len(blocks), "bits": sum(b for b, _ in blocks),
            "bit_cycles": sum(b * c for b, on in blocks for df, c in runs.items() if df not in on)}


def physical(cfg, design_dir: Path, activity: dict | None = None, runs: list[dict] = (),
             layers: list[dict] = ()) -> dict:
    """Area, Fmax and power of the design's RTL (:mod:`.stdcell`); the SRAM macros are its
    banks: per tensor, lanes (shared output lanes: :mod:`lego_build.ir.outshare`) x two halves x
    sub-banks; ``activity`` the toggles the
    simulated ``runs`` made (modules it does not cover toggle at ``target.activity``); with
    runs, each one's energy and the cost model's check against them (``layers``: the mapping)."""
    dag, hm = read_artifact(design_dir, "dag.json"), read_artifact(design_dir, "rtl/host_interface.json")
    ways = {t: hm.rows_of(i) for i, t in enumerate(hm.input_tensors)}
    # the output banks read and write in the same cycle (read-modify-write): two-port macros
    buffers = [(b.bits, b.depth // ways.get(b.tensor, 1), 2 * b.banks * ways.get(b.tensor, 1), ways.get(b.tensor, 1),
                2 if b.tensor == hm.output_tensor else 1) for b in dag.buffers]
    if activity:
        activity = {**activity, "gated": gated_blocks(dag, activity.pop("dataflow_cycles", {}))}
    with tempfile.TemporaryDirectory(prefix="lego_build-asic-") as tmp:
        out = stdcell.implement(design_dir / "rtl", buffers, cfg.target.library, cfg.target.asic_mhz,
                             cfg.target.activity, Path(tmp), activity, cfg.target.node_nm,
                             ASIC_TOPS[cfg.target.asic_top], design_dir / "sim" / "asic", cfg.arch.clock_mhz)
        if cfg.target.pnr:
            out["pnr"] = pnr.after_flow(Path(tmp), stdcell.Library.load(cfg.target.library, cfg.target.node_nm),
                                        out["top"], out["timing"]["period_ns"], design_dir / "sim" / "asic" / "pnr")
    print(f"simulate: asic ({out['library']}, {out['node_nm']:g} nm): {out['area_mm2']} mm2 with SRAM, "
          f"Fmax {out['fmax_mhz']} MHz, {out['power_total_mw']} mW at {out['power_mhz']:g} MHz "
          f"(toggle rates: {out['activity_source']})")
    out["pipeline"] = pipeline(dag, out.get("array_flop_um2"))
    if runs:
        out["runs"] = run_energy(out, runs)
        out["model_check"] = energy_check.check(out, runs, layers)
    return out


def pipeline(dag, flop_um2: float | None) -> dict:
    """The pipeline stages the generator added for the clock (issue 44) in the array: operand
    registers before the multipliers (:func:`lego_build.emit.top.operand_stages`), their bits,
    their area at the array's mean flip-flop area as synthesised, and the cycles they add to
    the array's latency (balanced by the delay-matching LP, counted by the latency model)."""
    stages = operand_stages(dag)
    bits = sum(b * k for _, _, b, k in stages)
    return {"multipliers": len({n for n, *_ in stages}), "bits": bits,
            "area_um2": round(bits * flop_um2) if flop_um2 else None,
            "cycles": max((k for *_, k in stages), default=0), "array_latency": dag.latency}


def run_energy(asic_figures: dict, runs: list[dict]) -> list[dict]:
    """Per simulated run (a tile's, or a whole layer's), its energy (nJ) at the asic clock:
    the design's power (with the toggle rates of all the runs) times the run's measured
    cycles over the clock (issue 19)."""
    mw, mhz = asic_figures["power_total_mw"], asic_figures["power_mhz"]
    return [{**{k: v for k, v in r.items() if k != "full"}, "energy_nj": round(mw * r["cycles"] / mhz, 3)}
            for r in runs]


def _sram_words(a: dict) -> str:
    """How the banks' accesses were priced, and the power at a rate no run measured, for the report."""
    acc = a.get("sram_accesses") or {}
    measured = sorted(k for k, v in acc.items() if v["source"] == "measured")
    banks = (f"the banks at the reads and writes the runs made ({len(measured)} of {len(acc)} bank kinds counted)"
             if measured else "the banks read and written once a cycle (assumed)")
    if "power_assumed_mw" not in a or not a["power_total_mw"]:
        return banks
    return f"{banks}; {a['power_assumed_mw']} mW ({a['power_assumed_mw'] / a['power_total_mw']:.0%}) at an assumed rate"


def asic_lines(a: dict) -> list[str]:
    """``report.md``: the standard-cell figures, area and power by module class, the cost model's check."""
    total = sum(a["area_um2"].values())
    out = [f"### Physical figures ({a['library']}, {a['node_nm']:g} nm, {a['vdd']:g} V)", "",
           f"* {'the array alone' if a.get('top') == 'lego_top' else 'the array and its memory system'}: "
           f"area **{a['area_mm2']} mm²** (SRAM banks included), Fmax **{a['fmax_mhz']} MHz** (worst path "
           f"{a['critical_path'][0]} -> {a['critical_path'][1]}), power **{a['power_total_mw']} mW** at "
           f"{a['power_mhz']:g} MHz ({a['power_at_achieved_mw']} mW at the achieved {a['achieved_mhz']:g} MHz, "
           f"{a['leakage_mw']} mW of it leakage); toggle rates {a['activity_source']}; {_sram_words(a)}", "",
           "| class | area (µm²) | share | power (mW) |", "|---|---:|---:|---:|"]
    for c, v in sorted(a["area_um2"].items(), key=lambda kv: -kv[1]):
        out.append(f"| {c} | {v:,} | {v / total:.1%} | {a['power_mw'].get(c, 0.0):,.3f} |")
    out += timing_lines(a.get("timing"))
    if a.get("pipeline", {}).get("bits"):
        pl = a["pipeline"]
        area = f", {pl['area_um2']:,} µm² ({pl['area_um2'] / total:.2%} of the area)" if pl["area_um2"] else ""
        out += ["", f"Pipeline stages added for the clock (issue 44): operand registers before {pl['multipliers']} "
                f"multipliers, {pl['bits']:,} bits{area}, {pl['cycles']} cycle(s) of the array's "
                f"{pl['array_latency']}-cycle latency (balanced by the delay-matching LP, counted by the latency "
                "model); in the memory system (in its area above): the storer's beat multiplexer, the PPU lanes' "
                f"{PPU_LANE_STAGES} stages, the activation table's output register and AXI W registered (with a "
                "skid register), the AXI addresses from burst registers, the walkers' geometry in registers."]
    out += pnr.lines(a.get("pnr"))
    if a.get("scaled"):
        out += ["", "Scaled to other nodes by classical scaling (an estimate, not a measurement: `scaled` in "
                "`lego_build/targets/models.py`): " + "; ".join(
                    f"{x['node_nm']:g} nm at {x['vdd']:g} V: {x['area_mm2']} mm², {x['fmax_mhz']} MHz, "
                    f"{x['power_mw']} mW at {a['power_mhz']:g} MHz" for x in a["scaled"])]
    if a.get("published"):
        out += ["", "Scaled by Stillmaker and Baas's published fits (Integration 58, 2017: HSPICE on PTM models; an "
                "estimate, not a measurement: `published` in `lego_build/targets/models.py`): " + "; ".join(
                    f"{x['node_nm']:g} nm at {x['vdd']:g} V: {x['area_mm2']} mm², {x['fmax_mhz']} MHz, "
                    f"{x['power_mw']} mW at {a['power_mhz']:g} MHz with leakage ({x['dynamic_mw']} mW dynamic)"
                    for x in a["published"])]
    if a.get("clock_gating"):
        g = a["clock_gating"]
        out += ["", f"Power gating (seed 004 §5.5): {g['gated_bits']} register bits in {g['blocks']} delay blocks "
                f"have a clock enable, off {g['off_fraction']:.0%} of the simulated cycles; their data toggles are "
                "gone from the measured figures above. With clock-gating cells at those enables (the library has "
                f"none) their clock pins would also rest: {g['saved_mw']:,.3f} mW less (an estimate: "
                f"{g['flop_clock_uw']} µW of clock per flip-flop, one gating cell per block)"]
    if a.get("model_check"):
        mc = a["model_check"]
        out += ["", f"Cost model against this hardware ({mc['runs']} simulated runs, {mc['macs']:,} MACs; pJ at "
                f"{mc['node_nm']:g} nm, the measured figures scaled by {mc['scale']:g}; "
                "`lego_build/targets/energy_check.py`, "
                "`doit calibrate` turns it into `arch.energy.table`):", "",
                "| level | model (pJ) | measured (pJ) | model error |", "|---|---:|---:|---:|"]
        out += [f"| {r['level']} | {r['model_pj']:,.1f} | {r['measured_pj']:,.1f} | "
                f"{'-' if r['error'] is None else format(r['error'], '+.1%')} |" for r in mc["levels"]]
        out += [f"| {c} (not in the model) | - | {v:,.1f} | - |" for c, v in mc["not_modelled_pj"].items()]
    if a.get("runs"):
        out += ["", "Energy of the simulated runs (power x measured cycles / clock): " + "; ".join(
            (f"{r['kind']} tile of {r['layer']} ({r['data']})" if "kind" in r else f"layer {r['layer']}")
            + f": {r['cycles']:,} cycles, {r['energy_nj']:,.1f} nJ" for r in a["runs"])]
    out += ["", "SRAM macros (the model of `sram_macro` in `lego_build/targets/models.py`): " + "; ".join(
        f"{m['count']} x {m['width']}b x {m['depth']}{', two-port' if m.get('ports') == 2 else ''} "
        f"({m['area_um2']:,.0f} µm², {m['read_pj']:.1f} pJ per access)"
        for m in a["sram"])]
    if a.get("tables"):
        out += ["", "Lookup-table macros (the PPU's activation tables, priced by the same model): " + "; ".join(
            f"{t['count']} x {t['width']}b x {t['depth']} ({t['area_um2']:,.0f} µm² each)" for t in a["tables"])]
    out += [""]
    return out


def timing_lines(t: dict | None) -> list[str]:
    """``report.md``: the timing (:mod:`.timing`): Fmax, the repair, the worst paths by class."""
    if not t:
        return []
    worst = t["paths"][0]
    verdict = (f"clock target {t['target_mhz']:g} MHz **met** (worst slack {t['slack_ns']:+.3f} ns)" if t["met"] else
               f"clock target {t['target_mhz']:g} MHz **missed** by {-t['slack_ns']:.3f} ns: the failing path "
               f"`{worst['from']}` ({worst['from_class']}) -> `{worst['to']}` ({worst['to_class']}), "
               f"{worst['levels']} levels, {worst['delay_ns']:.2f} ns")
    out = ["", f"Timing (OpenSTA on the flattened netlist, `sim/asic/timing.txt`): Fmax **{t['fmax_mhz']} MHz**; "
           f"{verdict}; {t['buffers']} buffers on "
           f"{t['buffered_nets']} nets of more than {t['max_fanout']} loads (the worst had {t['worst_fanout']}); "
           f"wires: {t['wire_load']}.", "",
           "| from | class | to | class | levels | delay (ns) |", "|---|---|---|---|---:|---:|"]
    out += [f"| `{p['from']}` | {p['from_class']} | `{p['to']}` | {p['to_class']} | {p['levels']} | "
            f"{p['delay_ns']:.2f} |" for p in t["paths"]]
    return out


def asic_rows(asic: dict) -> list[tuple[str, str]]:
    """``report.html``: the headline figures, each class's area and power, power gating, the model check."""
    rows = [("Standard cells", f"{asic['library']} ({asic['node_nm']:g} nm): {asic['area_mm2']} mm² with SRAM, "
                               f"Fmax {asic['fmax_mhz']} MHz, {asic['power_total_mw']} mW at {asic['power_mhz']:g} MHz "
                               f"(toggle rates {asic['activity_source']})")]
    rows += [(f"  {c}", f"{v:,} µm², {asic['power_mw'].get(c, 0.0):,.3f} mW")
             for c, v in sorted(asic["area_um2"].items(), key=lambda kv: -kv[1])]
    rows += pnr.rows(asic.get("pnr"))
    if asic.get("clock_gating"):
        g = asic["clock_gating"]
        rows.append(("Power gating", f"{g['gated_bits']} register bits clock-enabled, off {g['off_fraction']:.0%} of "
                                     f"the cycles; with clock-gating cells {g['saved_mw']:,.3f} mW less (estimate)"))
    for r in (asic.get("model_check") or {}).get("levels", []):
        err = "" if r["error"] is None else f", model error {r['error']:+.1%}"
        rows.append((f"Model check: {r['level']}", f"model {r['model_pj']:,.1f} pJ, measured "
                                                   f"{r['measured_pj']:,.1f} pJ at 28 nm{err}"))
    return rows


#: the physical figures; the summary carries area, Fmax and power
ASIC = Product("asic", "Standard cells", {"area_mm2": "area_mm2", "fmax_mhz": "fmax_mhz", "power_mw": "power_total_mw"},
               asic_lines, asic_rows)


def check(cfg) -> None:
    """The Liberty file of ``target.library`` (and its node) before any work; with ``target.pnr``
    the place-and-route tools and the technology's LEF."""
    lib = stdcell.Library.load(cfg.target.library, cfg.target.node_nm)
    if cfg.target.pnr:
        pnr.require(lib.path)


def run(cfg, design_dir: Path, inputs):
    from lego_build.sim.simulate import finish, simulate, simulated_runs  # numpy and the simulator

    checked = {"lint": lint(design_dir)}
    result = {**simulate(cfg, design_dir, inputs, coverage=True), "target": cfg.target.flow}
    activity = result.pop("activity", None)  # none when nothing ran: every net at the default rate
    runs = simulated_runs(result) if result["status"] != "skipped" else []
    checked["asic"] = physical(cfg, design_dir, activity, runs, inputs["mapping.json"].layers)
    return finish({**result, "products": checked}, design_dir)


TARGET = Target("asic", "lint, simulate with toggle coverage, then area, Fmax and power from Yosys + ABC + OpenSTA",
                run, tools=(VERILATOR, stdcell.YOSYS, stdcell.STA), products=(LINT, ASIC), simulates=True, check=check)
