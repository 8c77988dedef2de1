"""``optimize`` stage: ADG -> DAG, then the pass pipeline -> ``dag.json``, ``passes.json``.

``passes.json`` has one row per pass: register bits on edges (after ``delay_matching``
this is the LP objective of eq. 5.2), adders and their inputs, multipliers, muxes,
buffer ports and clock-gated register bits. Pass wall times are printed, not stored:
every artifact of the design directory is reproducible byte for byte.
"""
from __future__ import annotations

import time
from pathlib import Path

from lego_build.backend.codegen import build_dag
from lego_build.backend.passes import check_order, pipeline
from lego_build.backend.stats import dag_stats
from lego_build.config.schema import LegoConfig, OptimizerConf
from lego_build.ir.adg import ADG
from lego_build.ir.artifacts import Passes


def optimize(adg: ADG, optimizer: OptimizerConf) -> tuple:
    dag = build_dag(adg)
    passes = pipeline(tuple(optimizer.passes))
    check_order(passes)
    log = [{"pass": "codegen", **dag_stats(dag)}]
    seconds = {}
    for p in passes:
        start = time.perf_counter()
        dag = p.run(dag, optimizer)
        seconds[p.name] = time.perf_counter() - start
        log.append({"pass": p.name, **dag_stats(dag)})
    log[-1]["latency"] = dag.latency
    return dag, log, seconds


def run(cfg: LegoConfig, design_dir: Path, inputs) -> dict:
    dag, log, seconds = optimize(inputs["adg.json"], cfg.optimizer)
    timing = ", ".join(f"{k} {v:.2f}s" for k, v in seconds.items())
    print(f"optimize: {len(dag.nodes)} primitives, {dag.register_bits()} register bits, "
          f"latency {dag.latency} cycles ({timing})")
    return {"dag.json": dag, "passes.json": Passes(optimizer=cfg.optimizer.name, pipeline=tuple(cfg.optimizer.passes),
                                                   delay_matching=cfg.optimizer.delay_matching, passes=tuple(log))}
