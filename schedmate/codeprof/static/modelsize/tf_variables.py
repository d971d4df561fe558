"""TF1 models written as explicit variables: `weights = {'h1': tf.Variable(tf.random_normal([n_input, 256])), ...}`
or `tf.get_variable('w', shape=[5, 5, 1, 32])` in the entry script's module-level statements, counted by the
shapes their initialisers are given (the interpreter values the sizes: `7 * 7 * 64`, module constants, flags
with defaults). A variable marked `trainable=False` (a step counter) is not a weight; any shape that cannot be
valued makes the whole count None.

    count_tf_variables(read_text, import_file, resolve, "train.py") -> (params, evidence) | None
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.interp import Interp
from schedmate.codeprof.static.modelsize.layers import GiveUp

_VARIABLE = re.compile(r"(^|\.)(Variable|get_variable)$")
_TF = re.compile(r"^(tf|tensorflow)(\.compat\.v1)?\.")
_INIT = re.compile(r"(^|\.)(random_normal|truncated_normal|random_uniform|zeros|ones|glorot_\w+|xavier_\w+|"
                   r"normal|uniform|constant|fill)$")
_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """Nodes of module-level statements (not inside function or class bodies)."""
    out: list[ast.AST] = []
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.extend(ast.walk(st))
    return out


def _shape_node(call: ast.Call) -> ast.expr | None:
    """The shape a variable is created with: `get_variable(name, shape)` / `shape=`, or the shape given to the
    initialiser call inside `tf.Variable(init([d1, d2]))`."""
    name = ast.unparse(call.func)
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    if name.endswith("get_variable"):
        return kw.get("shape", call.args[1] if len(call.args) > 1 else None)
    init = call.args[0] if call.args else kw.get("initial_value")
    if isinstance(init, ast.Call) and _INIT.search(ast.unparse(init.func)):
        ikw = {k.arg: k.value for k in init.keywords if k.arg}
        return ikw.get("shape", init.args[0] if init.args else None)
    return None


def count_tf_variables(read_text: Callable[[str], str | None], import_file: Callable[[str, str], str | None],
                       resolve: Callable[[str], tuple[bool, Any, list[str]]], entry: str) -> tuple[int, list[str]] | None:
    it = Interp(read_text, import_file, resolve)
    src = it.source(entry, entry=True)
    if src is None:
        return None
    total, where = 0, []
    for node in _module_level(src.tree):
        if not isinstance(node, ast.Call) or not _VARIABLE.search(ast.unparse(node.func)) \
                or not _TF.match(ast.unparse(node.func)):
            continue
        if any(k.arg == "trainable" and isinstance(k.value, ast.Constant) and k.value.value is False
               for k in node.keywords):
            continue
        shape = _shape_node(node)
        if shape is None:
            return None  # a variable made from a value the count cannot size
        try:
            dims = it.concrete(it.eval(shape, {}, src))
        except _ERRORS:
            return None
        if not isinstance(dims, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0
                                                           for d in dims):
            return None
        total += math.prod(dims)
        where.append(f"{entry}:{node.lineno}")
    return (total, where) if total > 0 else None


__all__ = ["count_tf_variables"]
