"""Artifacts of reference designs against a stored manifest of their hashes.

    python -m benchmarks.artifacts            # build the designs, compare with artifacts_manifest.json
    python -m benchmarks.artifacts --write    # store the manifest (before a change that must not alter them)

A restructuring must leave what a build produces unchanged. This builds the default
design and three presets in a temporary project, hashes every artifact (JSON canonically,
without the top-level fields a change may add, listed in ``ADDED_FIELDS``; other files by
their bytes; ``ADDED_FILES`` left out) and prints a table
per design: files equal, changed, missing and new. Exit status 1 if anything differs.
``--quick``: the default design alone.
"""
if __name__ == "__main__" and not __package__:  # python benchmarks/artifacts.py
    import _script  # noqa: F401  (re-runs this as python -m benchmarks.artifacts)

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import harness

ROOT = harness.ROOT
MANIFEST = Path(__file__).with_name("artifacts_manifest.json")
DESIGNS = {
    "default": [],
    "eyeriss-resnet50": ["arch=eyeriss", "workload=resnet50"],
    "lego_mnicoc-mobilenetv2": ["arch=lego_mnicoc", "workload=mobilenetv2"],
    "shidiannao-conv2d": ["arch=shidiannao", "workload=conv2d"],
}
#: top-level JSON fields an artifact may gain without changing what it says
ADDED_FIELDS = ("format_version",)
#: files a design directory may gain (the resolved config written beside the artifacts)
ADDED_FILES = ("config.yaml",)


def digest(path: Path) -> str:
    if path.suffix == ".json":
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict):
            doc = {k: v for k, v in doc.items() if k not in ADDED_FIELDS}
        data = json.dumps(doc, sort_keys=True, indent=2).encode()
    else:
        data = path.read_bytes()
    return hashlib.sha256(data).hexdigest()


def hashes(design_dir: Path) -> dict[str, str]:
    out = {}
    for path in sorted(design_dir.rglob("*")):
        rel = path.relative_to(design_dir).as_posix()
        if path.is_dir() or rel in ADDED_FILES or path.name.startswith("."):
            continue
        out[rel] = digest(path)
    return out


def build(name: str, overrides: list[str], project: Path) -> tuple[dict[str, str], float]:
    (project / "dodo.py").write_bytes((ROOT / "dodo.py").read_bytes())
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(project / "dodo.py"), "build", *overrides],
                          cwd=project, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{name}: doit build failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return hashes((project / "out" / "latest").resolve()), time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--write", action="store_true", help="store the manifest instead of comparing")
    args = ap.parse_args(argv)
    stored = json.loads(MANIFEST.read_text()) if MANIFEST.exists() and not args.write else {}
    found, differ, rows, verilog = {}, False, [], []
    designs = {"default": DESIGNS["default"]} if args.quick else DESIGNS
    print(f"{'design':<26} {'files':>5} {'equal':>5} {'changed':>7} {'missing':>7} {'new':>4} {'build s':>8}")
    with harness.workspace(args, prefix="lego-artifacts-") as tmp:
        for name, overrides in designs.items():
            project = tmp / name
            project.mkdir()
            found[name], seconds = build(name, overrides, project)
            old = stored.get(name, {})
            if args.write:
                print(f"{name:<26} {len(found[name]):>5} {'-':>5} {'-':>7} {'-':>7} {'-':>4} {seconds:>8.1f}")
                continue
            equal = sum(1 for k, v in found[name].items() if old.get(k) == v)
            changed = sorted(k for k, v in found[name].items() if k in old and old[k] != v)
            missing = sorted(set(old) - set(found[name]))
            new = sorted(set(found[name]) - set(old))
            differ |= bool(changed or missing or new)
            verilog += [f"{name}/{f}" for f in (*changed, *missing, *new) if f.endswith(".v")]
            print(f"{name:<26} {len(found[name]):>5} {equal:>5} {len(changed):>7} {len(missing):>7} {len(new):>4} "
                  f"{seconds:>8.1f}")
            rows.append([name, len(found[name]), equal, len(changed), len(missing), len(new), round(seconds, 1)])
            for label, files in (("changed", changed), ("missing", missing), ("new", new)):
                if files:
                    print(f"  {label}: {', '.join(files)}")
    if args.write:
        if args.quick:
            found = {**json.loads(MANIFEST.read_text()), **found} if MANIFEST.exists() else found
        MANIFEST.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n")
        print(f"wrote {MANIFEST.relative_to(ROOT)}")
        return 0
    print("identical to the manifest" if not differ else "DIFFERENT from the manifest")
    figures = {"headline": {"every Verilog file identical to the manifest": not verilog,
                            "every artifact identical to the manifest": not differ},
               "verilog_differs": verilog,
               "tables": [harness.table("reference designs' artifacts against benchmarks/artifacts_manifest.json",
                                        ["design", "files", "equal", "changed", "missing", "new", "build s"], rows)]}
    harness.write_results("artifacts", figures, quick=args.quick, out=args.out, argv=argv,
                          title="reference designs' artifacts against the stored manifest")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
