"""The ``asic`` target's standard-cell flow (:mod:`.asic`, issue 19), from Debian's ``qflow`` (Yosys,
ABC, OpenSTA, the OSU cell libraries), on ``lego_soc`` (the array and its memory system):

* **Area by module class** from a hierarchical synthesis (each module mapped on its own, as
  a bottom-up flow does: ``synth``, ``dfflibmap``, ABC with the library, fan-out buffering
  and gate sizing): the Liberty area of every cell, summed per module and multiplied by
  its instances; :data:`CLASSES` says which modules make a class; the array's own cells
  split into flip-flops (pipeline and delay registers) and the rest (operand multiplexers
  and interconnect). ABC runs without Yosys's default ``&fraig -x`` step, which does not
  finish on these designs (:data:`ABC_SCRIPT`).
* **Clock** from OpenSTA on the same netlist flattened after mapping (:func:`_yosys`), as
  :mod:`.timing` runs it: high-fan-out nets repaired with buffer trees (across the module
  boundaries too), a wire-load model, the memory macros in the timing graph (their access
  times), the slack unclamped: ``Fmax = 1 / (period - worst slack)``, with the worst paths by
  module class; its reports stay in ``sim/asic/``.
* **Power** at ``target.asic_mhz``: OpenSTA's ``report_power`` (the library's internal,
  switching and leakage tables), per module of the hierarchical netlist (linked on its own;
  a module's own power is its total less its instances'), each module's nets at the toggle
  rate its RTL signals had in simulation (Verilator's toggle coverage of the simulated
  tiles, from each run's start to its done: the array's modules), the others at
  ``target.activity`` (a stated default, not a measurement: the memory system, which the
  tile scope does not run); plus the SRAM macros at the reads and writes the runs made
  (Verilator's line coverage of the banks; assumed once a cycle each where no run covers them),
  and ``power_assumed_mw``, the part at a rate no run measured. This
  OpenSTA reads no VCD or SAIF and prints no per-instance power of a hierarchical
  instance, hence the per-module route.
* **SRAM macros** (:func:`sram_macro`): not synthesised, never left out of the totals; the
  PPU's 256-entry activation tables too (``lookup tables``: a macro per table, one per
  output lane, rather than 2,048 flip-flops and a 256-way multiplexer each).
* **The array alone** (``top="lego_top"``, ``target.asic_top=array``): every module then
  runs in the simulated tiles, so every toggle rate is measured; the power-gated delay
  registers (seed 004 §5.5) are priced at the rate of the array's registers, and
  :func:`_clock_gating` estimates what clock-gating cells would add.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from lego_build.errors import StageError
from lego_build.runtime.tools import Tool
from lego_build.targets import netcache, timing
from lego_build.targets.models import SCALE_TO, published, scaled, sram_macro
from lego_build.targets.yosys import rtl_sources

QFLOW_TECH = Path("/usr/share/qflow/tech")  # Debian's qflow-tech-* packages
INSTALL = "apt-get install -y qflow"
#: the flow's programs: qflow's Yosys (with ABC and the Liberty commands: not PyPI's WebAssembly
#: build, :mod:`.yosys`) and OpenSTA
YOSYS = Tool("yosys (qflow)", "LEGO_QFLOW_YOSYS", ("yosys",), INSTALL)
STA = Tool("sta (OpenSTA)", "LEGO_STA", ("sta",), INSTALL)
# ABC's mapping to a liberty library: Yosys's own script for one, less ``&fraig -x`` (which does not
# finish on these designs) and less ``dc2`` (its area-oriented rewriting turned the 32-bit adders of a
# PPU lane back into ripple chains: 164 MHz for the lane against 213 without it, and 2 % more area),
# with the AIG mapper ``&nf`` on structural choices, then ABC's fan-out buffering and gate sizing
ABC_SCRIPT = "strash\n&get -n\n&dch -f\n&nf\n&put\nbuffer -p\nupsize\ndnsize\nstime -p\n"
REGISTERS, INTERCONNECT, SRAM = "array registers", "array muxes and interconnect", "SRAM banks"
TABLES = "lookup tables"  # the PPU's activation tables (rtl_templates_free.mk_table), macros
# module name prefix -> area, power and timing class (the array's own cells are split by kind)
CLASSES = (("lego_mul", "FUs"), ("lego_acc", "FUs"), ("lego_mac", "FUs"), ("lego_add", "FUs"),
           ("lego_bitfusion", "FUs"), ("lego_ctrl", "controller"), ("lego_ppu", "PPU"), ("lego_fifo", "FIFOs"),
           ("lego_soc", "memory system (DMA, sequencer, AXI)"), ("lego_bank", SRAM), ("lego_table", TABLES))
PROBES = (0.1, 0.2)  # the toggle rates OpenSTA prices every module at (power is linear in between)


PIN_DIRECTION = r"\bpin\s*\(\s*\"?(\w+)\"?\s*\)\s*\{[^{}]*?\bdirection\s*:\s*(\w+)"  # a Liberty pin's direction


@dataclass(frozen=True)
class Library:
    """A Liberty file and what the flow needs from it: cell areas (µm²), which cells are
    flip-flops, the feature size (nm), the supply (V), and per cell its pins' directions
    (``input``/``output``, for :mod:`.timing`'s netlist repair)."""

    path: Path
    node_nm: float
    vdd: float
    area: dict
    flops: frozenset
    leakage_nw: dict
    pins: dict

    @classmethod
    def load(cls, spec: str, node_nm: float = 0.0) -> Library:
        """``spec``: a qflow technology name (``osu018``: its ``<name>_stdcells.lib``) or a Liberty path;
        ``node_nm`` its feature size (0: from an OSU library's name, ``osu018`` = 0.18 µm)."""
        path = Path(spec)
        if not path.suffix:
            path = QFLOW_TECH / spec / f"{spec}_stdcells.lib"
        if not path.is_file():
            raise StageError(f"target.library={spec}: no Liberty file at {path}; install the cell libraries "
                             f"({INSTALL}) or give a .lib path")
        text = path.read_text(errors="replace")
        area, leak, flops, pins = {}, {}, set(), {}
        for m in re.finditer(r"\bcell\s*\(\s*\"?(\w+)\"?\s*\)\s*\{", text):
            body = text[m.end():m.end() + 20000]
            nxt = re.search(r"\bcell\s*\(", body)
            body = body[:nxt.start()] if nxt else body
            a = re.search(r"\barea\s*:\s*([\d.eE+-]+)", body)
            lk = re.search(r"\bcell_leakage_power\s*:\s*([\d.eE+-]+)", body)
            area[m.group(1)] = float(a.group(1)) if a else 0.0
            leak[m.group(1)] = float(lk.group(1)) if lk else 0.0
            if re.search(r"\bff\s*\(", body):
                flops.add(m.group(1))
            pins[m.group(1)] = dict(re.findall(PIN_DIRECTION, body))
        volt = re.search(r"\bnom_voltage\s*:\s*([\d.]+)", text)
        osu = re.match(r"osu(\d{3})", path.stem)  # osu018: 0.18 µm
        node = node_nm or (int(osu.group(1)) * 10.0 if osu else 0.0)
        if not area or not volt:
            raise StageError(f"target.library={spec}: {path} has no cells or no nom_voltage; give a Liberty file")
        if not node:
            raise StageError(f"target.library={spec}: cannot tell its node from the name; set target.node_nm")
        return cls(path, node, float(volt.group(1)), area, frozenset(flops), leak, pins)


def require_asic_tools(library: str, node_nm: float = 0.0) -> None:
    """Yosys and OpenSTA (Debian's qflow brings both) and the Liberty file; a one-line error if missing."""
    YOSYS.path()
    STA.path()
    Library.load(library, node_nm)


#: what a synthesis leaves in its directory for the steps after it
NETLIST_FILES = ("stat.txt", "netlist.v", "netlist.json", "flat.json")


def _yosys(rtl: Path, files: list[str], banks: list[str], lib: Library, top: str, out: Path) -> None:
    """Synthesise ``top`` to ``lib``'s cells into ``out`` (:data:`NETLIST_FILES`), or take the
    netlists of an earlier synthesis of the same Verilog, library, options and Yosys (a
    ``target.seed`` or ``target.scope`` change, a calibration after a build, another design
    directory of the same arch), which :mod:`lego_build.targets.netcache` keeps."""
    yosys = YOSYS.path()
    abc = out / "abc.script"
    abc.write_text(ABC_SCRIPT)

    def steps(src: str, dst: str) -> list[str]:
        return [
            f"read_verilog {' '.join(f'{src}/{f}' for f in files)}",
            *([f"blackbox {' '.join(banks)}"] if banks else []),
            f"hierarchy -top {top}", f"synth -top {top}",
            f"dfflibmap -liberty {lib.path}", f"abc -liberty {lib.path} -script {dst}/abc.script",
            "opt_clean -purge", "setundef -zero", "splitnets -ports", "opt_clean",
            f"tee -q -o {dst}/stat.txt stat -liberty {lib.path}",
            f"write_verilog -noattr -noexpr -nohex -nodec {dst}/netlist.v", f"write_json {dst}/netlist.json",
            # the same netlist flattened for timing: each module as ABC mapped it on its own (ABC's
            # restructuring holds up on a module and not on the whole design at once: a flat synthesis of
            # the default design left its output banks' 32-bit accumulate adders rippling, 7.9 ns
            # against 4.3), joined for one timing graph
            "flatten", "opt_clean -purge", f"write_json {dst}/flat.json"]

    inputs = [lib.path, *(rtl / f for f in files)]
    cached = netcache.entry(netcache.key(yosys, steps("<rtl>", "<out>"), ABC_SCRIPT, inputs))
    if netcache.take(cached, NETLIST_FILES, out):
        return
    proc = subprocess.run([yosys, "-q", "-p", "; ".join(steps(str(rtl), str(out)))], capture_output=True, text=True)
    if proc.returncode != 0 or not (out / "netlist.json").exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise StageError(f"yosys (standard cells) failed: {tail[0]}")
    if cached is not None:
        netcache.store(out, cached, NETLIST_FILES)


def _sta(netlist: Path, lib: Library, tops: list[str], period_ns: float, activity: float) -> dict:
    """Per module of ``tops``, OpenSTA's total, sequential and combinational power (W), every
    net and every input port toggling at ``activity`` per cycle (the clock's own, from its period); the SRAM
    macros are modules the netlist does not define, black boxes to OpenSTA. This OpenSTA
    (2.0.17) takes ``-global`` activities per clock period but ``-input`` ones per second (its
    ``-input_ports`` has no effect), and does not toggle ports without one, so a module fed from
    its ports (a multiplier, a PPU lane) read near zero dynamic power before issue 44."""
    lines = [f"read_liberty {lib.path}", f"read_verilog {netlist}"]
    out: dict = {"power_w": {}}
    for k, top in enumerate(tops):  # OpenSTA consumes the netlist it links: read it again for each
        lines += [*([f"read_verilog {netlist}"] if k else []), f"link_design {top}",
                  f"create_clock -name clk -period {period_ns} [get_ports clk]",
                  f"set_power_activity -global -activity {activity:g}",
                  f"set_power_activity -input -activity {activity * 1e9 / period_ns:g}",
                  f"puts \"MODULE {top}\"", "report_power"]
    script = netlist.with_suffix(".sta.tcl")
    script.write_text("\n".join(lines) + "\n")
    proc = subprocess.run([STA.path(), "-exit", str(script)],
                          capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    current = None
    for ln in text.splitlines():
        if ln.startswith("MODULE "):
            current = ln.split()[1]
        elif ln.startswith(("Sequential", "Combinational")) and current is not None and len(ln.split()) >= 5:
            out.setdefault(f"{ln.split()[0].lower()}_w", {})[current] = float(ln.split()[4])
        elif ln.startswith("Total") and current is not None and len(ln.split()) >= 5:
            out["power_w"][current] = float(ln.split()[4])
            current = None
    if len(out["power_w"]) != len(tops):
        err = [ln for ln in text.splitlines() if ln.startswith("Error")][:1] or text.strip().splitlines()[-1:]
        raise StageError(f"OpenSTA failed on {netlist.name}: {err[0] if err else 'no output'}")
    return out


def _modules(netlist: dict, lib: Library, banks: list[str]) -> dict:
    """Per module: own cell area, own flip-flop area and flip-flops (with the names of the net
    each drives, ``"name[i]"``, among them the RTL register bit it holds), its instances of other modules, and
    apart its instances of the memory macros ``banks`` (the model prices them)."""
    mods = {}
    for name, mod in netlist["modules"].items():
        if name in banks:
            continue
        own = ff = leak = 0.0
        nff = 0
        subs: dict = {}
        macros: dict = {}
        names: dict = {}
        for net, rec in sorted(mod["netnames"].items()):
            if not rec.get("hide_name"):
                split = len(rec["bits"]) == 1 and net.endswith("]")  # a bit of a net split by splitnets
                for i, bit in enumerate(rec["bits"]):
                    names.setdefault(bit, []).append(net if split else f"{net}[{i}]")
        q_nets = []
        for cell in mod["cells"].values():
            t = cell["type"]
            if t in lib.area:
                own += lib.area[t]
                leak += lib.leakage_nw.get(t, 0.0)
                ff += lib.area[t] if t in lib.flops else 0.0
                nff += t in lib.flops
                if t in lib.flops:
                    q_nets.append(tuple(names.get(next(iter(cell["connections"].get("Q", [None])), None), ())))
            elif t in banks:
                macros[t] = macros.get(t, 0) + 1
            elif not t.startswith("$"):
                subs[t] = subs.get(t, 0) + 1
        q_bits = {next(iter(c["connections"].get("Q", [None])), None) for c in mod["cells"].values()
                  if c["type"] in lib.flops}
        nets = [tuple(names[b]) for b in sorted(names, key=str) if b not in q_bits and isinstance(b, int)]
        mods[name] = {"area": own, "leak_nw": leak, "ff": ff, "flops": nff, "subs": subs, "macros": macros,
                      "q_nets": q_nets, "nets": nets}
    return mods


def _tables(mods: dict, counts: dict, lib: Library) -> list[dict]:
    """The lookup-table macros (``lego_table_w<W>_d<D>``) under the top, priced by the SRAM
    model (:func:`sram_macro`: a register file this small costs more per bit, so this is a
    lower bound) with their instance counts."""
    found: dict = {}
    for m, n in counts.items():
        for t, k in mods[m]["macros"].items():
            if t.startswith("lego_table_"):
                found[t] = found.get(t, 0) + n * k
    out = []
    for t, k in sorted(found.items()):
        w, d = (int(x) for x in re.fullmatch(r"lego_table_w(\d+)_d(\d+)", t).groups())
        out.append({"width": w, "depth": d, "count": k, **sram_macro(w, d, lib)})
    return out


def _class(module: str) -> str:
    return next((c for p, c in CLASSES if module.startswith(p)), INTERCONNECT)


def _counts(mods: dict, top: str) -> dict:
    """Instances of every module under ``top`` (``top`` once)."""
    out: dict = {}

    def walk(m: str, n: int) -> None:
        out[m] = out.get(m, 0) + n
        for s, k in mods[m]["subs"].items():
            walk(s, n * k)
    walk(top, 1)
    return out


def _clock_gating(measured: dict | None, counts: dict, mods: dict, own) -> dict:
    """What clock-gating cells at the power-gating enables would save (seed 004 §5.5 gates
    the registers' clock; Yosys maps a clock enable to a multiplexer in front of the flip-flop,
    whose clock pin still toggles, and the OSU libraries have no integrated clock-gating cell):
    a flip-flop's clock power is the array's sequential power at no data activity over its
    flip-flops (OpenSTA's figure), saved for the gated bits in the cycles their dataflow is
    off (``measured["gated"]``, from the simulated runs), less one always-clocked gating cell
    per delay block, costed as one flip-flop. An estimate, reported apart from the totals."""
    gated = (measured or {}).get("gated") or {}
    if "lego_top" not in counts or not gated.get("bits") or not measured.get("cycles") or not mods["lego_top"]["flops"]:
        return {}
    per_flop = own("sequential_w", "lego_top", 0.0) / mods["lego_top"]["flops"]
    saved = per_flop * (gated["bit_cycles"] / measured["cycles"] - gated["blocks"])
    return {"gated_bits": gated["bits"], "blocks": gated["blocks"],
            "off_fraction": round(gated["bit_cycles"] / (measured["cycles"] * gated["bits"]), 4),
            "flop_clock_uw": round(per_flop * 1e6, 3), "saved_mw": round(saved * 1e3, 3)}


def _named_rate(nets: list, rec: dict, per_bit: float, fallback: float) -> float:
    """The mean measured toggle rate of netlist nets, each by the RTL signal bit one of its
    names is (``rec["bit_toggles"]``); ``fallback`` where no name is found.

    A module's flip-flops take the rate of the nets they drive (the register, or a wire
    assigned from it), so registers that synthesis merged (duplicate delay lines) or removed
    do not count; its other cells take that of its distinct named nets that no flip-flop
    drives (ports and the RTL wires that survive synthesis; merged nets count once)."""
    bits = rec.get("bit_toggles") or {}
    found = [next(bits[n] for n in names if n in bits) for names in nets if any(n in bits for n in names)]
    return min(1.0, sum(found) / (len(found) * per_bit)) if found else fallback


def _source(measured: list[str], modules: dict, activity: float) -> str:
    """Where the toggle rates come from, in words for the report."""
    rest = sorted(set(modules) - set(measured))
    if not measured:
        return f"{activity:g} everywhere (default)"
    if not rest:
        return f"measured in simulation for all {len(measured)} modules"
    return f"measured in simulation for {len(measured)} of {len(modules)} modules, the default {activity:g} for " \
        + ", ".join(rest)


def _rates(measured: dict | None, counts: dict, mods: dict, activity: float) -> tuple[dict, dict, list]:
    """Per module under the top, the toggle rate of its cells and of its flip-flops, per instance and
    cycle, from the simulated runs' toggle counts (``measured``, :func:`implement`), ``activity``
    where they do not cover it; and the modules measured."""
    rates = {m: activity for m in counts}
    reg_rates = dict(rates)
    measured_mods = []
    for m, rec in sorted(((measured or {}).get("modules") or {}).items()):
        if m in counts and rec["bits"] and measured["cycles"]:
            per_bit = counts[m] * measured["cycles"]
            rates[m] = min(1.0, rec["toggles"] / (rec["bits"] * per_bit))
            reg_bits = rec.get("reg_bits", 0)
            if reg_bits and reg_bits < rec["bits"]:  # registers apart from the rest
                reg_rates[m] = _named_rate(mods[m]["q_nets"], rec, per_bit,
                                           min(1.0, rec["reg_toggles"] / (reg_bits * per_bit)))
                rates[m] = _named_rate(mods[m]["nets"], rec, per_bit, min(1.0, (rec["toggles"] - rec["reg_toggles"])
                                                                         / ((rec["bits"] - reg_bits) * per_bit)))
            else:
                reg_rates[m] = rates[m]
            measured_mods.append(m)
    return rates, reg_rates, measured_mods


def _bank_module(width: int, depth: int, ways: int) -> str:
    """The bank module of a macro ``width x depth`` that is one of ``ways`` sub-banks."""
    return f"lego_bank_w{width}_d{depth * ways}" + (f"_r{ways}" if ways > 1 else "")


def _sram_accesses(macros: list, measured: dict | None) -> dict:
    """Per bank module: (its macro's figures, reads and writes per cycle). Measured where the
    simulated runs counted them (:func:`lego_build.sim.verilator.bank_accesses`: the RTL's banks
    read on every clock edge, writes as the runs made them); otherwise assumed: each bank (two
    ping-pong halves of ``ways`` sub-banks) read and written once a cycle, one macro per access
    (the array reads one half while the DMA fills the other; outputs read-modify-write)."""
    counted = (measured or {}).get("banks") or {}
    cycles = (measured or {}).get("cycles") or 0
    out: dict = {}
    for w, d, k, ways, s in macros:
        name = _bank_module(w, d, ways)
        if name in counted and cycles:
            out[name] = (s, {"reads": counted[name]["reads"] / cycles, "writes": counted[name]["writes"] / cycles,
                             "source": "measured"})
        else:
            prev = out.get(name, (s, {"reads": 0.0, "writes": 0.0}))[1]
            out[name] = (s, {"reads": prev["reads"] + k / (2 * ways), "writes": prev["writes"] + k / (2 * ways),
                             "source": "assumed"})
    return out


def _memories(buffers, lib: Library, measured: dict | None, mods: dict, counts: dict, mhz: float, area: dict,
              watts: dict) -> tuple[list, dict, list, float]:
    """The SRAM macros of ``buffers`` and the lookup tables, priced into ``area`` and ``watts`` (W at
    ``mhz``) for :func:`implement`: the macros at their accesses (:func:`_sram_accesses`), each table
    read once a cycle (its writes are configuration). Returns the macros, their accesses, the tables
    and the W at an assumed rather than measured rate."""
    macros = [(w, d, k, ways, sram_macro(w, d, lib, ports)) for w, d, k, ways, ports in buffers]
    area[SRAM] = sum(k * s["area_um2"] for _, _, k, _, s in macros)
    sram = _sram_accesses(macros, measured)
    watts[SRAM] = sum(k * s["leakage_nw"] * 1e-9 for _, _, k, _, s in macros) + sum(
        (a["reads"] * s["read_pj"] + a["writes"] * s["write_pj"]) * 1e-12 * mhz * 1e6 for s, a in sram.values())
    assumed = sum((a["reads"] * s["read_pj"] + a["writes"] * s["write_pj"]) * 1e-12 * mhz * 1e6
                  for s, a in sram.values() if a["source"] == "assumed")
    tables = _tables(mods, counts, lib)
    if tables:
        area[TABLES] = sum(t["count"] * t["area_um2"] for t in tables)
        watts[TABLES] = sum(t["count"] * (t["leakage_nw"] * 1e-9 + t["read_pj"] * 1e-12 * mhz * 1e6) for t in tables)
        assumed += sum(t["count"] * t["read_pj"] * 1e-12 * mhz * 1e6 for t in tables)
    return macros, sram, tables, assumed


def implement(rtl: Path, buffers: list[tuple[int, int, int, int, int]], library: str, mhz: float, activity: float,
              work: Path, measured: dict | None = None, node_nm: float = 0.0, top: str = "lego_soc",
              keep: Path | None = None, clock_mhz: float | None = None) -> dict:
    """Area, Fmax and power of ``rtl`` (its module ``top``: ``lego_soc``, or the array alone,
    ``lego_top``); ``buffers`` are ``(width, depth, count,
    sub_banks, ports)`` of the SRAM macros: ``count`` macros of ``width x depth`` in all (both
    ping-pong halves), a bank being ``sub_banks`` of them (:func:`rtl_templates_free.mk_bank_rows`),
    each with one port or two (:func:`~lego_build.targets.models.sram_macro`).
    ``measured``: ``{"cycles": n, "modules": {module: toggle counts}}`` from Verilator's toggle
    coverage of simulated runs (:func:`lego_build.sim.verilator.toggle_rates`): a module's
    flip-flops then toggle at the measured rate of the register bits they hold (only those
    that survive synthesis), its other cells at that of its distinct named nets
    (:func:`_named_rate`), per instance and cycle; the modules the runs
    do not cover at ``activity``. Power gating (seed 004 §5.5) shows in the first: a gated
    delay register holds its value. ``keep``: a directory for the reports (``timing.txt``, the
    worst paths; ``synthesis.txt``, Yosys's cell statistics per module). ``clock_mhz``: the
    clock target STA checks (default ``mhz``); the power is priced at ``mhz`` and, apart, at the
    achieved clock (the target, or Fmax if lower): leakage stays, the rest scales with the clock."""
    lib = Library.load(library, node_nm)
    files, banks = rtl_sources(rtl)
    hier, flat = work / "hier", work / "flat"
    for d in (hier, flat):
        d.mkdir(parents=True, exist_ok=True)
    print(f"simulate: asic: synthesising to {lib.path.name}, module by module ...", flush=True)
    _yosys(rtl, files, banks, lib, top, hier)
    shutil.copyfile(hier / "flat.json", flat / "netlist.json")
    yosys_area = float(re.findall(rf"Chip area for (?:top )?module '\\{top}': ([\d.]+)",
                                  (hier / "stat.txt").read_text())[-1])
    mods = _modules(json.loads((hier / "netlist.json").read_text()), lib, banks)
    counts = _counts(mods, top)
    period = 1000.0 / mhz
    print("simulate: asic: static timing and power (OpenSTA) ...", flush=True)
    hier_json = json.loads((hier / "netlist.json").read_text())
    timed = timing.analyse(STA.path(), flat, hier_json, lib, top, 1000.0 / (clock_mhz or mhz), _class)
    rates, reg_rates, measured_mods = _rates(measured, counts, mods, activity)
    # a module's power is linear in its nets' toggle rate (the clock's share is not): OpenSTA at
    # two rates gives, per module with its instances, the power at no toggling and per unit rate,
    # so each module's own cells (its total less its instances', at the same rate) are priced
    # at its own rate
    probes = [_sta(hier / "netlist.v", lib, sorted(counts), period, a) for a in PROBES]
    fit = {}
    for key in ("power_w", "sequential_w"):
        lo, hi = (pr.get(key, {}) for pr in probes)
        fit[key] = {m: (lo.get(m, 0.0) - PROBES[0] * (hi.get(m, 0.0) - lo.get(m, 0.0)) / (PROBES[1] - PROBES[0]),
                        (hi.get(m, 0.0) - lo.get(m, 0.0)) / (PROBES[1] - PROBES[0])) for m in counts}

    def own(key: str, m: str, rate: float) -> float:
        base, slope = fit[key][m]
        for s, k in mods[m]["subs"].items():
            base, slope = base - k * fit[key][s][0], slope - k * fit[key][s][1]
        return base + rate * slope

    area: dict = {}
    watts: dict = {}
    assumed = 0.0  # W at a rate no simulation measured (target.activity, or the assumed SRAM and table accesses)
    for m, n in counts.items():
        # a module's flip-flops at its registers' rate, its other cells at its other nets' rate
        flops = own("sequential_w", m, reg_rates[m])
        rest = own("power_w", m, rates[m]) - own("sequential_w", m, rates[m])
        if m == "lego_top":  # the array's own cells: registers, and the rest
            area[REGISTERS] = area.get(REGISTERS, 0.0) + n * mods[m]["ff"]
            area[INTERCONNECT] = area.get(INTERCONNECT, 0.0) + n * (mods[m]["area"] - mods[m]["ff"])
            watts[REGISTERS] = watts.get(REGISTERS, 0.0) + n * flops
            watts[INTERCONNECT] = watts.get(INTERCONNECT, 0.0) + n * rest
        else:
            c = _class(m)
            area[c] = area.get(c, 0.0) + n * mods[m]["area"]
            watts[c] = watts.get(c, 0.0) + n * (flops + rest)
        if m not in measured_mods:
            assumed += n * (flops + rest)
    macros, sram, tables, assumed_macros = _memories(buffers, lib, measured, mods, counts, mhz, area, watts)
    assumed += assumed_macros
    fmax = timed["fmax_mhz"]
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(flat / "timing.txt", keep / "timing.txt")
        shutil.copyfile(hier / "stat.txt", keep / "synthesis.txt")
    gating = _clock_gating(measured, counts, mods, own)
    logic = {k: round(v) for k, v in sorted(area.items())}
    total_mm2, total_mw = sum(area.values()) / 1e6, sum(watts.values()) * 1e3
    leak_mw = 1e-6 * (sum(n * mods[m]["leak_nw"] for m, n in counts.items())
                      + sum(k * s["leakage_nw"] for _, _, k, _, s in macros)
                      + sum(t["count"] * t["leakage_nw"] for t in tables))
    achieved = min(clock_mhz or mhz, fmax)
    return {
        "library": lib.path.name, "node_nm": lib.node_nm, "vdd": lib.vdd,
        "area_um2": logic, "area_mm2": round(sum(area.values()) / 1e6, 4), "yosys_logic_um2": round(yosys_area),
        "flip_flops": sum(n * mods[m]["flops"] for m, n in counts.items()),
        "array_flop_um2": round(mods["lego_top"]["ff"] / max(1, mods["lego_top"]["flops"]), 2) if "lego_top" in mods
        else None,
        "fmax_mhz": fmax, "critical_path": [timed["paths"][0]["from"], timed["paths"][0]["to"]], "timing": timed,
        "power_mhz": mhz, "activity": activity,
        "activity_source": _source(measured_mods, counts, activity),
        "top": top, "toggle_rates": {m: round(r, 5) for m, r in sorted(rates.items())},
        "register_toggle_rates": {m: round(reg_rates[m], 5) for m in sorted(measured_mods) if reg_rates[m] != rates[m]},
        "power_mw": {k: round(v * 1e3, 3) for k, v in sorted(watts.items())},
        "power_total_mw": round(sum(watts.values()) * 1e3, 3), "leakage_mw": round(leak_mw, 3),
        "power_assumed_mw": round(assumed * 1e3, 3),
        "achieved_mhz": round(achieved, 2),
        "power_at_achieved_mw": round(leak_mw + (total_mw - leak_mw) * achieved / mhz, 3),
        **({"clock_gating": gating} if gating else {}),
        "scaled": [scaled(total_mm2, fmax, total_mw, lib, n, v) for n, v in SCALE_TO if n < lib.node_nm],
        "published": [x for n, v in SCALE_TO if n < lib.node_nm
                      for x in [published(total_mm2, fmax, total_mw, total_mw - leak_mw, lib, n, v)] if x],
        "sram": [{"width": w, "depth": d, "count": k, "sub_banks": ways, "ports": ports,
                  **{x: round(y, 4) for x, y in s.items()}}
                 for (w, d, k, ways, s), (*_, ports) in zip(macros, buffers)],
        "sram_accesses": {name: {"reads_per_cycle": round(a["reads"], 4), "writes_per_cycle": round(a["writes"], 4),
                                 "source": a["source"]} for name, (_, a) in sorted(sram.items())},
        "tables": [{k: round(v, 4) if isinstance(v, float) else v for k, v in t.items()} for t in tables],
    }
