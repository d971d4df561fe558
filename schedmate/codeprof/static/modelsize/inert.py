"""Assignments in a module's constructor whose value cannot change its parameter count (interp.py).

    assign(it, stmt, env, src)   # runs `targets = value` the way the interpreter's Assign does

A constructor often computes things besides its layers: a noise schedule in numpy, a grid of initial offsets
in torch, a re-initialised bias. When the interpreter cannot follow such a value it used to give up on the
whole count. Here:

- a value built only from numbers, numpy/math/torch functions (never `torch.nn` constructors or classes),
  tensor methods, builtins and local functions of that same kind is bound as an opaque, non-module value
  instead: it holds no parameter, and any later use that needs it as a number (a width, a condition) still
  gives up there, so no count is guessed;
- a frozen table (`nn.Parameter(schedule, requires_grad=False)`) is such a value: never trained, not counted;
- `layer.weight = nn.Parameter(...)` / `layer.bias = ...` on a built-in torch layer already counted
  re-initialises a parameter the count already holds (`self.offsets.bias = nn.Parameter(grid.view(-1))`).
"""

from __future__ import annotations

import ast
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import (
    _BUILTINS,
    Ext,
    FuncRef,
    Source,
    Tensor,
    Unknown,
    _registers_nothing,
)

Interp = Any
"""The interpreter (`interp.Interp`), not imported: interp imports this module at load time."""

_NUMERIC_ROOTS = {"numpy", "math", "torch", "scipy"}
_MAX_NESTING = 3


def assign(it: Interp, st: ast.Assign, env: dict[str, Any], src: Source) -> None:
    if isinstance(st.value, ast.DictComp):  # a plain dict (of weights to load) holds no registered module
        value: Any = Unknown("a dict comprehension")
    elif _reinitialises(it, st, env, src):
        return
    else:
        try:
            value = it.eval(st.value, env, src)
        except GiveUp as e:
            if not (computes(st.value) and inert(it, st.value, env, src)):
                raise
            for t in st.targets:
                _bind_opaque(it, t, Unknown(f"a value computed at construction ({e})"), env, src)
            return
    if isinstance(value, Unknown) and value.maybe_module and computes(st.value) and inert(it, st.value, env, src):
        value = Unknown(value.why)  # `self.prob = torch.from_numpy(p).float()`: a tensor, not a module
    for t in st.targets:
        it.bind(t, value, env, src)


def _bind_opaque(it: Interp, target: ast.expr, value: Unknown, env: dict[str, Any], src: Source) -> None:
    if isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            _bind_opaque(it, t.value if isinstance(t, ast.Starred) else t, value, env, src)
    elif isinstance(target, (ast.Name, ast.Attribute)):
        it.bind(target, value, env, src)
    # `grid[:, i] = ...`: an element of a tensor, no module


def _reinitialises(it: Interp, st: ast.Assign, env: dict[str, Any], src: Source) -> bool:
    """`self.proj.bias = nn.Parameter(...)` (or `.weight`), `x.bias.data = ...`: a built-in layer's existing parameter
    given a new initial value."""
    if len(st.targets) != 1 or not isinstance(st.targets[0], ast.Attribute):
        return False
    t = st.targets[0]
    if t.attr == "data":  # `layer.bias.data = torch.ones(n) * b`: new values for a tensor the layer already has
        return True
    if t.attr not in {"weight", "bias"} or isinstance(t.value, ast.Name):  # `self.weight = ...` may add one
        return False
    call = st.value
    if not (isinstance(call, ast.Call) and ast.unparse(call.func).split(".")[-1] == "Parameter"):
        return False
    try:
        owner = it.eval(t.value, env, src)
    except GiveUp:
        return False
    # a torch layer the count built (not the job's own class), whose weight it knows
    return isinstance(owner, Mod) and "__class__" not in owner.attrs and owner.weight is not None


def computes(node: ast.expr) -> bool:
    """Arithmetic or a call: a bare name, attribute or subscript the interpreter cannot follow (`net = NETS[k]`)
    may be a module and is never let through."""
    return isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)) \
        or any(isinstance(n, ast.Call) for n in ast.walk(node))


def inert(it: Interp, node: ast.expr, env: dict[str, Any], src: Source, depth: int = 0) -> bool:
    """Whether every call in the expression is numeric (see the module docstring)."""
    for n in ast.walk(node):
        if isinstance(n, (ast.Lambda, ast.DictComp, ast.SetComp)):
            continue
        if isinstance(n, ast.Call) and not _frozen_parameter(n) and not _numeric_call(it, n.func, env, src, depth):
            return False
    return True


def _numeric_call(it: Interp, func: ast.expr, env: dict[str, Any], src: Source, depth: int) -> bool:
    if isinstance(func, ast.Attribute) and not _dotted(func.value):  # `(a / b).view(...)`: a tensor method
        return func.attr[:1].islower() and not func.attr.startswith(("register", "add_module", "append", "extend"))
    try:
        fn = it.eval(func, env, src)
    except GiveUp:
        return False
    if isinstance(fn, Ext):
        parts = fn.path.split(".")
        if parts[0] == "builtins":
            return parts[-1] in _BUILTINS and parts[-1] not in {"setattr", "getattr", "super"}
        return parts[0] in _NUMERIC_ROOTS and parts[-1][:1].islower() and ("nn" not in parts[1:-1] or "functional" in parts) \
            and parts[-1] not in {"load", "hub"}
    if isinstance(fn, FuncRef) and fn.bound is None and depth < _MAX_NESTING:  # a local schedule helper
        return _registers_nothing(fn.node) and all(
            inert(it, r, {}, fn.src, depth + 1) for r in _calls_of(fn.node))
    if isinstance(fn, tuple) and fn and fn[0] == "method":  # a method of a number, a string or a list
        return not isinstance(fn[1], Mod) and fn[2] not in {"append", "extend", "insert"}
    if isinstance(func, ast.Attribute):  # a method of an opaque value (a tensor the interpreter does not follow)
        try:
            base = it.eval(func.value, env, src)
        except GiveUp:
            return False
        return (isinstance(base, Tensor) or (isinstance(base, Unknown) and not base.maybe_module)) \
            and func.attr[:1].islower()
    return False


def _frozen_parameter(call: ast.Call) -> bool:
    """`nn.Parameter(table, requires_grad=False)`: a lookup table the optimiser never updates, not a trained weight."""
    return ast.unparse(call.func).split(".")[-1] == "Parameter" and any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in call.keywords)


def _dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _calls_of(fn: ast.FunctionDef) -> list[ast.expr]:
    """The calls of a function body, for the inert check (names are the function's own or its module's)."""
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
