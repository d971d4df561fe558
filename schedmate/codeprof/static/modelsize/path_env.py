"""Local names of the entry script that the analyzer's resolver cannot value, read the way Python binds them on
the path the run takes:

    def train():
        if args.dataset == 'COCO':
            cfg = coco                      # off the path: the command picks VOC
        elif args.dataset == 'VOC':
            cfg = voc                       # the one assignment on the path; `voc` is a dict of data/config.py
        net = build_ssd('train', cfg['min_dim'], cfg['num_classes'])

A name the model's constructor call reads gets the value of its one assignment before that call in the same
function (or at module level), when every other assignment to it is in a branch the resolver settles as not
taken. Names the resolver knows keep its reading (command-line values win); a name assigned in a loop, assigned
twice on the path, or changed in place afterwards (`cfg['x'] = ...`, `cfg.update(...)`, `cfg.x = ...`) is left
out, so the call stays as uncountable as before. A name bound to a module is left out too: the model built
at its own assignment is counted there, and wrapping it again would count it twice.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.interp import Interp, Source, Unknown
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod

_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)
_LOOPS = (ast.For, ast.While, ast.AsyncFor, ast.comprehension)


def _scope(tree: ast.Module, st: ast.stmt) -> ast.AST:
    """The innermost function holding `st`, else the module."""
    best: ast.AST = tree
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(n is st for n in ast.walk(fn)):
            if best is tree or any(n is fn for n in ast.walk(best)):
                best = fn
    return best


def _in_loop(scope: ast.AST, target: ast.stmt) -> bool:
    for node in ast.walk(scope):
        if isinstance(node, _LOOPS) and node is not target and any(n is target for n in ast.walk(node)):
            return True
    return False


def _changed_in_place(scope: ast.AST, name: str) -> bool:
    """`name[k] = v`, `name.k = v`, `name.update(...)`/`name.setdefault(...)`, `del name[k]`, `name += ...`."""
    for node in ast.walk(scope):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            if isinstance(node, ast.AugAssign) and isinstance(t, ast.Name) and t.id == name:
                return True
            while isinstance(t, (ast.Subscript, ast.Attribute)):
                t = t.value
                if isinstance(t, ast.Name) and t.id == name:
                    return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name \
                and node.func.attr in {"update", "setdefault", "pop", "clear", "merge_from_file", "merge_from_list",
                                       "merge_from_args", "append", "extend", "insert", "__setitem__"}:
            return True
    return False


def path_env(it: Interp, src: Source, st: ast.stmt, value: ast.expr, off: set[int],
             resolve: Callable[[str], tuple[bool, Any, list[str]]]) -> dict[str, Any]:
    """Values for the free names of `value` that the resolver does not know (see the module docstring)."""
    scope = _scope(src.tree, st)
    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    env: dict[str, Any] = {}
    for name in sorted(names):
        try:
            known, _, _ = resolve(name)
        except Exception:  # noqa: BLE001 - a name the resolver cannot read is one to bind here
            known = False
        if known:
            continue
        assigns = [a for a in ast.walk(scope) if isinstance(a, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)]
        on_path = [a for a in assigns if id(a) not in off]
        if len(on_path) != 1 or len(on_path[0].targets) != 1 or on_path[0].lineno >= st.lineno:
            continue
        a = on_path[0]
        if _in_loop(scope, a) or _changed_in_place(scope, name):
            continue
        try:
            got = it.eval(a.value, {}, src)
        except _ERRORS:
            continue
        if not isinstance(got, (Unknown, Mod)):  # a module bound here is counted at its own assignment already
            env[name] = got
    return env
