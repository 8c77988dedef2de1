"""Pin reuse on reducers of switchable designs: seed 004 §5.4, fig. 5-6.

In a design with several dataflows an adder may take partial sums from children
that no single dataflow uses together (each arrives through a gate that zeroes it
in the other dataflows). Liveness per dataflow gives the pin usage table: input
``i`` is active in dataflow ``k`` unless it is gated off there. The adder then
needs only ``max_k |A(k)|`` physical pins. A 0-1 program maps original pins to
physical pins per dataflow, ``C(i,j,k)``: every active pin on exactly one physical
pin, at most one active pin per physical pin and dataflow. The paper's objective
``sum C`` is constant under those constraints, so the objective minimised here is
the number of distinct connections ``Y(i,j) >= C(i,j,k)``: the multiplexer inputs
that the remapping adds (a mux is much cheaper than an adder input).
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.backend.passes import Pass
from lego_build.backend.solver import solve
from lego_build.config.schema import OptimizerConf
from lego_build.errors import StageError
from lego_build.ir.dag import DAG, Edge, GateSpec, MuxSpec, Node


def usage_table(dag: DAG, node: str) -> dict[str, set[str]]:
    """Input port -> dataflows in which it is live (a gate limits it, anything else is always live)."""
    nodes = {n.name: n for n in dag.nodes}
    table = {}
    for e in dag.inputs_of(node):
        src = nodes[e.src]
        table[e.dst_port] = set(src.spec(GateSpec).dataflows) if src.kind == "gate" else set(dag.dataflows)
    return table


def remap(table: dict[str, set[str]], dataflows: tuple[str, ...], time_limit_s: float,
          solver: str) -> dict[str, dict[str, int]]:
    """0-1 program of §5.4: ``{dataflow: {original pin: physical pin}}``."""
    import pulp

    pins = sorted(table)
    width = max(sum(1 for p in pins if k in table[p]) for k in dataflows)
    prob = pulp.LpProblem("pin_reuse", pulp.LpMinimize)
    c = {(i, j, k): prob.add_variable(f"C_{a}_{j}_{b}", cat="Binary")
         for a, i in enumerate(pins) for j in range(width) for b, k in enumerate(dataflows) if k in table[i]}
    y = {(i, j): prob.add_variable(f"Y_{a}_{j}", cat="Binary") for a, i in enumerate(pins) for j in range(width)}
    prob += pulp.lpSum(y.values())
    for (i, j, k), var in c.items():
        prob += y[(i, j)] >= var
    for k in dataflows:
        for i in pins:
            if k in table[i]:
                prob += pulp.lpSum(c[(i, j, k)] for j in range(width)) == 1
        for j in range(width):
            prob += pulp.lpSum(c[(i, j, k)] for i in pins if k in table[i]) <= 1
    status = solve(prob, solver, time_limit_s)
    if status != "Optimal":
        raise StageError(f"pin-reuse 0-1 program ended {status!r}; raise optimizer.time_limit_s")
    return {k: {i: j for (i, j, kk), var in c.items() if kk == k and var.value() > 0.5} for k in dataflows}


def _plan(mapping, table, dataflows, width):
    """Per physical pin: (original pins feeding it, {dataflow: which of them}); ``None`` if some
    dataflow leaves a pin unused while every input that could feed it is live elsewhere."""
    plan = []
    for j in range(width):
        feeding = sorted({i for k in dataflows for i, jj in mapping[k].items() if jj == j})
        choice = {}
        for k in dataflows:
            live = next((i for i, jj in mapping[k].items() if jj == j), None)
            idle = next((i for i in feeding if k not in table[i]), None)  # gated to zero in k
            if live is None and idle is None:
                return None
            choice[k] = feeding.index(live if live is not None else idle)
        plan.append((feeding, choice))
    return plan


def run(dag: DAG, cfg: OptimizerConf) -> DAG:
    if len(dag.dataflows) < 2:
        return replace(dag, passes=dag.passes + ("pin_reuse",))
    nodes, edges = list(dag.nodes), list(dag.edges)
    sel_bits = dag.node("dfsel").width
    for add in [n for n in dag.nodes if n.kind == "add"]:
        table = usage_table(dag, add.name)
        width = max(sum(1 for p in table if k in table[p]) for k in dag.dataflows)
        if width >= len(table):
            continue
        mapping = remap(table, dag.dataflows, cfg.time_limit_s, cfg.solver)
        plan = _plan(mapping, table, dag.dataflows, width)
        if plan is None:
            continue
        inputs = {e.dst_port: e for e in edges if e.dst == add.name}
        edges = [e for e in edges if e.dst != add.name]
        for j, (feeding, choice) in enumerate(plan):
            port = "p" if j == 0 else f"c{j - 1}"
            if len(feeding) == 1:
                edges.append(replace(inputs[feeding[0]], dst_port=port))
                continue
            mux = f"{add.name}_pin{j}"
            width_bits = max(inputs[i].width for i in feeding)
            nodes.append(Node(mux, "mux", 0, width_bits, MuxSpec(tuple(choice.items()))))
            edges += [replace(inputs[i], dst=mux, dst_port=f"i{n}") for n, i in enumerate(feeding)]
            edges += [Edge("dfsel", "sel", mux, "sel", sel_bits), Edge(mux, "out", add.name, port, width_bits)]
    return replace(dag, nodes=tuple(nodes), edges=tuple(edges), passes=dag.passes + ("pin_reuse",))


PASS = Pass("pin_reuse", requires=("reduction_trees",), provides=("pin_reuse",), run=run)
