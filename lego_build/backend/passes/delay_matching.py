"""Delay matching: seed 004 §5.2, eq. 5.1-5.2, and the greedy baseline of fig. 5-3(b).

Every node ``v`` consumes the data of one controller time step at cycle ``D_v``;
an edge ``(u, v)`` then needs ``E_uv = D_v - D_u - L_v >= 0`` registers (eq. 5.1).
The LP minimises ``sum W_uv E_uv`` (eq. 5.2) with PuLP and ``optimizer.solver``
(CBC or HiGHS). Sources (controller and address generators) are registers of the
time step itself, so ``D = 0``.
Anchors fix relative FU timing from the control flow: FU ``s`` runs ``s·c``
cycles after FU 0 (eq. 3.6), which is what turns broadcasts into systolic
forwarding. The constraint matrix is a network matrix, so the LP optimum is
integral; variables are declared integer anyway.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.backend.passes.bitwidth import _topological
from lego_build.backend.solver import solve
from lego_build.config.schema import OptimizerConf
from lego_build.errors import StageError
from lego_build.ir.dag import DAG


def _sources(dag: DAG) -> list[str]:
    return [n.name for n in dag.nodes if n.kind in ("ctrl", "agen", "cfg")]


def greedy_schedule(dag: DAG) -> dict[str, int]:
    """ASAP in topological order, then lift each anchor group to its common base; repeat to a fixpoint."""
    order = _topological(dag)
    lat = {n.name: n.latency for n in dag.nodes}
    preds: dict[str, list[str]] = {n.name: [] for n in dag.nodes}
    for e in dag.timed_edges():
        preds[e.dst].append(e.src)
    anchors = dict(dag.anchors)
    lower = {n.name: 0 for n in dag.nodes}
    while True:
        d: dict[str, int] = {}
        for node in order:
            if not preds[node.name]:  # sources: registers of the time step itself
                d[node.name] = 0
                continue
            ready = max(d[u] for u in preds[node.name]) + lat[node.name]
            d[node.name] = max(lower[node.name], ready)
        base = max((d[v] - off for v, off in anchors.items()), default=0)
        changed = False
        for v, off in anchors.items():
            if lower[v] < base + off:
                lower[v] = base + off
                changed = True
        if not changed:
            return d


def broadcast_groups(dag: DAG) -> dict[tuple[str, str], list[int]]:
    """Edge indices per source pin that drives two or more edges."""
    groups: dict[tuple[str, str], list[int]] = {}
    static = {n.name for n in dag.nodes if n.kind == "cfg"}
    for i, e in enumerate(dag.edges):
        if e.src not in static:
            groups.setdefault((e.src, e.src_port), []).append(i)
    return {k: v for k, v in sorted(groups.items()) if len(v) > 1}


def lp_schedule(dag: DAG, time_limit_s: float, solver: str,
                broadcast_max: bool = False) -> tuple[dict[str, int], float]:
    """Eq. 5.2 by LP. With ``broadcast_max`` a broadcast pin costs only its largest delay
    (the optimistic forward-chain cost of seed 004 §5.3, stage 1)."""
    import pulp

    lat = {n.name: n.latency for n in dag.nodes}
    prob = pulp.LpProblem("delay_matching", pulp.LpMinimize)
    var = {n.name: prob.add_variable(f"D_{i}", lowBound=0, cat="Integer") for i, n in enumerate(dag.nodes)}

    def extra(e):
        return var[e.dst] - var[e.src] - lat[e.dst]

    grouped = broadcast_groups(dag) if broadcast_max else {}
    in_group = {i for members in grouped.values() for i in members}
    timed = set(dag.timed_edges())
    cost = [e.width * extra(e) for i, e in enumerate(dag.edges) if i not in in_group and e in timed]
    for g, members in enumerate(grouped.values()):
        top = prob.add_variable(f"M_{g}", lowBound=0)
        for i in members:
            prob += top >= extra(dag.edges[i]), f"max{g}_{i}"
        cost.append(max(dag.edges[i].width for i in members) * top)
    primary = pulp.lpSum(cost)
    if broadcast_max:
        # the rewiring builds its chains on this schedule, so ties are broken towards the
        # earliest one (min sum D_v) and the result does not depend on the solver;
        # K * cost + sum D_v with K above any sum of D_v keeps eq. 5.2 primary
        horizon = sum(lat.values()) + max((abs(off) for _, off in dag.anchors), default=0) + 1
        prob += (len(var) * horizon + 1) * primary + pulp.lpSum(var.values())
    else:
        prob += primary
    for i, e in enumerate(dag.edges):
        if e in timed:
            prob += var[e.dst] - var[e.src] >= lat[e.dst], f"e{i}"
    for name in _sources(dag):
        prob += var[name] == 0, f"src_{name}"
    anchors = list(dag.anchors)
    if anchors:
        ref, ref_off = anchors[0]
        for name, off in anchors[1:]:
            prob += var[name] - var[ref] == off - ref_off, f"anchor_{name}"
    status = solve(prob, solver, time_limit_s)
    if status != "Optimal":
        raise StageError(f"delay-matching LP ended {status!r}; raise optimizer.time_limit_s or use optimizer=greedy")
    return {n: int(round(v.value())) for n, v in var.items()}, float(pulp.value(primary))


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    if cfg.delay_matching == "greedy":
        schedule = greedy_schedule(dag)
    else:
        schedule, _ = lp_schedule(dag, cfg.time_limit_s, cfg.solver)
    out = dag.with_delays(schedule)
    bad = [e for e in out.edges if e.delay < 0]
    if bad:
        raise StageError(f"delay matching produced a negative delay on {bad[0].src}->{bad[0].dst}")
    return replace(out, passes=out.passes + ("delay_matching",))


PASS = Pass("delay_matching", requires=("widths",), provides=("schedule",), run=run)
