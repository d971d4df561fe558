"""A job's own helper that only moves what it is given (`def trans_to_cuda(x): return x.cuda() if ... else x`,
`def to_device(m): return m.to(device)`): `model = trans_to_cuda(Net(opt))` builds `Net(opt)`. Only a function of
one required argument whose every `return` gives that argument back, bare or through a device/dtype move, is looked
through; any other helper may build or replace the model and is left to the caller's rules."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from schedmate.codeprof.static.modelsize.layers import GiveUp
from schedmate.codeprof.static.modelsize.values import FuncRef, Source

if TYPE_CHECKING:
    from schedmate.codeprof.static.modelsize.interp import Interp

_MOVES = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train"}


def _gives_back(node: ast.expr | None, name: str) -> bool:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MOVES:
        node = node.func.value
    if isinstance(node, ast.IfExp):
        return _gives_back(node.body, name) and _gives_back(node.orelse, name)
    return isinstance(node, ast.Name) and node.id == name


def moved_argument(it: Interp, src: Source, call: ast.expr) -> ast.expr | None:
    """The argument expression of `helper(arg)` when `helper` is a local pass-through function, else None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and len(call.args) == 1
            and not call.keywords and not isinstance(call.args[0], ast.Starred)):
        return None
    try:
        fn = it.eval(call.func, {}, src)
    except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
        return None
    if not isinstance(fn, FuncRef):
        return None
    a = fn.node.args
    params = [*a.posonlyargs, *a.args]
    if len(params) - len(a.defaults) != 1 or a.vararg or a.kwarg or a.kwonlyargs:
        return None
    returns = [n for n in ast.walk(fn.node) if isinstance(n, ast.Return)]
    if not returns or not all(_gives_back(r.value, params[0].arg) for r in returns):
        return None
    return call.args[0]
