"""The import graph has no cycles and the simulator sits below nothing it drives: policies, annotators and
adapters see the simulation through `schedmate.sim.view.SchedulerView`, never the engine (`sim.engine` and the
modules it is split into) at module level."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("schedmate", "adapters")
ENGINE = {"schedmate.sim.engine", "schedmate.sim.core", "schedmate.sim.transitions", "schedmate.sim.passes"}
"""The replay engine: `sim.engine` (the event loop, `Simulator`) and the layers it is built on."""


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = p
    return out


def imports(path: Path, known: set[str]) -> set[str]:
    """Modules imported at module level, TYPE_CHECKING blocks included (function-local imports excluded)."""
    tree = ast.parse(path.read_text())
    nodes = [n for top in tree.body for n in ([top] + (top.body if isinstance(top, ast.If) else []))]
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{a.name}" for a in node.names} & known
            if len(subs) < len(node.names) and node.module in known:
                out.add(node.module)  # names defined by the package itself, not only its submodules
            out |= subs
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imports(p, known) - {m} for m, p in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in g:
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle():
    assert cycles(graph()) == []


def test_a_cycle_is_found_when_there_is_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_nothing_the_simulator_drives_imports_the_simulator():
    g = graph()
    drivers = {"schedmate.semantic.measure"}  # a benchmark script that runs replays, like replay.py
    upward = [m for m, deps in g.items() if deps & ENGINE and m not in drivers
              and m.startswith(("schedmate.policies", "schedmate.annotators", "schedmate.semantic", "adapters"))]
    assert upward == []
