"""The post-route check's netlists (:mod:`lego_build.targets.pnr`): the flow's repaired netlist
parsed (:func:`parse`), renamed as qflow's tools name things with its BLIF (:func:`rename`), and
qrouter's extracted RC trees written as SPEF (:func:`spef`) with the LEF's wire capacitance
(:func:`edge_scale`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from lego_build.errors import StageError

TOKEN = re.compile(r"\\\S+|1'b[01]|[A-Za-z_][\w$]*")


@dataclass
class Netlist:
    """A flat structural netlist as :func:`lego_build.targets.timing.repair` writes it: scalar
    ports (name -> ``input``/``output``), cells (name -> type, pin -> net names, a bus pin's
    bits MSB first), ``assign`` lines (port -> net or constant)."""

    top: str
    ports: dict = field(default_factory=dict)
    cells: dict = field(default_factory=dict)
    assigns: dict = field(default_factory=dict)


def _name(tok: str) -> str:
    return tok[1:] if tok.startswith("\\") else tok


def parse(text: str) -> Netlist:
    """:class:`Netlist` of a Verilog text in :func:`lego_build.targets.timing.repair`'s form."""
    top = re.search(r"^module (\S+)", text, flags=re.M).group(1)
    net = Netlist(top)
    for line in text.splitlines():
        m = re.match(r"  (input|output|inout) (\[\d+:0\] )?(\\\S+ |\S+);$", line)
        if m:
            if m.group(2):
                raise StageError(f"pnr: port {m.group(3).strip()} of {top} is a bus; the flow splits ports")
            net.ports[_name(m.group(3).strip())] = m.group(1)
            continue
        m = re.match(r"  assign (\\\S+ |\S+) = (\S+ ?);$", line)
        if m:
            net.assigns[_name(m.group(1).strip())] = _name(m.group(2).strip())
            continue
        m = re.match(r"  (\S+) (\\\S+ |\S+) \((.*)\);$", line)
        if not m or m.group(1) in ("wire", "module"):
            continue
        pins: dict = {}
        for pm in re.finditer(r"\.(\w+)\((\{[^{}]*\}|[^()]*?)\)(?:, |$)", m.group(3)):
            pins[pm.group(1)] = [_name(t) for t in TOKEN.findall(pm.group(2))]
        net.cells[_name(m.group(2).strip())] = (m.group(1), pins)
    return net


@dataclass
class Physical:
    """The netlist under the names the physical tools see: cells ``<type>_<k>`` (blif2cel's
    numbering), nets ``n<k>``, ports ``clk`` and ``p<k>``, macros ``m<k>``; ``original`` maps
    every new cell, port and net name back; ``pads`` the nets that are I/O pins (ports, and
    the nets at the macros' pins)."""

    verilog: str
    blif: str
    original: dict
    pads: dict  # pad (net) name -> "input" (drives the block) or "output"
    ports: dict  # the ports (new names) -> "input" or "output"
    pins: dict  # net -> [(cell, pin, direction)] of the standard cells
    macro_pins: dict  # net -> [(macro, pin bit)]
    cells: int


def rename(net: Netlist, lib_pins: dict, macro_ports: dict) -> Physical:
    """:class:`Physical` of ``net``: ``lib_pins`` the library cells' pin directions,
    ``macro_ports`` per macro type its ports (``{port: {"direction", "bits"}}``)."""
    new: dict = {}  # old net name -> new
    original: dict = {}
    ports = sorted(net.ports)
    for k, p in enumerate(ports):
        new[p] = "clk" if p == "clk" else f"p{k}"
        original[new[p]] = p

    def of(old: str) -> str:
        if old in ("1'b0", "1'b1"):
            return old
        if old not in new:
            new[old] = f"n{len(new) - len(ports)}"
            original[new[old]] = old
        return new[old]

    counts: dict = {}
    cells, macros = [], []
    for cname, (ctype, pins) in net.cells.items():
        conns = {p: [of(b) for b in bits] for p, bits in pins.items()}
        if ctype in lib_pins:
            counts[ctype] = counts.get(ctype, 0) + 1
            name = f"{ctype}_{counts[ctype]}"
            cells.append((name, ctype, conns))
        elif ctype in macro_ports:
            name = f"m{len(macros)}"
            macros.append((name, ctype, conns))
        else:
            raise StageError(f"pnr: cell {cname} of type {ctype} is neither a library cell nor a macro")
        original[name] = cname
    pins: dict = {}
    for name, ctype, conns in cells:
        for p, bits in conns.items():
            for b in bits:
                if not b.startswith("1'b"):
                    pins.setdefault(b, []).append((name, p, lib_pins[ctype].get(p, "input")))
    macro_pins: dict = {}
    for name, ctype, conns in macros:
        for p, bits in conns.items():
            width = len(bits)
            for i, b in enumerate(bits):  # MSB first
                if not b.startswith("1'b"):
                    bit = f"{p}[{width - 1 - i}]" if width > 1 else p
                    macro_pins.setdefault(b, []).append((name, bit, macro_ports[ctype][p]["direction"]))
    pads: dict = {}
    for p in ports:
        if new[p] in pins:
            pads[new[p]] = net.ports[p]
    for b, mp in macro_pins.items():
        if b in pins and b not in pads:  # a macro output drives the block: an input pin
            pads[b] = "input" if any(d == "output" for *_, d in mp) else "output"
    verilog = _verilog(net, new, ports, cells, macros)
    blif = _blif(net.top, cells, pads)
    return Physical(verilog, blif, original, pads, {new[p]: net.ports[p] for p in ports}, pins, macro_pins,
                    len(cells))


def _verilog(net: Netlist, new: dict, ports: list, cells: list, macros: list) -> str:
    lines = [f"module {net.top} ({', '.join(new[p] for p in ports)});"]
    lines += [f"  {net.ports[p]} {new[p]};" for p in ports]
    port_names = {new[p] for p in ports}
    wires = sorted({b for _, _, c in cells + macros for bits in c.values() for b in bits
                    if not b.startswith("1'b")} - port_names, key=lambda n: int(n[1:]))
    lines += [f"  wire {w};" for w in wires]
    for p, rhs in sorted(net.assigns.items()):
        lines.append(f"  assign {new[p]} = {new.get(rhs, rhs)};")  # a constant keeps its text
    for name, ctype, conns in cells + macros:
        pc = ", ".join(f".{p}({{{', '.join(bits)}}})" if len(bits) > 1 else f".{p}({bits[0]})"
                       for p, bits in sorted(conns.items()) if bits)
        lines.append(f"  {ctype} {name} ({pc});")
    lines.append("endmodule")
    return "\n".join(lines) + "\n"


def _blif(top: str, cells: list, pads: dict) -> str:
    ins = [p for p, d in pads.items() if d == "input"]
    outs = [p for p, d in pads.items() if d != "input"]
    lines = [f".model {top}", ".inputs " + " ".join(ins), ".outputs " + " ".join(outs)]
    for _, ctype, conns in cells:
        pc = " ".join(f"{p}={b}" for p, bits in sorted(conns.items()) for b in bits if not b.startswith("1'b"))
        lines.append(f".gate {ctype} {pc}")
    lines.append(".end")
    return "\n".join(lines) + "\n"


MACRO_OHM = 0.001  # the (nominal) resistance from an I/O pin to the macro pins it stands for


def edge_scale(lef_text: str) -> float:
    """What qrouter's wire capacitance is multiplied by: it prices a wire as ``W L C_area + L
    C_edge`` (one edge), the LEF's definition is ``W L C_area + 2 (W + L) C_edge`` (both edges,
    as the flow's wire-load model prices metal 2); per routing layer the ratio of the two per
    unit length, averaged over the layers (1.87 to 1.95 on the OSU 0.18 µm layers)."""
    ratios = []
    for body in re.findall(r"^LAYER \S+\s*\n(.*?)^END", lef_text, flags=re.M | re.S):
        w = re.search(r"^\s*WIDTH\s+([\d.eE+-]+)", body, flags=re.M)
        a = re.search(r"CPERSQDIST\s+([\d.eE+-]+)", body)
        e = re.search(r"EDGECAPACITANCE\s+([\d.eE+-]+)", body)
        if "ROUTING" in body and w and a and e:
            wa, edge = float(w.group(1)) * float(a.group(1)), float(e.group(1))
            ratios.append((wa + 2 * edge) / (wa + edge))
    return sum(ratios) / len(ratios) if ratios else 1.0


def spef(rc_text: str, phys: Physical, top: str, cap_scale: float = 1.0) -> tuple[str, dict]:
    """The SPEF of qrouter's RC file (``write_delays``: per net its driver and a tree of route
    segments, each a resistance (Ω) and capacitance (pF) ending at a pin or a branch point):
    each segment a resistor between its ends with half its capacitance at each (a π model);
    an I/O pin standing for macro pins joined to them through :data:`MACRO_OHM`; capacitances
    times ``cap_scale`` (:func:`edge_scale`). Returns the text and ``{"nets", "wire_pf",
    "res_ohm", "missing"}`` (``missing``: pins of routed nets absent from their trees)."""
    ports = phys.ports
    out = ['*SPEF "IEEE 1481-1998"', f'*DESIGN "{top}"', '*DATE "-"', '*VENDOR "lego_build"',
           '*PROGRAM "lego_build.targets.pnr from qrouter write_delays"', '*VERSION "1"',
           '*DESIGN_FLOW "PIN_CAP NONE"', "*DIVIDER /", "*DELIMITER :", "*BUS_DELIMITER [ ]",
           "*T_UNIT 1 NS", "*C_UNIT 1 PF", "*R_UNIT 1 OHM", "*L_UNIT 1 HENRY", "", "*PORTS"]
    out += [f"{p} {'I' if d == 'input' else 'O'}" for p, d in sorted(ports.items())] + [""]
    total_c = total_r = 0.0
    nets = missing = 0
    for line in rc_text.splitlines():
        tokens = line.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()
        if len(tokens) < 5 or tokens[0] == "clk":
            continue
        name, driver = tokens[0], tokens[2]
        caps: dict = {}
        res: list = []
        inner = 0

        def node_of(pin: str) -> str:
            nonlocal inner
            if "/" not in pin:  # a branch point, or a stub qrouter could not end at a pin ("ERROR")
                inner += 1
                return f"{name}:{inner}"
            inst, p = pin.split("/", 1)
            if inst == "PIN":
                return p if p in ports else f"{name}:0"
            return f"{inst}:{p}"

        path = [node_of(driver)]  # the nodes from the driver down to the segment being read
        i = 4
        while i < len(tokens):
            if tokens[i] == "(":  # a segment: R, C, then the pin it ends at (if any) and its branches
                r, c = float(tokens[i + 1]), float(tokens[i + 2]) * cap_scale
                i += 3
                end = tokens[i] not in ("(", ")", ",")
                here = node_of(tokens[i] if end else "")
                i += end
                res.append((path[-1], here, r))
                caps[path[-1]] = caps.get(path[-1], 0.0) + c / 2
                caps[here] = caps.get(here, 0.0) + c / 2
                path.append(here)
            else:
                if tokens[i] == ")":
                    path.pop()
                i += 1
        if f"{name}:0" in caps:
            for m, bit, _ in phys.macro_pins.get(name, []):
                res.append((f"{name}:0", f"{m}:{bit}", MACRO_OHM))
        seen = set(caps)
        conn = []
        for inst, p, d in phys.pins.get(name, []):
            conn.append(f"*I {inst}:{p} {'O' if d == 'output' else 'I'}")
            missing += f"{inst}:{p}" not in seen
        for m, bit, d in phys.macro_pins.get(name, []):
            conn.append(f"*I {m}:{bit} {'O' if d == 'output' else 'I'}")
        if name in ports:
            conn.append(f"*P {name} {'I' if ports[name] == 'input' else 'O'}")
        total = sum(caps.values())
        nets += 1
        total_c += total
        total_r += sum(r for *_, r in res)
        out += [f"*D_NET {name} {total:.6g}", "*CONN", *conn, "*CAP"]
        out += [f"{k} {n} {c:.6g}" for k, (n, c) in enumerate(sorted(caps.items()), 1)]
        out += ["*RES"] + [f"{k} {a} {b} {r:.6g}" for k, (a, b, r) in enumerate(res, 1)] + ["*END", ""]
    return "\n".join(out) + "\n", {"nets": nets, "wire_pf": round(total_c, 3), "res_ohm": round(total_r, 1),
                                   "missing": missing}
