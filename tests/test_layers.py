"""The house's layers (issue 17): every import of the package, read from the source with ``ast``
(imports inside functions included), goes to its own layer or one below, and no modules import
each other in a circle."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[1]
#: bottom to top; a module may import its own layer and those below
LAYERS: tuple[tuple[str, ...], ...] = (
    ("lego_build.ir", "lego_build.errors"),
    ("lego_build.config",),
    ("lego_build.runtime", "rtl_templates_free"),
    ("lego_build.fulang",),
    ("lego_build.analysis",),
    ("lego_build.frontend",),
    ("lego_build.backend",),
    ("lego_build.mapping",),
    ("lego_build.emit",),
    ("lego_build.sim",),
    ("lego_build.targets",),
    ("lego_build.report",),
    ("lego_build.flow", "lego_build"),
)


def layer_of(module: str) -> int:
    best = None
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (i, len(prefix))
    if best is None:
        raise KeyError(f"{module}: in no layer; add its package to LAYERS")
    return best[0]


def modules() -> dict[str, Path]:
    out = {}
    for top in ("lego_build", "rtl_templates_free"):
        for path in sorted((REPO / top).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules ``name`` imports (a ``from a import b`` of a submodule counts as ``a.b``)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    mods = modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        g.add_edges_from((name, target) for target in imports(name, path, set(mods)))
    return g


def test_every_module_has_a_layer(graph):
    for name in graph:
        layer_of(name)


def test_no_import_runs_upwards(graph):
    upward = sorted(f"{a} (layer {layer_of(a)}) imports {b} (layer {layer_of(b)})"
                    for a, b in graph.edges if layer_of(b) > layer_of(a))
    assert not upward, "\n".join(upward)


def test_no_import_cycles(graph):
    cycles = sorted(" -> ".join(c) for c in nx.simple_cycles(graph))
    assert not cycles, "\n".join(cycles[:20])


def test_the_checker_sees_upward_imports_and_cycles(tmp_path):
    """The walk itself: a relative import of a module above, and a two-module circle, are found."""
    mods = {"lego_build.ir.x": tmp_path / "x.py", "lego_build.flow.y": tmp_path / "y.py",
            "lego_build.ir": tmp_path / "__init__.py"}
    mods["lego_build.ir.x"].write_text("def f():\n    from lego_build.flow import y\n")
    mods["lego_build.flow.y"].write_text("from lego_build.ir import x\n")
    mods["lego_build.ir"].write_text("from . import x\n")
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_edges_from((name, t) for t in imports(name, path, set(mods)))
    assert ("lego_build.ir.x", "lego_build.flow.y") in g.edges and layer_of("lego_build.flow.y") > 0
    assert ("lego_build.ir", "lego_build.ir.x") in g.edges
    assert list(nx.simple_cycles(g))


#: the house's room sizes (issue 43): a module a reader takes in whole, a function that fits a screen or two
MAX_FILE_LINES, MAX_FUNCTION_LINES = 500, 120


def oversized(mods: dict[str, Path]) -> list[str]:
    """Modules over :data:`MAX_FILE_LINES` lines, functions over :data:`MAX_FUNCTION_LINES`."""
    out = []
    for name, path in sorted(mods.items()):
        text = path.read_text()
        if (n := len(text.splitlines())) > MAX_FILE_LINES:
            out.append(f"{name}: {n} lines")
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                    out.append(f"{name}.{node.name}: {n} lines")
    return out


def test_no_module_or_function_outgrows_its_room():
    big = oversized({k: v for k, v in modules().items() if k.startswith("lego_build")})
    assert not big, "\n".join(big)


def test_the_size_check_sees_a_long_function(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES + "\n\ndef g():\n    pass\n")
    assert oversized({"lego_build.m": path}) == [f"lego_build.m.f: {MAX_FUNCTION_LINES + 1} lines"]
