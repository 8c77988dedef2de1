"""The post-route check's DEF edits (:mod:`lego_build.targets.pnr`): nets written from the
netlist, cells padded for routing room and put back, I/O pins arranged on the die's edge, and
the routed wire length."""
from __future__ import annotations

import math
import re

from lego_build.errors import StageError
from lego_build.targets.pnr_netlist import Physical


def def_nets(phys: Physical) -> str:
    """The DEF ``NETS`` section of ``phys``: every net with a standard cell on it, its cells'
    pins and its I/O pin."""
    out = []
    for net, pins in sorted(phys.pins.items()):
        conns = ([f"( PIN {net} )"] if net in phys.pads else []) + [f"( {c} {p} )" for c, p, _ in pins]
        out.append(f"- {net}\n  " + "\n  ".join(conns) + "\n;")
    return f"NETS {len(out)} ;\n" + "\n".join(out) + "\nEND NETS"


MARGIN_UM = 10.0  # between the placed rows and the die edge the I/O pins sit on
#: an I/O pin on every other routing track of the edge: with a pin on every track, qrouter could
#: not drop vias beside the pins (default 4x4 array, 3,528 pins: 160 nets left unrouted for hours,
#: the failures at the edge)
PIN_TRACKS = 2
DENSITY = 0.7  # the rows' share of cells: at 100 % (graywolf's) qrouter left 7 % of the array's nets unrouted
SITE = 80  # the OSU cells' site width in .cel units (centimicrons): a cell grows by one each side


def pad_cells(cel_text: str, density: float = DENSITY) -> tuple[str, set]:
    """The ``.cel`` text with cells widened by a site on each side (blank space graywolf keeps,
    as qflow's ``decongest.tcl`` adds fill), every so many cells in order so the rows hold
    ``density`` cells; and the cells widened (each then sits a site right of its widened box)."""
    sizes = [(int(a), int(b)) for a, b in re.findall(r"^left (-?\d+) right (-?\d+) ", cel_text, flags=re.M)]
    extra = sum(b - a for a, b in sizes) * (1 / density - 1)
    per_cell = extra / max(1, len(sizes))
    acc, padded = 0.0, set()

    def widen(m) -> str:
        nonlocal acc
        acc += per_cell
        if acc < 2 * SITE:
            return m.group(0)
        acc -= 2 * SITE
        padded.add(m.group(1))
        return f"cell {m.group(1)}\nleft {int(m.group(2)) - SITE} right {int(m.group(3)) + SITE} "
    text = re.sub(r"^cell (\d+ \S+)\nleft (-?\d+) right (-?\d+) ", widen, cel_text, flags=re.M)
    return text, {c.split()[1] for c in padded}


def unpad(def_text: str, padded: set, shift: int) -> str:
    """The DEF's components placed where the widened ones of :func:`pad_cells` sit: ``shift``
    (a site in DEF units) to the right."""
    def move(m) -> str:
        if m.group(1) not in padded:
            return m.group(0)
        return f"- {m.group(1)} {m.group(2)} + PLACED ( {int(m.group(3)) + shift} {m.group(4)} )"
    return re.sub(r"^- (\S+) (\S+) \+ PLACED \( (-?\d+) (-?\d+) \)", move, def_text, flags=re.M)


def _tracks(def_text: str) -> dict:
    """Per routing layer of a DEF its track direction (``X``: vertical tracks), start and step."""
    return {m.group(4): (m.group(1), float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^TRACKS ([XY]) (\S+) DO \d+ STEP (\S+) LAYER (\S+) ;", def_text, flags=re.M)}


def arrange_pins(def_text: str, phys: Physical, lef_text: str) -> str:
    """``def_text`` with its I/O pins on the edge of a die that fits the placed rows (plus
    :data:`MARGIN_UM`, more if the pins need a longer edge), each where its net's cells are nearest
    (graywolf rings 3,500 pins around the array half a millimetre out; qflow's ``arrangepins.tcl``
    moves them in too), one per :data:`PIN_TRACKS` tracks, neighbours on alternate layers; the
    die and the tracks cut to it."""
    unit = float(re.search(r"UNITS DISTANCE MICRONS (\d+)", def_text).group(1))
    size = {m.group(1): (float(m.group(2)) * unit, float(m.group(3)) * unit)
            for m in re.finditer(r"^MACRO (\S+).*?^\s*SIZE\s+(\S+) BY (\S+) ;", lef_text, flags=re.M | re.S)}
    where = {}
    for m in re.finditer(r"^- (\S+) (\S+) \+ PLACED \( (-?\d+) (-?\d+) \)", def_text, flags=re.M):
        w, h = size[m.group(2)]
        where[m.group(1)] = (int(m.group(3)), int(m.group(4)), w, h)
    tracks = _tracks(def_text)
    # the top and bottom pins on the first two vertical layers above metal 1 (metal 2 and 4), alternately
    # along the edge, the side pins on the horizontal ones (metal 3 and 5)
    vertical = [lay for lay, (d, *_) in tracks.items() if d == "X"][:2]
    horizontal = [lay for lay, (d, *_) in tracks.items() if d == "Y"][1:3]

    def grid(layer: str, lo: float, hi: float) -> list[int]:
        _, start, step = tracks[layer]
        first = start + step * math.ceil((lo - start) / step)
        return [round(first + k * step) for k in range(int((hi - first) // step) + 1)]
    margin = MARGIN_UM
    while True:  # the die grows past the rows until every pin has its slot
        x0 = min(x for x, _, _, _ in where.values()) - margin * unit
        y0 = min(y for _, y, _, _ in where.values()) - margin * unit
        x1 = max(x + w for x, _, w, _ in where.values()) + margin * unit
        y1 = max(y + h for _, y, _, h in where.values()) + margin * unit
        xs, ys = grid(vertical[0], x0, x1), grid(horizontal[0], y0, y1)
        across, up = xs[1:-1:PIN_TRACKS], ys[1:-1:PIN_TRACKS]
        if 2 * (len(across) + len(up)) >= len(phys.pads):
            break
        margin += MARGIN_UM
    sides = {"bottom": across, "top": across, "left": up, "right": up}
    want: dict = {}
    for net in sorted(phys.pads):
        pts = [(x + w / 2, y + h / 2) for c, _, _ in phys.pins[net] for x, y, w, h in [where[c]]]
        cx, cy = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
        dist = {"left": cx - x0, "right": x1 - cx, "bottom": cy - y0, "top": y1 - cy}
        want[net] = (sorted(dist, key=lambda k: (dist[k], k)), min(dist.values()), cx, cy)
    chosen: dict = {side: [] for side in sides}
    for net, (order, _, cx, cy) in sorted(want.items(), key=lambda kv: (kv[1][1], kv[0])):  # nearest first
        side = next((sd for sd in order if len(chosen[sd]) < len(sides[sd])), None)
        if side is None:
            raise StageError(f"pnr: {len(want)} I/O pins do not fit on the die's edge")
        chosen[side].append((cx if side in ("bottom", "top") else cy, net))
    pins = []
    for side, nets in chosen.items():
        slots = sides[side]
        taken: list[int] = []
        for pos, net in sorted(nets):  # each on the free track nearest its cells, in order along the edge
            k = min(range(len(slots)), key=lambda j: abs(slots[j] - pos))
            k = max(k, taken[-1] + 1 if taken else 0)
            taken.append(k)
        limit = len(slots) - 1
        for j in reversed(range(len(taken))):  # those pushed past the end move back along the edge
            taken[j] = min(taken[j], limit)
            limit = taken[j] - 1
        for (pos, net), k in zip(sorted(nets), taken):
            if side in ("bottom", "top"):
                px, py, layer = slots[k], ys[0] if side == "bottom" else ys[-1], vertical[k % len(vertical)]
            else:
                px, py, layer = xs[0] if side == "left" else xs[-1], slots[k], horizontal[k % len(horizontal)]
            pins.append(f"- {net} + NET {net}\n  + LAYER {layer} ( 0 0 ) ( 1 1 )\n  + PLACED ( {px} {py} ) N ;")
    die = f"DIEAREA ( {xs[0]} {ys[0]} ) ( {xs[-1]} {ys[-1]} ) ;"
    lines = [f"TRACKS {d} {g[0]} DO {len(g)} STEP {round(step)} LAYER {lay} ;"
             for lay, (d, start, step) in tracks.items()
             for g in [grid(lay, xs[0], xs[-1]) if d == "X" else grid(lay, ys[0], ys[-1])]]
    text = re.sub(r"^DIEAREA .*$", die, def_text, count=1, flags=re.M)
    text = re.sub(r"^(TRACKS .*\n)+", "\n".join(lines) + "\n", text, count=1, flags=re.M)
    return re.sub(r"^PINS \d+ ;.*?^END PINS", lambda _: f"PINS {len(pins)} ;\n" + "\n".join(pins) + "\nEND PINS",
                  text, count=1, flags=re.M | re.S)


def wirelength_um(def_text: str) -> float:
    """Total routed wire length (µm) of a routed DEF's NETS: the Manhattan length of each
    ``( x y ) ( x y )`` run (``*`` repeating the previous coordinate)."""
    unit = float(re.search(r"UNITS DISTANCE MICRONS (\d+)", def_text).group(1))
    body = def_text.split("\nNETS", 1)[-1]
    total = 0.0
    for seg in re.findall(r"(?:ROUTED|NEW)\s+\w+((?:\s*\(\s*[-\d*]+\s+[-\d*]+(?:\s+[-\d*]+)?\s*\))+)", body):
        pts = re.findall(r"\(\s*([-\d*]+)\s+([-\d*]+)", seg)
        px = py = None
        for x, y in pts:
            x = px if x == "*" else float(x)
            y = py if y == "*" else float(y)
            if px is not None:
                total += abs(x - px) + abs(y - py)
            px, py = x, y
    return round(total / unit, 1)
