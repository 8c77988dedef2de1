"""Graphviz view of an ADG: FUs on a grid, one edge colour per tensor, data nodes as boxes."""
from __future__ import annotations

from lego_build.ir.adg import ADG

_COLOURS = ("blue", "red", "darkgreen", "orange", "purple")


def adg_to_dot(adg: ADG) -> str:
    lines = [f'digraph "{adg.kernel}_adg" {{', "  node [shape=circle, fontsize=10];"]
    for r, c in adg.fus:
        lines.append(f'  "fu_{r}_{c}" [label="{r},{c}", pos="{c},{-r}!"];')
    for colour, net in zip(_COLOURS * 4, adg.nets):
        for lane, (r, c) in enumerate(net.ports):
            port = f"{net.tensor}_port{lane}"
            lines.append(f'  "{port}" [shape=box, label="{net.tensor}[{lane}]", color={colour}];')
            ends = (f'"fu_{r}_{c}"', f'"{port}"') if net.role == "out" else (f'"{port}"', f'"fu_{r}_{c}"')
            lines.append(f"  {ends[0]} -> {ends[1]} [color={colour}, style=dashed];")
        for link in net.links:
            (a, b), (x, y) = link.src, link.dst
            lines.append(f'  "fu_{a}_{b}" -> "fu_{x}_{y}" [color={colour}, label="{net.tensor}:{link.delay}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
