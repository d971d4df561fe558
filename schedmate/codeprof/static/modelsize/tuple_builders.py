"""A builder that returns the model beside other objects (`model, criterion, postprocessors = build_model(args)`, the
DETR family's factories; `model, nodes_dist, prop_dist = get_model(args, ...)`): the entry script unpacks a tuple, and
the element whose target is named like a model is the model being trained.

The builder is a local function (followed through wrappers that only return another local builder's result,
`def build_model(args): return build(args)`) whose one `return` is a tuple of names. Only the statements before the
model's assignment run, one by one; a statement that cannot be followed (a matcher or a loss built from things the
interpreter does not know) poisons the names it assigns, so the model's expression either reads only names that
were followed or gives up. The other elements (criteria, post-processors, distributions) are never built.

    tuple_models(it, src, st, builds, aux) -> [(class name, params, evidence), ...] | None  (None: not this shape)
Raises GiveUp when the builder makes a local module that cannot be counted (the caller then counts nothing).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.binding import bind_parameters, required
from schedmate.codeprof.static.modelsize.interp import FuncRef, Interp, Source, Unknown
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod

_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)
_MODEL_NAME = re.compile(r"(^|_)(model|net|network)(_|$)", re.IGNORECASE)
_HOPS = 3


def _bind(it: Interp, fn: FuncRef, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The builder's parameters bound to the call's values; a parameter neither given nor defaulted gives up."""
    a = fn.node.args
    params = [p.arg for p in [*a.posonlyargs, *a.args]]
    if a.vararg or len(args) > len(params):
        raise GiveUp(f"{fn.node.name}: positional arguments beyond its parameters")
    env: dict[str, Any] = dict(fn.closure or {})
    env.update(bind_parameters(a, args, kwargs, lambda d: it.eval(d, {}, fn.src), required(fn.node.name)))
    return env


def _arg(it: Interp, node: ast.expr, env: dict[str, Any], src: Source) -> Any:
    """An argument's value, or Unknown when it cannot be followed (a device, a data loader): the builder gives up
    only if it needs it."""
    try:
        return it.eval(node, env, src)
    except _ERRORS:
        return Unknown(f"argument {ast.unparse(node)[:40]} cannot be followed")


def _call_values(it: Interp, call: ast.Call, env: dict[str, Any], src: Source) -> tuple[Any, list[Any], dict[str, Any]]:
    fn = it.eval(call.func, env, src)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise GiveUp("*args or **kwargs passed to a builder")
    return (fn, [_arg(it, a, env, src) for a in call.args],
            {k.arg: _arg(it, k.value, env, src) for k in call.keywords if k.arg})


def _stored(st: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _path(body: list[ast.stmt], goal: ast.stmt) -> list[tuple[list[ast.stmt], ast.stmt, bool | None]] | None:
    """The blocks from `body` down to `goal`: (block, its statement on the way, the `if` side taken or None)."""
    for st in body:
        if st is goal:
            return [(body, st, None)]
        branches: list[tuple[list[ast.stmt], bool | None]] = []
        if isinstance(st, ast.If):
            branches = [(st.body, True), (st.orelse, False)]
        elif isinstance(st, (ast.With, ast.Try)):
            branches = [(st.body, None)]
        for block, side in branches:
            if (rest := _path(block, goal)) is not None:
                return [(body, st, side), *rest]
    return None


def _skipped(it: Interp, env: dict[str, Any], src: Source, st: ast.stmt, others: list[ast.stmt]) -> bool:
    """Whether `if cond: <another assignment of the model>` is settled as not taken."""
    if not isinstance(st, ast.If) or any(n in others for b in st.orelse for n in ast.walk(b)):
        return False
    try:
        return not it.concrete(it.eval(st.test, env, src))
    except _ERRORS:
        return False


def _touches_model(env: dict[str, Any], model_st: ast.Assign, st: ast.stmt) -> bool:
    """Whether a statement after the model's assignment names the model, or a name bound to the same object, or
    could end the way (`return`, `raise`): only those can change what the builder returns."""
    target = model_st.targets[0]
    model_names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    built = [env[n] for n in model_names if n in env]
    aliases = {k for k, v in env.items() if any(v is b for b in built)}
    names = {n.id for n in ast.walk(st) if isinstance(n, ast.Name)}
    return bool(names & (model_names | aliases)) or any(isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(st))


class _NotThisShape(Exception):
    pass


def _follow(it: Interp, env: dict[str, Any], src: Source, path: list[tuple[list[ast.stmt], ast.stmt, bool | None]],
            model_st: ast.Assign, at_model: Callable[[], None], others: list[ast.stmt]) -> bool:
    """Run the statements on the way to the `return`: the model's own assignment strictly, the others one by one
    (a statement that cannot be followed poisons the names it sets). False when the way cannot be settled: an
    `if` on it whose condition is unknown or false, a statement that changes an object's attribute or item, another
    assignment of the model (`if args.masks: model = Wrapper(model)`) not settled off the way."""
    built = False
    for block, on_way, side in path:
        for st in block[:block.index(on_way)]:
            if built and not _touches_model(env, model_st, st):
                continue  # after the model, `weight_dict["loss_giou"] = args.giou_coef`: the loss's settings
            if any(isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store) for n in ast.walk(st)):
                return False  # `args.x = ...`: the interpreter would not carry it to what reads it later
            if isinstance(st, (ast.Return, ast.Raise)):
                return False
            if st is not model_st and any(n in others for n in ast.walk(st)) and not _skipped(it, env, src, st, others):
                return False
            if st is model_st:
                it.evidence.append(f"{src.rel}:{st.lineno}")
                try:
                    at_model()  # GiveUp goes to the caller: the model cannot be counted
                except _NotThisShape:
                    return False
                built = True
                continue
            try:
                it.exec_stmt(st, env, src)
            except _ERRORS:
                for n in _stored(st):  # what this statement would have set is not known
                    env[n] = Unknown(f"{n} is set by a statement that cannot be followed")
            except Exception:  # noqa: BLE001 - a `break`/`continue` signal: the way is not a straight one
                return False
        if isinstance(on_way, ast.If):
            try:
                taken = bool(it.concrete(it.eval(on_way.test, env, src)))
            except _ERRORS:
                return False
            if taken is not side:
                return False
    return True


def _model_element(it: Interp, fn: FuncRef, env: dict[str, Any], pos: int, width: int,
                   builds: Callable[[Interp, Source, ast.Call], bool], hops: int = 0) -> Any:
    """The value of element `pos` of the tuple the builder returns; None when the builder is not of this shape or
    the element is not a local module it constructs."""
    returns = [n for n in ast.walk(fn.node) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1:
        return None  # several ways out: which one the run takes is not settled here
    value = returns[0].value
    if isinstance(value, ast.Call) and hops < _HOPS:  # `def build_model(args): return build(args)`
        try:
            inner, args, kwargs = _call_values(it, value, env, fn.src)
            inner_env = _bind(it, inner, args, kwargs) if isinstance(inner, FuncRef) else None
        except _ERRORS:
            return None
        if not isinstance(inner, FuncRef) or inner_env is None:
            return None
        return _model_element(it, inner, inner_env, pos, width, builds, hops + 1)
    if not (isinstance(value, ast.Tuple) and len(value.elts) == width and isinstance(value.elts[pos], ast.Name)):
        return None
    name = value.elts[pos].id
    way = _path(fn.node.body, returns[0])
    setters = [st for st in ast.walk(fn.node) if isinstance(st, ast.stmt) and st is not fn.node
               and not isinstance(st, (ast.If, ast.With, ast.Try, ast.For, ast.While)) and name in _stored(st)]
    on_way = [st for st in setters if any(st in block for block, _, _ in way or [])]
    if way is None or len(on_way) != 1:
        return None  # assigned on several paths, in a loop or off the way to the return: not settled here
    model_st = on_way[0]
    others = [st for st in setters if st is not model_st]
    if not (isinstance(model_st, ast.Assign) and len(model_st.targets) == 1 and isinstance(model_st.value, ast.Call)):
        return None
    target, call = model_st.targets[0], model_st.value
    if isinstance(target, ast.Name) and builds(it, fn.src, call):
        def at_model() -> None:
            env[name] = it.eval(call, env, fn.src)
    elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) and hops < _HOPS:
        def at_model() -> None:  # `model, criterion, post = build_func(args)` inside the builder: one more level
            try:
                inner, args, kwargs = _call_values(it, call, env, fn.src)
                inner_env = _bind(it, inner, args, kwargs) if isinstance(inner, FuncRef) else None
            except _ERRORS as e:
                raise _NotThisShape from e
            if not isinstance(inner, FuncRef) or inner_env is None:
                raise _NotThisShape
            names = [e.id for e in target.elts]  # type: ignore[attr-defined]
            got = _model_element(it, inner, inner_env, names.index(name), len(names), builds, hops + 1)
            if got is None:
                raise _NotThisShape
            env[name] = got
    else:
        return None
    if not _follow(it, env, fn.src, way, model_st, at_model, others):
        return None
    return env.get(name)


def tuple_models(it: Interp, src: Source, st: ast.Assign, value: ast.expr,
                 builds: Callable[[Interp, Source, ast.Call], bool],
                 aux: re.Pattern[str]) -> list[tuple[str, int, list[str]]] | None:
    """The model a tuple-returning local builder constructs for `a, model, b = builder(...)`, or None."""
    target = st.targets[0]
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Call)
            and all(isinstance(e, ast.Name) for e in target.elts)):
        return None
    names = [e.id for e in target.elts]  # type: ignore[attr-defined]
    picks = [i for i, n in enumerate(names) if _MODEL_NAME.search(n) and not aux.search(n)]
    if len(picks) != 1:
        return None  # no model, or two (a generator and a discriminator?) the names do not tell apart
    try:
        fn, args, kwargs = _call_values(it, value, {}, src)
    except _ERRORS:
        return None
    if not isinstance(fn, FuncRef):
        return None
    it.evidence, it.steps = [f"{src.rel}:{st.lineno}"], 0
    try:
        env = _bind(it, fn, args, kwargs)
    except _ERRORS:
        return None
    got = _model_element(it, fn, env, picks[0], len(names), builds)
    if got is None:
        return None
    if not isinstance(got, Mod) or (n := got.total()) <= 0:
        raise GiveUp("the builder's model is not a module the interpreter can count")
    return [(got.name, n, list(it.evidence))]


__all__ = ["tuple_models"]
