"""The layer order, enforced: a module never imports one of a higher layer, and module-level
imports form no cycle. Function-level (lazy) imports count too."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulator", "topologies", "validation", "gpunetsim")
# Lowest first. A module belongs to the longest prefix that names it.
LAYERS = (
    ("simulator.core", "simulator"),          # the package's own __init__ sits with the core
    ("topologies",),
    ("simulator.collectives",),
    ("simulator.network",),
    ("simulator.training",),
    ("validation",),
    ("gpunetsim", "simulator.bench"),
)


def _layer(module: str) -> int:
    best, rank = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    if rank < 0:
        raise AssertionError(f"module {module} belongs to no layer: add it to LAYERS")
    return rank


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


def _imports(path: Path, module: str) -> list[tuple[str, bool]]:
    """(imported project module, at module level) for every import statement in the file."""
    tree = ast.parse(path.read_text(), str(path))
    top = set(map(id, tree.body))
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[:-node.level] if not path.name == "__init__.py" else module.split(".")[:len(module.split(".")) - node.level + 1]
                names = [".".join(base + ([node.module] if node.module else []))]
            elif node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for n in names:
            if n.split(".")[0] in PACKAGES:
                found.append((n, id(node) in top))
    return found


MODULES = _modules()


def _upward(module: str, path: Path) -> list[str]:
    mine, bad = _layer(module), []
    for imported, _ in _imports(path, module):
        target = imported
        while target not in MODULES and "." in target:
            target = target.rsplit(".", 1)[0]
        line = f"{module} (layer {mine}) imports {target} (layer {_layer(target)})"
        if target in MODULES and _layer(target) > mine and line not in bad:
            bad.append(line)
    return bad


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_goes_up_the_layers(module):
    assert _upward(module, MODULES[module]) == []


def test_the_check_sees_an_upward_import_even_inside_a_function(tmp_path):
    f = tmp_path / "routing.py"
    f.write_text("def f():\n    from simulator.network.engine import FlowNetwork\n")
    assert _upward("topologies.routing", f) == [
        "topologies.routing (layer 1) imports simulator.network.engine (layer 3)"]


def test_module_level_imports_have_no_cycle():
    g = nx.DiGraph()
    for module, path in MODULES.items():
        for imported, top in _imports(path, module):
            target = imported
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if top and target in MODULES and target != module:
                g.add_edge(module, target)
    cycles = list(nx.simple_cycles(g))
    assert not cycles, f"import cycles: {cycles[:3]}"


def test_no_importlib_tricks():
    users = [m for m, p in MODULES.items() if "importlib" in p.read_text()]
    assert not users, f"modules importing by name: {users}"
