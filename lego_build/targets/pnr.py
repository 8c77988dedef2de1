"""Post-route check of ``target=asic`` (issue 44, ``target.pnr=true``): the array placed and
routed with Debian qflow's tools, its wires extracted and timed again.

* **What is placed**: the array (``lego_top``) as the flow synthesised and repaired it for
  timing (:func:`lego_build.targets.timing.repair`: the same cells and buffer trees), flattened
  from the hierarchical netlist when the flow synthesised the whole design (the memory
  system's 56,000 more cells take hours to route on two cores). The SRAM banks and lookup
  tables are macros graywolf cannot place: their pins are the block's I/O pins, one per net,
  on its edge where the macros would abut it; they stay in the timing graph with their
  access times. The clock is ideal (no clock tree) and not routed.
* **Tools**, in qflow's order (its ``placement.sh`` and ``router.sh``), each run by this module:
  ``blif2cel.tcl`` (a BLIF written here, cells named as that script names them), ``graywolf``
  (seed fixed in the ``.par`` file), ``place2def.tcl``, ``qrouter`` (``standard_route``, which
  writes each net's routed RC tree), then that tree turned into SPEF here (:func:`spef`).
* **Timing** (:func:`lego_build.targets.timing.sta`, the flow's own script and constraints) on
  the placed netlist twice: before routing with the flow's wire-load model, after it with
  the SPEF read (``read_spef``); OpenSTA computes the wire delays from the extracted RC.

Everything stays in ``sim/asic/pnr/``: the logs, the placed netlist (``placed.v``; ``names.json``
maps its names back), the routed DEF (gzipped), the SPEF, both timing reports. The array of
the default 4x4 (36,600 cells) takes about 20 minutes.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from lego_build.errors import StageError
from lego_build.runtime.tools import Tool
from lego_build.targets import stdcell, timing
from lego_build.targets.pnr_def import SITE, arrange_pins, def_nets, pad_cells, unpad, wirelength_um
from lego_build.targets.pnr_netlist import Physical, edge_scale, parse, rename, spef

INSTALL = "apt-get install -y qflow"
GRAYWOLF = Tool("graywolf (qflow)", "LEGO_GRAYWOLF", ("graywolf",), INSTALL)
QROUTER = Tool("qrouter (qflow)", "LEGO_QROUTER", ("qrouter",), INSTALL)
#: qflow's Tcl scripts (blif2cel.tcl, place2def.tcl): Debian's qflow installs them here
QFLOW_SCRIPTS = Path("/usr/lib/qflow/scripts")
SCRIPTS_ENV = "LEGO_QFLOW_SCRIPTS"
SEED = 12345  # graywolf's random seed (its .par file): the same netlist places the same
PLACED = "lego_top"  # the module placed: the array


def scripts() -> Path:
    """qflow's script directory (``$LEGO_QFLOW_SCRIPTS`` overrides); a one-line error if missing."""
    path = Path(os.environ.get(SCRIPTS_ENV) or QFLOW_SCRIPTS)
    if not (path / "blif2cel.tcl").is_file() or not (path / "place2def.tcl").is_file():
        raise StageError(f"target.pnr: no qflow scripts (blif2cel.tcl, place2def.tcl) in {path}; {INSTALL} "
                         f"(or set {SCRIPTS_ENV})")
    return path


def tech_files(lib_path: Path) -> tuple[Path, Path]:
    """The LEF and graywolf ``.par`` file beside a qflow technology's Liberty file
    (``osu018_stdcells.lib``: ``osu018_stdcells.lef``, ``osu018.par``)."""
    lef = lib_path.with_suffix(".lef")
    par = lib_path.parent / f"{lib_path.parent.name}.par"
    if not lef.is_file() or not par.is_file():
        raise StageError(f"target.pnr: no LEF ({lef.name}) or graywolf .par ({par.name}) beside {lib_path}; "
                         "give a qflow technology as target.library")
    return lef, par


def require(lib_path: Path) -> None:
    """The place-and-route tools and technology files, before any work."""
    GRAYWOLF.path()
    QROUTER.path()
    scripts()
    tech_files(lib_path)


def _run(cmd: list[str], cwd: Path, log: Path, what: str, timeout: float | None = None) -> None:
    with open(log, "a") as fh:
        fh.write("$ " + " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd)) + "\n")
        fh.flush()
        proc = subprocess.run(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout)
    if proc.returncode != 0:
        raise StageError(f"pnr: {what} failed (exit {proc.returncode}); see {log.name}")


#: graywolf settings over the technology's ``.par``: the seed; its annealing at a quarter of the moves
#: per cell and temperature (``fast``; on lego_ctrl, 22 % more wire and 0.9 % less post-route Fmax
#: than at full effort, a quarter of the time); no global routing (channel tracks and feedthroughs, which
#: an over-the-cell router with six layers does not need, and which took longest on the array)
PAR = {"*random.seed": str(SEED), "TWSC*fast": "4", "TWSC*do.global.route": "off"}


def par_file(text: str) -> str:
    """The technology's graywolf ``.par`` text with :data:`PAR` set."""
    for key, value in PAR.items():
        line = f"{key} : {value}"
        text, n = re.subn(rf"^{re.escape(key)}\s*:.*$", line, text, flags=re.M)
        text += "" if n else f"{line}\n"
    return text


def place(work: Path, phys: Physical, lef: Path, par: Path, top: str) -> dict:
    """graywolf's placement of ``phys`` in ``work`` (qflow's ``placement.sh`` steps: the clock net
    ignored, :data:`PAR`), then ``place2def.tcl``: the unrouted DEF ``<top>.def``, its nets from
    ``phys`` (:func:`def_nets`), its pins moved to the edge (:func:`arrange_pins`)."""
    log = work / "place.log"
    log.write_text("")
    (work / f"{top}.blif").write_text(phys.blif)
    (work / f"{top}.cfg").write_text(f"read_lef {lef}\n")
    _run([QROUTER.path(), "-i", f"{top}.info", "-c", f"{top}.cfg"], work, log, "qrouter -i")
    _run(["tclsh", str(scripts() / "blif2cel.tcl"), "--blif", f"{top}.blif", "--lef", str(lef), "--cel", f"{top}.cel"],
         work, log, "blif2cel.tcl")
    cel, padded = pad_cells((work / f"{top}.cel").read_text())
    (work / f"{top}.cel").write_text(cel)
    (work / f"{top}.par").write_text(par_file(par.read_text()))
    (work / f"{top}.net").write_text("net clk ignore\n")  # the ideal clock: no pull on the placement
    _run([GRAYWOLF.path(), "-n", top], work, log, "graywolf")
    (work / f"{top}.obs").unlink(missing_ok=True)
    (work / f"{top}.pin").write_text("")  # no global routing, no pin file: the nets are written here
    _run(["tclsh", str(scripts() / "place2def.tcl"), top, "FILL"], work, log, "place2def.tcl")
    text = (work / f"{top}.def").read_text() if (work / f"{top}.def").is_file() else ""
    if "END NETS" not in text:
        raise StageError(f"pnr: place2def wrote no {top}.def; see place.log")
    text = re.sub(r"^NETS 0 ;?.*?END NETS", lambda _: def_nets(phys), text, count=1, flags=re.M | re.S)
    unit = float(re.search(r"UNITS DISTANCE MICRONS (\d+)", text).group(1))
    text = arrange_pins(unpad(text, padded, round(SITE * unit / 100)), phys, lef.read_text())
    (work / f"{top}.def").write_text(text)
    x0, y0, x1, y1 = (float(v) for v in re.search(r"DIEAREA \( (\S+) (\S+) \) \( (\S+) (\S+) \)", text).groups())
    return {"die_um": [round((x1 - x0) / unit), round((y1 - y0) / unit)]}


def route(work: Path, lef: Path, top: str) -> dict:
    """qrouter on ``<top>.def`` (qflow's ``router.sh``: every layer, stacked vias one high, the
    clock left unrouted): ``<top>_route.def`` and ``<top>_route.rc``, the RC tree of
    every routed net. Returns the failed routes qrouter reports."""
    info = (work / f"{top}.info").read_text()
    layers = len(re.findall(r"\b(horizontal|vertical)\b", info))
    cfg = ["verbose 1", f"read_lef {lef}", f"catch {{layers {layers}}}", "via stack 1", f"read_def {top}.def",
           "ignore clk", f"qrouter::standard_route {top}_route.def false", "quit"]
    (work / "route.cfg").write_text("\n".join(cfg) + "\n")
    log = work / "route.log"
    log.write_text("")
    _run([QROUTER.path(), "-nog", "-s", "route.cfg"], work, log, "qrouter")
    if not (work / f"{top}_route.rc").is_file():
        raise StageError(f"pnr: qrouter wrote no {top}_route.rc; see route.log")
    final = re.findall(r"^Final: (.*)$", log.read_text(), flags=re.M)
    if not final:
        raise StageError("pnr: qrouter did not finish its routing stages; see route.log")
    failed = re.search(r"Failed net routes: (\d+)", final[-1])
    return {"failed": int(failed.group(1)) if failed else 0, "layers": layers}


def flatten(hier_json: Path, out: Path, module: str = PLACED) -> Path:
    """``module`` (the array, :data:`PLACED`) flattened from the hierarchical netlist, as the
    flow flattens its top (:func:`lego_build.targets.stdcell._yosys`)."""
    out.mkdir(parents=True, exist_ok=True)
    script = f"read_json {hier_json}; hierarchy -top {module}; flatten; opt_clean -purge; " \
             f"write_json {out / 'netlist.json'}"
    proc = subprocess.run([stdcell.YOSYS.path(), "-q", "-p", script], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise StageError(f"pnr: flattening {module} failed: {tail[0]}")
    return out


def versions(work: Path) -> dict:
    """graywolf's and qrouter's versions, as their logs in ``work`` state them."""
    gw = re.search(r"TimberWolfSC version:(\S+)", (work / "place.log").read_text())
    qr = re.search(r"router version (\S+)", (work / "route.log").read_text())
    return {"graywolf": f"TimberWolfSC {gw.group(1)}" if gw else "?", "qrouter": qr.group(1) if qr else "?"}


def check(work: Path, hier: dict, lib, period_ns: float, class_of, keep: Path, flat: Path | None = None,
          module: str = PLACED) -> dict:
    """Place, route and time the array (module docstring) in ``work``; ``flat``: a directory
    whose ``netlist.json`` is the array already flattened (the flow's, with ``asic_top=array``),
    else it is flattened from ``work/hier/netlist.json``. Pre- and post-route Fmax, their
    ratio, the wires and the time; the logs, DEF, SPEF and reports copied to ``keep``."""
    start = time.monotonic()
    lef, par = tech_files(lib.path)
    flat = flat or flatten(work / "hier" / "netlist.json", work / "pnr_flat", module)
    pw = work / "pnr"
    pw.mkdir(parents=True, exist_ok=True)
    netlist = json.loads((flat / "netlist.json").read_text())
    verilog, info = timing.repair(netlist, module, lib.pins)
    cells = [c["type"] for c in netlist["modules"][module]["cells"].values() if c["type"] in lib.area]
    macro_ports = {k: m["ports"] for k, m in netlist["modules"].items() if k != module}
    (pw / "macros.lib").write_text(timing.macro_liberty(macro_ports, lib.node_nm,
                                                        sum(lib.area[c] for c in cells) / max(1, len(cells))))
    phys = rename(parse(verilog), lib.pins, macro_ports)
    (pw / "placed.v").write_text(phys.verilog)
    (pw / "names.json").write_text(json.dumps(phys.original, indent=0, sort_keys=True))
    print(f"simulate: asic: place and route of {module} ({phys.cells:,} cells, {len(phys.pads):,} I/O pins): "
          "graywolf ...", flush=True)
    t0 = time.monotonic()
    placed = place(pw, phys, lef, par, module)
    t_place = time.monotonic() - t0
    print("simulate: asic: place and route: qrouter ...", flush=True)
    t0 = time.monotonic()
    routed = route(pw, lef, module)
    t_route = time.monotonic() - t0
    scale = edge_scale(lef.read_text())
    text, rc = spef((pw / f"{module}_route.rc").read_text(), phys, module, scale)
    (pw / f"{module}.spef").write_text(text)
    registers = {**info["registers"]}
    names = {new: registers.get(old, old) for new, old in phys.original.items()}
    classify = timing.classifier(timing.instance_classes(hier, module, class_of))
    figures = {}
    for when, parasitics in (("pre", None), ("post", pw / f"{module}.spef")):
        report = pw / f"timing_{when}.txt"
        out = timing.sta(stdcell.STA.path(), pw / "placed.v", lib.path, pw / "macros.lib", module, period_ns, report,
                         parasitics=parasitics)
        worst = timing.paths(out, lambda s: classify(names.get(s, s)), names)
        report.write_text("".join(w.pop("report") for w in worst))
        figures[when] = {"fmax_mhz": round(1000.0 / (period_ns - worst[0]["slack_ns"]), 2), "paths": worst[:3]}
    wl = wirelength_um((pw / f"{module}_route.def").read_text())
    keep.mkdir(parents=True, exist_ok=True)
    for f in ("place.log", "route.log", f"{module}.spef", "timing_pre.txt", "timing_post.txt", "placed.v",
              "names.json"):
        shutil.copyfile(pw / f, keep / f)
    with open(pw / f"{module}_route.def", "rb") as src, gzip.GzipFile(keep / f"{module}.def.gz", "wb", mtime=0) as dst:
        shutil.copyfileobj(src, dst)  # the routed layout (tens of MB as text)
    pre, post = figures["pre"]["fmax_mhz"], figures["post"]["fmax_mhz"]
    return {"module": module, "cells": phys.cells, "io_pins": len(phys.pads), "die_um": placed["die_um"],
            "pre_mhz": pre, "post_mhz": post, "ratio": round(post / pre, 4),
            "wirelength_mm": round(wl / 1000, 2), "wire_pf": rc["wire_pf"], "nets": rc["nets"],
            "failed_routes": routed["failed"], "unreached_pins": rc["missing"], "layers": routed["layers"],
            "seed": SEED, "edge_scale": round(scale, 3), "place_s": round(t_place), "route_s": round(t_route),
            "seconds": round(time.monotonic() - start), "pre_paths": figures["pre"]["paths"],
            "post_paths": figures["post"]["paths"], "tools": versions(pw)}


def after_flow(work: Path, lib, top: str, period_ns: float, keep: Path) -> dict:
    """:func:`check` in the directory of :func:`lego_build.targets.stdcell.implement` (``work``:
    its ``hier/`` and ``flat/``) after the flow synthesised ``top``, at the flow's clock."""
    hier = json.loads((work / "hier" / "netlist.json").read_text())
    out = check(work, hier, lib, period_ns, stdcell._class, keep, work / "flat" if top == PLACED else None,
                module=PLACED)
    print(f"simulate: asic: post-route Fmax of {out['module']} {out['post_mhz']} MHz, {out['pre_mhz']} MHz before "
          f"routing ({out['ratio']:.1%}); {out['wirelength_mm']} mm of wire, {out['failed_routes']} failed routes, "
          f"{out['seconds']} s", flush=True)
    return out


def lines(p: dict | None) -> list[str]:
    """``report.md``: pre- and post-route Fmax side by side (``products.asic.pnr``)."""
    if not p:
        return []
    failed = f"**{p['failed_routes']} nets left unrouted**" if p["failed_routes"] else "every net routed"
    what = "the array" if p["module"] == "lego_top" else "module"
    return ["", f"Post-route (issue 44, `target.pnr`): {what} `{p['module']}` ({p['cells']:,} cells; the SRAM "
            f"banks' and tables' pins and the ports are {p['io_pins']:,} I/O pins) placed by graywolf "
            f"(seed {p['seed']}, {p['die_um'][0]} x {p['die_um'][1]} µm) and routed by qrouter on {p['layers']} layers "
            f"({p['wirelength_mm']:,} mm of wire, {p['wire_pf']:,} pF, {failed}; {p['seconds']:,} s): Fmax "
            f"**{p['post_mhz']} MHz** with the extracted wires against **{p['pre_mhz']} MHz** with the wire-load "
            f"model, {p['ratio']:.1%} (OpenSTA, `sim/asic/pnr/`: `timing_pre.txt`, `timing_post.txt`, "
            f"`{p['module']}.spef`); the clock ideal."]


def rows(p: dict | None) -> list[tuple[str, str]]:
    """``report.html``: the same, one row."""
    if not p:
        return []
    return [("Post-route", f"{p['module']} ({p['cells']:,} cells) placed and routed: Fmax {p['post_mhz']} MHz, "
                           f"{p['pre_mhz']} MHz before routing ({p['ratio']:.1%}), {p['wirelength_mm']:,} mm of wire, "
                           f"{p['failed_routes']} failed routes, {p['seconds']:,} s")]
