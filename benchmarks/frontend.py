"""Front-end time (seed 004 ch. 4) on large arrays: candidate links, MSTs and the §4.3 merge.

    python -m benchmarks.frontend [--quick]

Each design is composed as ``doit build`` composes it, its ``analyze`` stage run, then its
``graph`` stage timed alone (the workload's reference kernel lowered to the array's family,
candidates, spanning forests, the multi-dataflow merge, ``adg.json`` written). Target
(issue 4): a 32x32 array with three dataflows in under 5 s on 2 cores (seed 004 reports 4 s in
C++ for its 16x16 design). ``--quick``: the same designs at 4x4 on small layers.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/frontend.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.frontend)

import sys
import time

from benchmarks import harness

#: workload overrides: full size, and the small inputs of ``--quick``
WORKLOADS = {
    "gemm": (["workload=gemm", "workload.M=64", "workload.N=64", "workload.K=64"],
             ["workload=gemm", "workload.M=8", "workload.N=8", "workload.K=8"]),
    "conv": (["workload=conv2d", "workload.in_ch=64", "workload.out_ch=64", "workload.in_h=34", "workload.in_w=34"],
             ["workload=conv2d", "workload.in_ch=8", "workload.out_ch=8", "workload.in_h=6", "workload.in_w=6"]),
}
CASES = (  # label, arch overrides, workload
    ("lego_mnicoc 16x16, three dataflows, GEMM 64^3", ["arch=lego_mnicoc"], "gemm"),
    ("lego_icoc_1k 32x32, IC-OC, GEMM 64^3", ["arch=lego_icoc_1k"], "gemm"),
    ("lego_mnicoc 32x32, three dataflows, conv 64ch 34x34",
     ["arch=lego_mnicoc", "arch.rows=32", "arch.cols=32", "arch.max_fus=1024"], "conv"),
)
QUICK = ["arch.rows=4", "arch.cols=4", "arch.max_fus=16"]
TARGET_S = 5.0


def measure(overrides: list[str], work) -> dict:
    cfg = harness.compose(overrides)
    harness.run_stages(cfg, "analyze", work)
    start = time.perf_counter()
    harness.run_stages(cfg, "graph", work, skip=("analyze",))
    seconds = time.perf_counter() - start
    from lego_build.runtime.artifacts import read_artifact

    adg = read_artifact(work, "adg.json")
    return {"dataflows": len(adg.dataflows), "fus": len(adg.fus), "seconds": round(seconds, 2),
            "links": sum(len(n.links) for n in adg.nets), "ports": sum(len(n.ports) for n in adg.nets)}


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__).parse_args(argv)
    rows = []
    with harness.workspace(args) as work:
        for i, (label, arch, workload) in enumerate(CASES):
            overrides = [*arch, *WORKLOADS[workload][args.quick], *(QUICK if args.quick else [])]
            r = measure(overrides, work / str(i))
            rows.append([label, r["dataflows"], r["fus"], r["seconds"], r["links"], r["ports"]])
            print(f"{label:<52} {r['dataflows']:>2} dataflows {r['fus']:>5} FUs {r['seconds']:7.2f} s "
                  f"{r['links']:>6} links {r['ports']:>5} ports")
    big = [r for r in rows if r[2] >= 1024 and r[1] >= 3]
    headline = {"graph stage, 32x32 with three dataflows (s)": big[0][3] if big else None, "target (s)": TARGET_S}
    figures = {"headline": headline, "tables": [harness.table(
        "graph stage alone, per design", ["design", "dataflows", "FUs", "seconds", "links", "ports"], rows)]}
    harness.write_results("frontend", figures, quick=args.quick, out=args.out, argv=argv,
                          title="front-end (graph stage) time on large arrays",
                          paper={"source": "seed 004 ch. 4 (C++ front end)", "16x16 design (s)": 4.0})
    return 0


if __name__ == "__main__":
    sys.exit(main())
