"""Seed 001's memory-hierarchy sweeps (§5.3 and Fig. 5.11), run as a user runs a sweep.

    python -m benchmarks.thesis_sweeps [--quick] [--jobs 2] [--only memory memory2]

Each sweep is one ``lego-build -m ... --task map hydra/launcher=joblib`` process in a temporary
project (the product's sweep path: one design job per point, each stopped after the map stage;
the back end's passes do not change the energy, so ``optimizer=delay_only``), then the energies
are read from the sweep's job records:

* ``memory`` (§5.3): AlexNet, 16-bit, ``arch=interstellar_ck``: register file per PE 16-512 B x
  global buffer 32-512 KB (30 designs). The thesis's qualitative result is checked: at 128 and
  256 KB every small RF (16-64 B) beats the 512 B RF, and the best of them beats every 512 B
  configuration.
* ``memory2`` (Fig. 5.11): two register-file levels per PE (inner 8-32 B x outer 64-512 B) under a
  256 KB buffer (``arch=interstellar_ck2``, 12 designs); the thesis's best pair is 16 B + 256 B.

``--quick``: ``memory`` alone on 16 and 512 B x 128 and 256 KB (4 designs).
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/thesis_sweeps.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.thesis_sweeps)

import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import harness

RF_BYTES = (16, 32, 64, 128, 256, 512)
GLB_BYTES = (32768, 65536, 131072, 262144, 524288)
BASE = {"memory": ["arch=interstellar_ck", "workload=alexnet", "workload.bits=16", "optimizer=delay_only"],
        "memory2": ["arch=interstellar_ck2", "workload=alexnet", "workload.bits=16", "optimizer=delay_only"]}
SWEPT = {  # sweep -> (inner size key values, outer size key values); full and --quick
    "memory": ((RF_BYTES, GLB_BYTES), ((16, 512), (131072, 262144))),
    "memory2": (((8, 16, 32), (64, 128, 256, 512)), None),
}
KEYS = ("arch.memory.0.size_bytes", "arch.memory.1.size_bytes")
SMALL_RFS, MID_GLBS = (16, 32, 64), (131072, 262144)


def sweep(name: str, quick: bool, jobs: int, project: Path) -> tuple[dict[tuple[int, int], float], float]:
    """Run one sweep with ``lego-build -m``; energy (uJ) per (inner, outer) size, and the wall time."""
    inner, outer = SWEPT[name][1 if quick else 0]
    overrides = [*BASE[name], f"{KEYS[0]}={','.join(map(str, inner))}", f"{KEYS[1]}={','.join(map(str, outer))}"]
    project.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "lego_build.flow.app", "-m", *overrides, "--task", "map", "hydra/launcher=joblib",
           f"hydra.launcher.n_jobs={jobs}"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{name}: lego-build failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    energy = {}
    for path in sorted(project.glob("out/sweeps/*/jobs/*.json")):
        job = json.loads(path.read_text())
        sizes = dict(o.split("=", 1) for o in job["overrides"] if "=" in o)
        if job["status"] == "ok":
            energy[int(sizes[KEYS[0]]), int(sizes[KEYS[1]])] = float(job["summary"]["energy_pj"]) / 1e6
    if len(energy) != len(inner) * len(outer):
        raise SystemExit(f"{name}: {len(energy)} of {len(inner) * len(outer)} design jobs succeeded")
    return energy, wall


def grid(energy: dict, label, unit) -> tuple[list[str], list[list]]:
    inner, outer = sorted({a for a, _ in energy}), sorted({b for _, b in energy})
    return [label, *(unit(b) for b in outer)], [[f"{a} B", *(round(energy[a, b], 1) for b in outer)] for a in inner]


def memory_checks(energy: dict) -> dict:
    """§5.3's qualitative result on the measured grid."""
    small = [(r, g) for r in SMALL_RFS for g in MID_GLBS if (r, g) in energy and (512, g) in energy]
    big = [k for k in energy if k[0] == 512]
    if not small or not big:
        return {}
    return {"small RFs (16-64 B) beat the 512 B RF at 128 and 256 KB": all(energy[k] < energy[512, k[1]]
                                                                            for k in small),
            "the best of them beats every 512 B configuration": min(energy[k] for k in small) <
            min(energy[k] for k in big)}


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--jobs", type=int, default=2, help="design jobs at once (hydra.launcher.n_jobs)")
    ap.add_argument("--only", nargs="*", choices=sorted(SWEPT), help="sweeps to run (default: both)")
    args = ap.parse_args(argv)
    names = ["memory"] if args.quick else (args.only or list(SWEPT))
    headline, tables = {}, []
    with harness.workspace(args) as work:
        for name in names:
            energy, wall = sweep(name, args.quick, args.jobs, work / name)
            (a, b), best = min(energy.items(), key=lambda kv: kv[1])
            if name == "memory":
                columns, rows = grid(energy, "RF per PE", lambda g: f"{g // 1024} KB")
                checks = memory_checks(energy)
                headline |= {f"memory: {k}": v for k, v in checks.items()}
                headline[f"memory: lowest energy (uJ), {a} B RF with {b // 1024} KB"] = round(best, 1)
                title = "whole-network energy (uJ), AlexNet 16-bit: RF per PE (rows) x global buffer (columns)"
            else:
                columns, rows = grid(energy, "inner RF", lambda o: f"{o} B")
                headline[f"memory2: best pair (uJ), {a} B + {b} B"] = round(best, 1)
                if (16, 256) in energy:
                    headline["memory2: the thesis's pair 16 B + 256 B above the best"] = \
                        f"{energy[16, 256] / best - 1:.1%}"
                title = "whole-network energy (uJ), AlexNet 16-bit: inner RF (rows) x outer RF (columns), 256 KB"
            tables.append(harness.table(title, columns, rows, note=f"{len(energy)} designs in {wall:.0f} s, "
                                        f"{args.jobs} jobs at once"))
            print(f"\n{name}: {title}")
            print("  ".join(f"{c:>9}" for c in columns))
            for row in rows:
                print("  ".join(f"{c:>9}" for c in row))
    for k, v in headline.items():
        print(f"{k}: {'yes' if v is True else 'NO' if v is False else v}")
    harness.write_results("thesis_sweeps", {"headline": headline, "tables": tables}, quick=args.quick, out=args.out,
                          argv=argv, title="seed 001's memory-hierarchy sweeps (§5.3, Fig. 5.11)",
                          paper={"source": "seed 001 §5.3 and Fig. 5.11",
                                 "§5.3": "small RFs with a 128-256 KB buffer beat the 512 B RF",
                                 "Fig. 5.11 best pair": "16 B + 256 B"})
    return 0 if all(v is not False for v in headline.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
