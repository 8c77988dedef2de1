"""Static timing of a flattened standard-cell netlist as a hardware engineer would run it (issue
44): the netlist's high-fan-out nets repaired with buffer trees, wires priced by a wire-load
model, the memory macros in the timing graph, and the slack read unclamped.

* **Fan-out repair** (:func:`repair`): every net (clock aside: an ideal clock, clock-tree
  synthesis is not modelled) with more than :data:`MAX_FANOUT` sink pins gets a balanced tree
  of the library's strongest buffer, as a placement tool's repair step does before timing
  (OpenROAD's ``repair_design``); no net then drives beyond the library's characterised load.
  Yosys's ABC buffers only the logic it maps, so the flip-flops' outputs (a row select read
  by 553 multiplexer inputs) stay unbuffered without it.
* **Wire load** (:func:`wire_load`): a net of fan-out ``n`` is a wire of the half perimeter of a
  square that holds its ``n + 1`` cells at 70 % density (cells of the library's mean area),
  at metal-2's capacitance and resistance per µm from the library's LEF. An estimate
  (a router's Steiner tree is longer for large nets, and placement is not compact), not yet
  checked against a placed and routed netlist.
* **Macros** (:func:`macro_liberty`): the buffer banks (a registered read: clock to data
  after the access time) and the lookup tables (an asynchronous read: address to data) are
  Liberty cells with setup on their inputs, so paths into and out of them are timed.
* **Slack** from the worst path (``report_checks``), not ``report_wns`` (clamped at 0), so
  ``Fmax = 1 / (period - slack)`` holds above the probe clock too; the worst paths are kept
  (:func:`paths`) with their start, end, logic levels and delay, and each end's module class.
"""
from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

from lego_build.errors import StageError

MAX_FANOUT = 16  # sink pins a net may drive before it gets a buffer tree
DENSITY = 0.7  # placement density of the wire-load model
#: metal 2 (the OSU LEF: 1.9e-5 pF/µm² area, 6e-5 pF/µm edge, 0.08 Ω/sq, 0.3 µm wide)
WIRE_PF_PER_UM, WIRE_KOHM_PER_UM = 1.9e-5 * 0.3 + 2 * 6e-5, 0.08 / 0.3 / 1000
#: assumed SRAM access time at 180 nm: 1.2 ns for 1 KB, +0.25 ns per doubling (the range of
#: 0.18 µm single-port SRAM compilers' datasheets), scaled with the node; setup 0.3 ns
SRAM_NS_1KB, SRAM_NS_PER_DOUBLING, SETUP_NS = 1.2, 0.25, 0.3
PATHS = 12  # worst paths kept (one per end signal: a register or a port, its bits together)
SEARCHED = 400  # endpoints OpenSTA reports, worst first, to find them


def _esc(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else f"\\{name} "


def sweep(cells: dict, pins: dict, macros: set, port_bits: set) -> dict:
    """``cells`` less the library cells that drive nothing (no cell input, no port), repeatedly:
    a module synthesised on its own keeps the logic behind an output port its parent leaves
    unread (the array's host read port inside the memory system), which Yosys cannot sweep
    after flattening (to it, a library cell is a black box that might do something)."""
    loads: dict = {}
    driver: dict = {}
    for cname, cell in cells.items():
        for pin, bits in cell["connections"].items():
            for b in bits:
                if isinstance(b, int):
                    if pins[cell["type"]].get(pin) == "input":
                        loads[b] = loads.get(b, 0) + 1
                    else:
                        driver[b] = cname
    outputs = {c: [b for p, bits in cell["connections"].items() if pins[cell["type"]].get(p) != "input" for b in bits
                   if isinstance(b, int)] for c, cell in cells.items()}
    dead = set()
    work = [c for c, cell in cells.items() if cell["type"] not in macros]
    while work:
        c = work.pop()
        if c in dead or any(loads.get(b, 0) or b in port_bits for b in outputs[c]):
            continue
        dead.add(c)
        for pin, bits in cells[c]["connections"].items():
            if pins[cells[c]["type"]].get(pin) == "input":
                for b in bits:
                    if isinstance(b, int):
                        loads[b] -= 1
                        if not loads[b] and b in driver and cells[driver[b]]["type"] not in macros:
                            work.append(driver[b])
    return {c: cell for c, cell in cells.items() if c not in dead}


def repair(netlist: dict, top: str, lib_pins: dict, buffer_cell: str = "BUFX4", max_fanout: int = MAX_FANOUT) \
        -> tuple[str, dict]:
    """``top`` of a flattened Yosys JSON netlist as structural Verilog, swept of logic that drives
    nothing (:func:`sweep`), with a buffer tree on each net of more than ``max_fanout`` sinks.
    Returns the Verilog and ``{"buffers": n, "buffered_nets": n, "worst_fanout": n (before
    repair), "swept": n (cells), "registers": {cell: the net its Q drives}}``. ``lib_pins``: per
    library cell its pins' directions (:class:`lego_build.targets.stdcell.Library`)."""
    mod = netlist["modules"][top]
    pins = dict(lib_pins)
    for name, m in netlist["modules"].items():  # the black-box macros
        if name != top:
            pins[name] = {p: rec["direction"] for p, rec in m["ports"].items()}
    for cname, cell in mod["cells"].items():
        if cell["type"] not in pins:
            raise StageError(f"timing: cell type {cell['type']} of {cname} is neither a library cell nor a macro")
    port_bits = {b for rec in mod["ports"].values() for b in rec["bits"] if isinstance(b, int)}
    kept = sweep(mod["cells"], pins, set(netlist["modules"]) - {top}, port_bits)
    names: dict = {}
    used: set = set()

    def name(b: int, n: str) -> None:
        if b not in names and n not in used:
            names[b] = n
            used.add(n)
    for p, rec in sorted(mod["ports"].items()):
        for i, b in enumerate(rec["bits"]):
            if isinstance(b, int):
                name(b, p if len(rec["bits"]) == 1 else f"{p}[{i}]")
    for net, rec in sorted(mod["netnames"].items(), key=lambda kv: (kv[0].count("."), kv[0])):
        if not rec.get("hide_name"):
            for i, b in enumerate(rec["bits"]):
                if isinstance(b, int):
                    name(b, net if len(rec["bits"]) == 1 else f"{net}[{i}]")

    def bit_name(b) -> str:
        if isinstance(b, str):
            return "1'b1" if b == "1" else "1'b0"
        return _esc(names.get(b, f"_n{b}_"))

    sinks: dict = {}
    clocks = set(mod["ports"].get("clk", {}).get("bits", []))
    cells = sorted(kept.items())
    for cname, cell in cells:
        dirs = pins[cell["type"]]
        for pin, bits in cell["connections"].items():
            if dirs.get(pin) == "input":
                for k, b in enumerate(bits):
                    if isinstance(b, int) and b not in clocks:
                        sinks.setdefault(b, []).append((cname, pin, k))
    conn = {cname: {pin: list(bits) for pin, bits in cell["connections"].items()} for cname, cell in cells}
    worst = max((len(s) for s in sinks.values()), default=0)
    top_bit = max([b for c in mod["cells"].values() for bits in c["connections"].values() for b in bits
                   if isinstance(b, int)] + [b for rec in mod["netnames"].values() for b in rec["bits"]
                                             if isinstance(b, int)] + list(port_bits) + [0])
    buffers: dict = {}  # name -> connections
    for b, loads in sorted(sinks.items()):
        level, nodes = 0, loads  # sinks grouped under buffers, bottom up, until the driver's fan-out fits
        while len(nodes) > max_fanout:
            nxt = []
            for k in range(0, len(nodes), max_fanout):
                top_bit += 1
                name(top_bit, f"{names.get(b, f'_n{b}_')}_buf{level}_{k // max_fanout}")
                bname = f"_buf_{top_bit}_"
                buffers[bname] = {"A": [b], "Y": [top_bit]}
                for cname, pin, idx in nodes[k:k + max_fanout]:
                    (buffers if cname in buffers else conn)[cname][pin][idx] = top_bit
                nxt.append((bname, "A", 0))
            nodes, level = nxt, level + 1
    ports = sorted(mod["ports"].items())
    lines = [f"module {top} (", ",\n".join(f"  {_esc(p)}" for p, _ in ports), ");"]
    for p, rec in ports:
        width = len(rec["bits"])
        lines.append(f"  {rec['direction']} {f'[{width - 1}:0] ' if width > 1 else ''}{_esc(p)};")
    wires = {b for c in [*conn.values(), *buffers.values()] for bits in c.values() for b in bits if isinstance(b, int)}
    lines += [f"  wire {bit_name(b)};" for b in sorted(wires - port_bits)]
    for p, rec in ports:  # output ports driven by another port's bit or by a constant
        if rec["direction"] == "output":
            for i, b in enumerate(rec["bits"]):
                own = p if len(rec["bits"]) == 1 else f"{p}[{i}]"
                if isinstance(b, str) or names.get(b) != own:
                    lines.append(f"  assign {_esc(p) if len(rec['bits']) == 1 else f'{_esc(p)}[{i}]'} = {bit_name(b)};")

    def inst(cname: str, ctype: str, c: dict) -> str:
        pc = ", ".join(f".{pin}({{{', '.join(bit_name(b) for b in reversed(bits))}}})" if len(bits) > 1
                       else f".{pin}({bit_name(bits[0])})" for pin, bits in sorted(c.items()) if bits)
        return f"  {ctype} {_esc(cname)} ({pc});"
    short = {cname: f"_c{k}_" if cell.get("hide_name") else cname for k, (cname, cell) in enumerate(cells)}
    lines += [inst(short[cname], cell["type"], conn[cname]) for cname, cell in cells]
    lines += [inst(n, buffer_cell, c) for n, c in buffers.items()]
    lines.append("endmodule")
    registers = {short[c]: names.get(conn[c]["Q"][0], short[c]) for c, _ in cells
                 if "Q" in conn[c] and isinstance(conn[c]["Q"][0], int)}
    return "\n".join(lines) + "\n", {"buffers": len(buffers), "worst_fanout": worst, "registers": registers,
                                      "swept": len(mod["cells"]) - len(kept),
                                      "buffered_nets": sum(len(x) > max_fanout for x in sinks.values())}


def wire_load(mean_cell_um2: float, max_fanout: int = 64) -> str:
    """A Liberty ``wire_load`` group (module docstring): per fan-out, the wire length in µm."""
    lengths = [(n, 2 * math.sqrt((n + 1) * mean_cell_um2 / DENSITY)) for n in range(1, max_fanout + 1)]
    table = "\n".join(f"    fanout_length({n}, {length:.2f});" for n, length in lengths)
    return (f"  wire_load(\"lego_wl\") {{\n    capacitance : {WIRE_PF_PER_UM:.6g};\n"
            f"    resistance : {WIRE_KOHM_PER_UM:.6g};\n    area : 0;\n    slope : {lengths[-1][1] / max_fanout:.3f};\n"
            f"{table}\n  }}\n")


def access_ns(width: int, depth: int, node_nm: float) -> float:
    """The assumed access time of a ``width x depth`` memory macro (:data:`SRAM_NS_1KB`)."""
    kbytes = max(width * depth / 8 / 1024, 1 / 64)
    return round((SRAM_NS_1KB + SRAM_NS_PER_DOUBLING * max(0.0, math.log2(kbytes))) * node_nm / 180, 3)


def macro_liberty(macros: dict, node_nm: float, mean_cell_um2: float) -> str:
    """A Liberty library of the memory macros (``{name: ports}`` from the Yosys JSON of the
    black boxes; ``lego_bank_w<W>_d<D>``: clock to ``rdata`` after the access time,
    ``lego_table_w<W>_d<D>``: ``raddr`` to ``rdata``) and the wire-load model."""
    widths = sorted({len(rec["bits"]) for ports in macros.values() for rec in ports.values() if len(rec["bits"]) > 1})
    thresholds = [f"  {k}_threshold_pct_{e} : {v};" for k, v in (("slew_upper", 80), ("slew_lower", 20),
                                                                    ("input", 50), ("output", 50))
                  for e in ("rise", "fall")]
    out = ["library(lego_macros) {", "  delay_model : table_lookup;", "  time_unit : \"1ns\";",
           "  voltage_unit : \"1V\";", "  current_unit : \"1uA\";", "  pulling_resistance_unit : \"1kohm\";",
           "  capacitive_load_unit (1,pf);", "  nom_process : 1;", "  nom_voltage : 1.8;", "  nom_temperature : 25;",
           *thresholds, wire_load(mean_cell_um2), "  default_wire_load : \"lego_wl\";"]
    out += [f"  type(bus{w}) {{ base_type : array; data_type : bit; bit_width : {w}; bit_from : {w - 1}; "
            "bit_to : 0; downto : true; }" for w in widths]
    for name, ports in sorted(macros.items()):
        m = re.search(r"_w(\d+)_d(\d+)", name)
        width, depth = (int(m.group(1)), int(m.group(2))) if m else (8, 256)
        t = access_ns(width, depth, node_nm)
        table = name.startswith("lego_table_")
        out.append(f"  cell({name}) {{\n    area : 0;")
        for p, rec in sorted(ports.items()):
            w = len(rec["bits"])
            head = f"    bus({p}) {{ bus_type : bus{w};" if w > 1 else f"    pin({p}) {{"
            if p == "clk":
                out.append(f"{head} direction : input; clock : true; capacitance : 0.01; }}")
            elif rec["direction"] == "input":
                arc = f" timing() {{ related_pin : \"clk\"; timing_type : setup_rising; " \
                      f"rise_constraint(scalar) {{ values(\"{SETUP_NS}\"); }} " \
                      f"fall_constraint(scalar) {{ values(\"{SETUP_NS}\"); }} }}"
                if table and p == "raddr":
                    arc = ""  # a table's read address only feeds its asynchronous read
                out.append(f"{head} direction : input; capacitance : 0.01;{arc} }}")
            else:
                related = "raddr" if table else "clk"
                kind = "combinational" if table else "rising_edge"
                out.append(f"{head} direction : output; timing() {{ related_pin : \"{related}\"; "
                           f"timing_type : {kind}; cell_rise(scalar) {{ values(\"{t}\"); }} "
                           f"cell_fall(scalar) {{ values(\"{t}\"); }} rise_transition(scalar) {{ values(\"0.2\"); }} "
                           "fall_transition(scalar) { values(\"0.2\"); } } }")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def sta(sta_bin: str, netlist_v: Path, lib_path: Path, macros_lib: Path, top: str, period_ns: float,
        report: Path, parasitics: Path | None = None) -> str:
    """OpenSTA (``sta_bin``) on the repaired netlist with the wire-load model (the nets of a
    ``parasitics`` SPEF file, if given, by their extracted RC instead); the text of its worst
    paths (also written to ``report``)."""
    script = report.with_suffix(".tcl")
    script.write_text("\n".join([
        f"read_liberty {lib_path}", f"read_liberty {macros_lib}", f"read_verilog {netlist_v}", f"link_design {top}",
        *([f"read_spef {parasitics}"] if parasitics else []), "set_wire_load_model -name lego_wl -library lego_macros",
        f"create_clock -name clk -period {period_ns} [get_ports clk]",
        "set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clk]]",
        "set_output_delay 0 -clock clk [all_outputs]",
        f"report_checks -path_delay max -group_count {SEARCHED} -endpoint_count 1 -unique_paths_to_endpoint "
        "-fields {fanout cap slew nets} -digits 3"]) + "\n")
    proc = subprocess.run([sta_bin, "-exit", str(script)], capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    report.write_text(text)
    if "slack (" not in text:
        err = [ln for ln in text.splitlines() if ln.startswith("Error")][:1] or text.strip().splitlines()[-1:]
        raise StageError(f"OpenSTA failed on {netlist_v.name}: {err[0] if err else 'no output'}")
    return text


def paths(text: str, classify, registers: dict[str, str]) -> list[dict]:
    """The worst paths of a ``report_checks`` text, one per end signal (a register's or a port's
    bits together): start and end signal (a flip-flop by the register bit it holds,
    ``registers``), logic levels, data arrival (ns), slack (ns), and the module class of each
    (``classify(signal)``); worst first, at most :data:`PATHS`."""
    out, seen = [], set()
    for block in text.split("Startpoint: ")[1:]:
        start, end = block.split()[0], re.search(r"Endpoint: (\S+)", block).group(1)
        start, end = registers.get(start, start), registers.get(end, end)
        base = re.sub(r"\d+", "#", end)  # one path per kind of end: a bus's bits, a bank's copies
        if base in seen:
            continue
        seen.add(base)
        slack = float(re.search(r"(-?[\d.]+)\s+slack \(", block).group(1))
        arrival = float(re.search(r"(-?[\d.]+)\s+data arrival time", block).group(1))
        arrive = block.split("data arrival time")[0]
        levels = len(re.findall(r"^\s+[\d.]+\s+[\d.]+\s+[\d.]+ [v^] \S+/\S+ \(", arrive, flags=re.M))
        out.append({"from": start, "to": end, "levels": max(0, levels - 1), "delay_ns": arrival, "slack_ns": slack,
                    "from_class": classify(start), "to_class": classify(end), "report": f"Startpoint: {block}"})
        if len(out) == PATHS:
            break
    return out


def instance_classes(hier: dict, top: str, class_of) -> dict[str, str]:
    """Per hierarchical instance path of the hierarchical netlist (``u_array.u_fu_0_0``, or a
    macro's ``u_array.u_bank_Y_0_h0``) its module class (``class_of(module)``); the top itself
    under ``""``."""
    out = {"": class_of(top)}

    def walk(mod: str, prefix: str) -> None:
        for cname, cell in hier["modules"][mod]["cells"].items():
            if cell["type"] in hier["modules"]:  # a module of the design, or a memory macro
                path = f"{prefix}{cname}"
                out[path] = class_of(cell["type"])
                walk(cell["type"], path + ".")
    walk(top, "")
    return out


def classifier(instances: dict[str, str]):
    """A net name's class: that of the deepest instance its hierarchical prefix names."""
    def classify(net: str) -> str:
        parts = net.split(".")
        for k in range(len(parts), 0, -1):  # the name itself first: a macro instance is its own class
            found = instances.get(".".join(parts[:k]))
            if found:
                return found
        return instances[""]
    return classify


def analyse(sta_bin: str, flat: Path, hier: dict, lib, top: str, period_ns: float, class_of) -> dict:
    """The timing of ``top`` from its flattened netlist in ``flat`` (``netlist.json``): the netlist
    repaired (``repaired.v``), the macros' Liberty (``macros.lib``), OpenSTA (``timing.txt``: the
    kept paths' reports); Fmax, the worst slack at ``period_ns``, the worst paths by class
    (:func:`paths`, classes from the hierarchical netlist ``hier``) and what the repair did."""
    netlist = json.loads((flat / "netlist.json").read_text())
    verilog, info = repair(netlist, top, lib.pins)
    (flat / "repaired.v").write_text(verilog)
    cells = [c["type"] for c in netlist["modules"][top]["cells"].values() if c["type"] in lib.area]
    mean = sum(lib.area[c] for c in cells) / max(1, len(cells))
    (flat / "macros.lib").write_text(macro_liberty({k: m["ports"] for k, m in netlist["modules"].items() if k != top},
                                                   lib.node_nm, mean))
    text = sta(sta_bin, flat / "repaired.v", lib.path, flat / "macros.lib", top, period_ns, flat / "timing.txt")
    worst = paths(text, classifier(instance_classes(hier, top, class_of)), info["registers"])
    (flat / "timing.txt").write_text("".join(w.pop("report") for w in worst))
    slack = worst[0]["slack_ns"]
    return {"fmax_mhz": round(1000.0 / (period_ns - slack), 2), "slack_ns": slack, "period_ns": period_ns,
            "target_mhz": round(1000.0 / period_ns, 3), "met": slack >= 0,
            "paths": worst, "buffers": info["buffers"], "buffered_nets": info["buffered_nets"], "swept": info["swept"],
            "worst_fanout": info["worst_fanout"], "wire_load": f"fan-out n: {2:g} x sqrt((n + 1) x {mean:.1f} um2 / "
            f"{DENSITY}) of metal 2", "max_fanout": MAX_FANOUT}
