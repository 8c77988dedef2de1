"""Graphviz view of an ADG: FUs on a grid, one edge colour per tensor, data nodes as boxes.

Direct links are solid and labelled ``tensor:delay``; delay links (FIFOs) are bold
and labelled ``tensor:fifo w``; each label also names the dataflows using the link
when the design has several."""
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
        many = len(adg.dataflows) > 1
        for link in net.links:
            (a, b), (x, y) = link.src, link.dst
            label = f"{net.tensor}:fifo {link.fifo}" if link.kind == "delay" else f"{net.tensor}:{link.delay}"
            if many:
                label += " " + "+".join(link.dataflows)
            style = ", style=bold" if link.kind == "delay" else ""
            lines.append(f'  "fu_{a}_{b}" -> "fu_{x}_{y}" [color={colour}, label="{label}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
