"""lego_build.targets.pnr_def: the I/O pins on the die's edge, a free track between neighbours."""
import re

from lego_build.targets.pnr_def import MARGIN_UM, arrange_pins
from lego_build.targets.pnr_netlist import Physical

LEF = "MACRO INVX1\n  CLASS CORE ;\n  SIZE 2.4 BY 10 ;\nEND INVX1\n"


def placed_def(cells: int) -> str:
    """A row of ``cells`` inverters 2.4 µm apart, tracks 0.8 µm apart on metal 1-5, no pins yet."""
    rows = "\n".join(f"- INVX1_{k} INVX1 + PLACED ( {k * 240} 0 ) N ;" for k in range(cells))
    tracks = "\n".join(f"TRACKS {d} 0 DO 1000 STEP 80 LAYER {lay} ;"
                       for d, lay in (("Y", "metal1"), ("X", "metal2"), ("Y", "metal3"), ("X", "metal4"),
                                      ("Y", "metal5")))
    return (f"UNITS DISTANCE MICRONS 100 ;\nDIEAREA ( 0 0 ) ( 1 1 ) ;\n{tracks}\n"
            f"COMPONENTS {cells} ;\n{rows}\nEND COMPONENTS\nPINS 0 ;\nEND PINS\n")


def physical(cells: int, pads: int) -> Physical:
    nets = {f"p{k}": [(f"INVX1_{k % cells}", "A", "input")] for k in range(pads)}
    return Physical(verilog="", blif="", original={}, pads={n: "input" for n in nets}, ports={}, pins=nets,
                    macro_pins={}, cells=cells)


def pins_of(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(1), int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"LAYER (\S+) .*?\n\s*\+ PLACED \( (-?\d+) (-?\d+) \)", text)]


def test_pins_sit_on_the_edge_with_a_free_track_between_neighbours():
    text = arrange_pins(placed_def(20), physical(20, 40), LEF)
    x0, y0, x1, y1 = (int(v) for v in re.search(r"DIEAREA \( (\S+) (\S+) \) \( (\S+) (\S+) \)", text).groups())
    assert (x0, y0) == (-960, -960)  # MARGIN_UM out of the rows, on the first track inside
    pins = pins_of(text)
    assert len(pins) == 40 and len({(x, y) for _, x, y in pins}) == 40
    for _, x, y in pins:
        assert x in (x0, x1) or y in (y0, y1)
    edges = [sorted(x for _, x, y in pins if y == side) for side in (y0, y1)] + \
        [sorted(y for _, x, y in pins if x == side) for side in (x0, x1)]
    assert edges[0], "the bottom edge, nearest the row, takes pins"
    for along in edges:
        assert all(b - a >= 2 * 80 for a, b in zip(along, along[1:])), along  # a free track between


def test_the_die_grows_when_the_pins_need_a_longer_edge():
    rows = placed_def(4)  # 9.6 x 10 µm of cells: 10 µm of margin a side
    small = re.search(r"DIEAREA .*", arrange_pins(rows, physical(4, 8), LEF)).group(0)
    many = arrange_pins(rows, physical(4, 200), LEF)
    big = re.search(r"DIEAREA \( (\S+) (\S+) \) \( (\S+) (\S+) \)", many)
    assert MARGIN_UM == 10 and small == "DIEAREA ( -960 -960 ) ( 1920 2000 ) ;"
    x0, y0, x1, y1 = (int(v) for v in big.groups())
    assert x1 - x0 > 4000 and y1 - y0 > 4000
    assert len({(x, y) for _, x, y in pins_of(many)}) == 200  # each pin a slot of its own
