"""Module constants a script takes in with `from hparams import *`, through any depth of star imports
(`hparams.py` itself doing `from base_hparams import *`): the names the script then uses bare.

Only local modules (files in the workdir) are read, never executed; a constant is a module-level assignment
whose right-hand side is a literal or arithmetic over constants already known (so `batch = speakers *
utterances` across two modules evaluates). A module's own assignments come after what it star-imports, so a
later value wins, as Python's import does.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof.pyast import const_eval

MAX_DEPTH = 4
"""star imports followed from the entry script (a chain longer than this is not read)"""


def _star_sources(tree: ast.Module) -> list[tuple[str, int]]:
    """(module, relative level) of each module-level `from X import *`, in order."""
    return [(n.module or "", n.level) for n in tree.body
            if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)]


def star_constants(
    rel: str,
    read_text: Callable[[str], str | None],
    find_module: Callable[[str, str], str | None],
) -> list[tuple[str, Any, str]]:
    """(name, value, "file:line") of the constants the star imports of `rel` bring in, in import order (a later
    entry for the same name replaces an earlier one). `find_module(module, importer_dir)` names the workdir file
    of a module or None when it is not local."""
    known: dict[str, Any] = {}
    out: list[tuple[str, Any, str]] = []

    def visit(path: str, depth: int, seen: frozenset[str]) -> None:
        try:
            tree = ast.parse(read_text(path) or "")
        except SyntaxError:
            return
        base = str(PurePosixPath(path).parent)
        for n in tree.body:
            if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names):
                if depth >= MAX_DEPTH:
                    continue
                mod = n.module or ""
                if n.level:  # `from .hparams import *`: next to the importer (or its parents)
                    up = PurePosixPath(base)
                    for _ in range(n.level - 1):
                        up = up.parent
                    target = find_module(mod, str(up)) if mod else None
                else:
                    target = find_module(mod, base)
                if target and target not in seen:
                    visit(target, depth + 1, seen | {target})
            elif depth > 0 and isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if len(targets) != 1 or not isinstance(targets[0], ast.Name) or n.value is None:
                    continue
                ok, v = const_eval(n.value, known)
                if ok and isinstance(v, (int, float, str, bool)):
                    known[targets[0].id] = v
                    out.append((targets[0].id, v, f"{path}:{n.lineno}"))

    if _star_sources(_parse(read_text(rel))):
        visit(rel, 0, frozenset({rel}))
    return out


def _parse(text: str | None) -> ast.Module:
    try:
        return ast.parse(text or "")
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])
