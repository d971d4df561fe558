"""Flax models built inside a learner object the entry script creates: `agent = Learner(seed, obs, act,
**kwargs)` whose `__init__` makes the module definitions it trains (`actor_def = policy.TanhPolicy(hidden_dims,
action_dim)`, `critic_def = DoubleCritic(hidden_dims)`) and hands them to a train-state helper. Its own
arguments are bound from the entry call (the `**kwargs` a config file gives, `dict(FLAGS.config)`, when the
interpreter can value it; otherwise the defaults cannot be trusted and nothing is counted), the statements
before each definition are valued where they can be (`action_dim = actions.shape[-1]` stays unknown and is
left to the environment's action size, flax_modules.py), and an `if` on a known setting
(`if distribution == 'det':`) takes its branch. Each definition is counted once per class (a target network
built from the same definition is the same class); a definition under an unsettled condition, or one that
cannot be counted, gives no count at all.

    learner_flax_models(it, src, st, call, widths, aux) -> [(class name, params, evidence), ...] | None
    ([] when the call is not a learner that builds Flax modules)
"""

from __future__ import annotations

import ast
import re
from typing import Any

from schedmate.codeprof.static.modelsize.binding import bind_parameters
from schedmate.codeprof.static.modelsize.flax_modules import is_flax_call, root_total
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import ClassRef, Unknown

_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)


class _Unsure(Exception):
    """A definition the learner builds that cannot be counted (or whose branch is not settled)."""


def _lenient(it: Any, node: ast.expr, env: dict[str, Any], src: Any) -> Any:
    try:
        return it.eval(node, dict(env), src)
    except _ERRORS:
        return Unknown("a value the learner computes at run time")


def _flax_calls(it: Any, src: Any, node: ast.AST) -> list[ast.Call]:
    return [c for c in ast.walk(node) if isinstance(c, ast.Call) and is_flax_call(it, src, c)]


def _bind(it: Any, init: ast.FunctionDef, src: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    env = bind_parameters(init.args, [None, *args], kwargs, lambda d: _lenient(it, d, {}, src),
                          lambda p: Unknown(f"learner argument {p} not given"))
    params = [p.arg for p in [*init.args.posonlyargs, *init.args.args]]
    if params:
        env.pop(params[0], None)  # self
    return env


def _run(it: Any, body: list[ast.stmt], env: dict[str, Any], cls: ClassRef, widths: tuple[int, ...] | None,
         aux: re.Pattern[str], out: dict[str, tuple[int, list[str]]]) -> None:
    src = cls.src
    for st in body:
        if isinstance(st, ast.If):
            test = _lenient(it, st.test, env, src)
            try:
                side = it.concrete(test)
            except GiveUp:
                side = None
            if not isinstance(side, bool):
                if _flax_calls(it, src, st):
                    raise _Unsure("a Flax definition under a condition known only at run time")
                continue
            _run(it, st.body if side else st.orelse, env, cls, widths, aux, out)
            continue
        single = isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
        if single and isinstance(st.value, ast.Call) and is_flax_call(it, src, st.value):  # type: ignore[union-attr]
            name = st.targets[0].id  # type: ignore[union-attr]
            it.evidence, it.steps = [f"{src.rel}:{st.lineno}"], 0
            try:
                got = it.eval(st.value, dict(env), src)  # type: ignore[union-attr]
                if not isinstance(got, Mod) or "__flax__" not in got.attrs:
                    raise _Unsure("a Flax definition that is not a module object")
                n = root_total(it, got, widths)
            except _ERRORS as e:
                raise _Unsure(str(e)) from None
            env[name] = got
            if not aux.search(name) and n > 0:
                out.setdefault(got.name, (n, list(it.evidence)))
            continue
        if _flax_calls(it, src, st):
            raise _Unsure("a Flax definition built where this reader does not follow it")
        if single:
            env[st.targets[0].id] = _lenient(it, st.value, env, src)  # type: ignore[union-attr]


def _config_entries(it: Any, src: Any, node: ast.expr, init: ast.FunctionDef) -> dict[str, Any] | None:
    """`**kwargs` after `kwargs = dict(FLAGS.config)` (or `**FLAGS.config`): the learner's own arguments read one
    by one from the config the resolver knows (`FLAGS.config.hidden_dims`), then the keys the script sets itself
    (`kwargs['num_steps'] = FLAGS.max_steps`); None when the mapping is not a config expression or the resolver
    reads none of those arguments from it (the config is then not known, and any default may be overridden)."""
    expr = node
    if isinstance(node, ast.Name):
        sets = [st for st in ast.walk(src.tree) if isinstance(st, ast.Assign) and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name) and st.targets[0].id == node.id]
        if len(sets) != 1:
            return None
        expr = sets[0].value
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict" \
            and len(expr.args) == 1 and not expr.keywords:
        expr = expr.args[0]
    if not re.fullmatch(r"[A-Za-z_][\w.]*", text := ast.unparse(expr)):
        return None
    names = [p.arg for p in [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]][1:]
    out: dict[str, Any] = {}
    for p in names:
        ok, v, ev = it.resolve(f"{text}.{p}")
        if ok:
            out[p] = v
            it.evidence.extend(ev)
    if not out:
        return None  # no key read: the config itself is not known here, so any default may be overridden
    if isinstance(node, ast.Name):
        for st in ast.walk(src.tree):  # `kwargs['num_steps'] = FLAGS.max_steps`: a key the script sets itself
            for t in st.targets if isinstance(st, ast.Assign) else []:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == node.id:
                    if not isinstance(t.slice, ast.Constant):
                        return None
                    out[str(t.slice.value)] = _lenient(it, st.value, {}, src)
    return out


def learner_flax_models(it: Any, src: Any, env: dict[str, Any], call: ast.Call, widths: tuple[int, ...] | None,
                        aux: re.Pattern[str]) -> list[tuple[str, int, list[str]]] | None:
    """The Flax modules a learner object's `__init__` defines (see the module docstring); `env` holds the entry
    function's locals before the call."""
    try:
        cls = it.eval(call.func, {}, src)
    except _ERRORS:
        return []
    if not isinstance(cls, ClassRef) or it.is_module_class(cls):
        return []
    init = next((s for s in cls.node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None or not _flax_calls(it, cls.src, init):
        return []
    args = [_lenient(it, a, env, src) for a in call.args if not isinstance(a, ast.Starred)]
    kwargs: dict[str, Any] = {}
    for k in call.keywords:
        if k.arg is not None:
            kwargs[k.arg] = _lenient(it, k.value, env, src)
            continue
        try:  # `**kwargs`: the whole mapping must be known, or any default may be overridden
            more = it.concrete(it.eval(k.value, dict(env), src))
        except _ERRORS:
            more = _config_entries(it, src, k.value, init)
        if not isinstance(more, dict):
            return None
        kwargs.update({str(key): v for key, v in more.items()})
    out: dict[str, tuple[int, list[str]]] = {}
    try:
        _run(it, init.body, _bind(it, init, cls.src, args, kwargs), cls, widths, aux, out)
    except _Unsure:
        return None
    return [(name, n, ev) for name, (n, ev) in out.items()]


__all__ = ["learner_flax_models"]
