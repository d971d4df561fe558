"""A branch condition the analyzer's resolver cannot read but the interpreter can, over values the resolver
knows: `if args.modelname.lower() == 'dab_detr':` (a string method around a command-line value). Only tests
whose every value leaf (a name, an attribute chain, a subscript) the resolver values are settled this way, so a
condition on anything the run computes stays open."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.interp import Interp, Source
from schedmate.codeprof.static.modelsize.layers import GiveUp
from schedmate.codeprof.static.modelsize.values import STR_METHODS

_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)


def _leaves(test: ast.expr) -> list[ast.expr] | None:
    """The value leaves of a test built from comparisons, boolean operators, constants and string-method calls;
    None when it holds anything else (a call of a function, a lambda...)."""
    out: list[ast.expr] = []

    def visit(n: ast.expr) -> bool:
        if isinstance(n, ast.Constant):
            return True
        if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)):
            out.append(n)
            return True
        if isinstance(n, ast.Call):
            return isinstance(n.func, ast.Attribute) and n.func.attr in STR_METHODS and not n.keywords \
                and visit(n.func.value) and all(visit(a) for a in n.args)
        if isinstance(n, ast.Compare):
            return visit(n.left) and all(visit(c) for c in n.comparators)
        if isinstance(n, ast.BoolOp):
            return all(visit(v) for v in n.values)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return visit(n.operand)
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            return all(visit(e) for e in n.elts)
        return False
    return out if visit(test) else None


def settled_by_interp(it: Interp, src: Source, test: ast.expr,
                      resolve: Callable[[str], tuple[bool, Any, list[str]]]) -> bool | None:
    leaves = _leaves(test)
    if not leaves or not any(isinstance(n, ast.Call) for n in ast.walk(test)):
        return None  # nothing the resolver did not already try
    for leaf in leaves:
        try:
            ok = resolve(ast.unparse(leaf))[0]
        except Exception:  # noqa: BLE001 - a leaf the resolver cannot read leaves the test open
            return None
        if not ok:
            return None
    try:
        val = it.concrete(it.eval(test, {}, src))
    except _ERRORS:
        return None
    return val if isinstance(val, bool) else None


def _targets(st: ast.Assign) -> set[str]:
    return {n.id for t in st.targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _exclusive(tree: ast.Module, a: ast.stmt, b: ast.stmt) -> bool:
    """Whether `a` and `b` sit in the two branches of one `if` (so a run executes at most one of them)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        body = {id(x) for s in node.body for x in ast.walk(s)}
        orelse = {id(x) for s in node.orelse for x in ast.walk(s)}
        if (id(a) in body and id(b) in orelse) or (id(b) in body and id(a) in orelse):
            return True
    return False


def alternatives(tree: ast.Module, made_by: list[list[ast.Assign]]) -> bool:
    """Whether two different classes were built by assignments to the same name on exclusive branches: the run
    trains one of them, and summing both would overcount."""
    for i, sts in enumerate(made_by):
        for others in made_by[i + 1:]:
            for a in sts:
                for b in others:
                    if a is not b and _targets(a) & _targets(b) and _exclusive(tree, a, b):
                        return True
    return False
