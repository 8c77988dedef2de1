"""ADG structure (issue acceptance 3-5): delay links of fig. 3-2, forests for every preset and for
random affine dataflows, and the §4.3 merge against the plain union of per-dataflow MSTs."""
import random

import networkx as nx
import pytest

from lego_build import compose
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.analysis.lowering import FAMILY_DIMS
from lego_build.config.compose import available_options
from lego_build.frontend.adg_build import build_adg
from lego_build.frontend.links import candidate_links
from lego_build.frontend.mst import spanning_forest
from lego_build.ir.adg import ADG

#: the switchable GEMM array the LEGO-MNICOC preset was before it became seed 004 §6's conv array
GEMM_MNICOC = ["arch=lego_mnicoc", "arch.family=gemm", "~arch.dataflows.ohow", "arch.dataflows.mn.spatial=[m,n]",
               "arch.dataflows.icoc.spatial=[k,n]"]

REFERENCE = {"gemm": gemm(24, 20, 16), "conv2d": conv2d(1, 6, 6, 10, 10, 3, 3, 1, 1)}


def plain_union(fus, per_dataflow, reverse: bool):
    """The baseline the merge is measured against: each dataflow's own MST (seed 004 eq. 4.5),
    united. Returns (link pairs, ports)."""
    links, ports = set(), set()
    for _, candidates in per_dataflow:
        kept, roots = spanning_forest(fus, candidates, reverse)
        links |= {(lk.src, lk.dst) for lk in kept}
        ports |= set(roots)
    return links, ports


def check_forests(adg: ADG) -> None:
    """Per tensor and dataflow: a forest (acyclic, one parent each), every FU reached, one data node per tree."""
    for net in adg.nets:
        for df in adg.dataflows:
            g = nx.DiGraph()
            g.add_nodes_from(adg.fus)
            for lk in net.links:
                if df.name in lk.dataflows:
                    a, b = (lk.dst, lk.src) if net.role == "out" else (lk.src, lk.dst)
                    g.add_edge(a, b)
            ports = {p for p, dfs in zip(net.ports, net.port_dataflows) if df.name in dfs}
            fallback = {lk.dst for lk in net.links if lk.kind == "delay" and df.name in lk.dataflows}
            assert fallback <= ports, "a delay link's destination lacks its fallback data node"
            ports -= fallback
            where = f"{net.tensor}/{df.name}"
            assert nx.is_directed_acyclic_graph(g), where
            assert all(g.in_degree(v) <= 1 for v in g), f"{where}: an FU with two parents"
            roots = {v for v in g if g.in_degree(v) == 0}
            assert roots == ports, f"{where}: tree roots {sorted(roots - ports)} lack a data node"
            reached = set().union(*(nx.descendants(g, r) | {r} for r in roots))
            assert reached == set(adg.fus), f"{where}: FUs not reached"


def test_shidiannao_gets_the_delay_links_of_fig_3_2():
    cfg = compose(["arch=shidiannao"])
    ref = conv2d(1, 4, 4, 10, 10, 3, 3, 1, 0)
    adg = build_adg(ref, cfg.arch)
    x = adg.net("X")
    zeros = (0,) * 6
    solutions = {(ds, t) for ds, t, _ in x.delay_solutions}
    assert ((0, -1), zeros + (0, 1)) in solutions  # t = (0, ..., 0, 1): one kw step later
    assert ((-1, 0), zeros + (1, 0)) in solutions  # t = (0, ..., 1, 0): one kh step later
    assert {tuple(b - a for a, b in zip(lk.src, lk.dst)) for lk in x.links} <= {(0, -1), (-1, 0)}
    assert all(lk.kind == "delay" for lk in x.links)
    depth = {ds: w for ds, _, w in x.delay_solutions}
    assert depth[(0, -1)] == 1 and depth[(-1, 0)] == 3  # one kw step; one kh step = KW cycles
    assert not [lk for lk in adg.net("W").links if lk.kind == "delay"]  # W is shared directly
    check_forests(adg)


@pytest.mark.parametrize("preset", available_options("arch"))
def test_every_preset_gives_forests(preset):
    cfg = compose([f"arch={preset}"])
    check_forests(build_adg(REFERENCE[cfg.arch.family], cfg.arch))


def _random_axis(rng, dims, size):
    if size >= 4 and rng.random() < 0.3:
        outer = rng.choice([2, size // 2]) if size % 2 == 0 else 1
        a, b = rng.sample(dims, 2)
        return f"{a}:{outer},{b}" if outer > 1 else a
    return rng.choice(dims)


def test_random_affine_dataflows_give_forests():
    rng = random.Random(20261122)
    for case in range(24):
        family = rng.choice(["gemm", "conv2d"])
        dims = list(FAMILY_DIMS[family])
        rows, cols = rng.randint(1, 16), rng.randint(1, 16)
        c = [rng.choice([-1, 0, 1]), rng.choice([-1, 0, 1])]
        preset = "lego_mnicoc" if rng.random() < 0.4 else "systolic"
        names = ["mn", "icoc", "ohow"] if preset == "lego_mnicoc" else ["main"]
        # banks of arch.buffer_depth words: a random array's rows need not divide the preset's capacity
        d_t = rng.choice([0, 0, 8])
        # a column's FUs share output lanes where its control flow spaces their writes and no FIFO
        # link needs every step once (lego_build.ir.outshare)
        overrides = [f"arch={preset}", "arch.onchip_kb=0", f"arch.family={family}", f"arch.rows={rows}",
                     f"arch.cols={cols}", f"arch.out_lanes={2 if c[0] and not d_t else 0}",
                     f"arch.control_flow=[{c[0]},{c[1]}]", f"arch.d_s={rng.choice([1, 2])}",
                     f"arch.d_t={d_t}", "arch.max_fus=4096"]
        for name in names:
            axes = [_random_axis(rng, dims, rows), _random_axis(rng, dims, cols)]
            overrides.append(f"arch.dataflows.{name}.spatial=['{axes[0]}','{axes[1]}']")
        cfg = compose(overrides)
        try:
            check_forests(build_adg(REFERENCE[family], cfg.arch))
        except AssertionError as err:
            raise AssertionError(f"case {case}: {overrides}: {err}") from None


def _counts(adg: ADG, ref) -> tuple[int, int, int, int]:
    merged_links = merged_ports = union_links = union_ports = 0
    for net in adg.nets:
        per = [(df.name, candidate_links(ref, df, net.tensor, 1, 0)[0]) for df in adg.dataflows]
        links, ports = plain_union(adg.fus, per, net.role == "out")
        union_links, union_ports = union_links + len(links), union_ports + len(ports)
        merged_links, merged_ports = merged_links + len(net.links), merged_ports + len(net.ports)
    return merged_links, merged_ports, union_links, union_ports


def test_mnicoc_merge_beats_the_union_of_msts():
    cfg = compose([*GEMM_MNICOC, "arch.broadcast=ports"])
    adg = build_adg(REFERENCE["gemm"], cfg.arch)
    check_forests(adg)
    merged_links, merged_ports, union_links, union_ports = _counts(adg, REFERENCE["gemm"])
    # IC-OC gives every FU a port for B, so MN reads B there instead of down 240 column links;
    # A's row chains are shared; Y keeps MN's ports and IC-OC's reduction columns
    assert (union_links, union_ports) == (720, 528)
    assert (merged_links, merged_ports) == (480, 528)
    assert adg.net("B").links == () and set(adg.net("B").port_dataflows) == {("icoc", "mn")}


def test_broadcast_links_read_each_shared_word_once_and_fold_the_idle_banks():
    """``arch.broadcast=links``: MN reads B at one FU per column chain and forwards it, so the
    other 240 B banks are idle under MN and fold onto the 16 roots (16x the words per lane)."""
    cfg = compose([*GEMM_MNICOC, "arch.broadcast=links"])
    adg = build_adg(REFERENCE["gemm"], cfg.arch)
    check_forests(adg)
    b = adg.net("B")
    used = {df.name: sum(1 for dfs in b.port_dataflows if df.name in dfs) for df in adg.dataflows}
    assert used == {"mn": 16, "icoc": 256}
    assert sum(1 for lk in b.links if "mn" in lk.dataflows) == 240
    assert adg.capacity("B", "mn") == 16 * adg.depth("B") and adg.capacity("B", "icoc") == adg.depth("B")
    # IC-OC's partial sums meet at one FU per column: its port has the whole of the lane it shares with
    # the 7 FUs above it (arch.out_lanes: 2), 8x a port's words; with a lane per port the output folds
    # 16 banks under IC-OC
    assert adg.capacity("Y", "icoc") == 8 * adg.depth("Y") and adg.capacity("Y", "mn") == adg.depth("Y")
    own = build_adg(REFERENCE["gemm"], compose([*GEMM_MNICOC, "arch.broadcast=links", "arch.out_lanes=0"]).arch)
    assert own.capacity("Y", "icoc") == 16 * own.depth("Y") and own.capacity("Y", "mn") == own.depth("Y")
    merged_links, merged_ports, union_links, union_ports = _counts(adg, REFERENCE["gemm"])
    assert (merged_links, merged_ports) == (720, 528) == (union_links, union_ports)


def test_merge_reuses_chains_that_the_union_duplicates():
    # partial sums reduced over the whole array (KH x KW) in one dataflow and down columns in the
    # other: the merged design reuses the column chains, the union of MSTs does not
    cfg = compose(["arch=lego_mnicoc", "arch.family=conv2d", "arch.rows=6", "arch.cols=6",
                   "arch.control_flow=[1,1]", "arch.dataflows.mn.spatial=[kh,kw]",
                   "arch.dataflows.icoc.spatial=[kh,oc]"])
    adg = build_adg(REFERENCE["conv2d"], cfg.arch)
    check_forests(adg)
    merged_links, merged_ports, union_links, union_ports = _counts(adg, REFERENCE["conv2d"])
    assert merged_ports <= union_ports and merged_links < union_links
    y = adg.net("Y")
    shared = [lk for lk in y.links if lk.dataflows == ("icoc", "mn")]
    assert len(shared) == 30  # every column link serves both dataflows
