"""The model built inside a training function of another of the job's files that the entry script calls for its
effect (`train(cfg=cfg)` with `def train(cfg): ...; model = Net(cfg.model.width); ...` in `pkg/training.py`, the
`main()` of a training library the entry script only launches).

The function's arguments are bound to the call's values (a setting the analyzer's resolver knows, such as `cfg` or
`args`, stays a reference to it), and only the statements on the way to the one assignment of a model-like name
run (tuple_builders.py's rules: an `if` on the way must be settled as taken; a statement that cannot be followed
poisons the names it sets; another assignment of the model before it must be settled off the way). An assignment
after it may only move or wrap the same model (`model = model.cuda()`, `model = DDP(model)`).

    called_models(it, src, call, builds, aux, unwrap) -> [(class name, params, evidence)] | None  (None: not this)
Raises GiveUp when the function builds a local model that cannot be counted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.interp import FuncRef, Interp, Source
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.tuple_builders import (
    _ERRORS,
    _bind,
    _call_values,
    _follow,
    _path,
    _stored,
)

_MODEL_NAME = re.compile(r"^(model|net|network)$", re.IGNORECASE)


def called_models(it: Interp, src: Source, call: ast.Call, builds: Callable[[Interp, Source, ast.Call], bool],
                  aux: re.Pattern[str], unwrap: Callable[[ast.expr], ast.expr]) -> list[tuple[str, int, list[str]]] | None:
    try:
        fn, args, kwargs = _call_values(it, call, {}, src)
    except _ERRORS:
        return None
    if not isinstance(fn, FuncRef) or fn.src.rel == src.rel or fn.bound is not None:
        return None
    found = [st for st in ast.walk(fn.node) if isinstance(st, ast.Assign) and len(st.targets) == 1
             and isinstance(t := st.targets[0], ast.Name) and _MODEL_NAME.match(t.id) and not aux.search(t.id)
             and isinstance(v := unwrap(st.value), ast.Call) and builds(it, fn.src, v)]
    names = {st.targets[0].id for st in found}  # type: ignore[attr-defined]
    if len(found) != 1 or len(names) != 1:
        return None  # no model, or several: which one trains is not settled here
    model_st = found[0]
    name = next(iter(names))
    way = _path(fn.node.body, model_st)
    if way is None:
        return None
    setters = [st for st in ast.walk(fn.node) if isinstance(st, ast.stmt) and st is not model_st
               and not isinstance(st, (ast.If, ast.With, ast.Try, ast.For, ast.While, ast.FunctionDef))
               and name in _stored(st)]
    after = [st for st in setters if st.lineno > model_st.lineno]
    for st in after:  # `model = model.to(device)`, `model = DDP(model)`: the same model
        moved = unwrap(st.value) if isinstance(st, ast.Assign) else None
        if not (isinstance(moved, ast.Name) and moved.id == name):
            return None
    try:
        env = _bind(it, fn, args, kwargs)
    except _ERRORS:
        return None
    it.evidence, it.steps = [f"{src.rel}:{call.lineno}"], 0

    def at_model() -> None:
        env[name] = it.eval(unwrap(model_st.value), env, fn.src)

    # `_follow` runs the way up to the goal statement; the model's assignment is the goal, so run it after
    last_block, _, _ = way[-1]
    way[-1] = (last_block, model_st, None)
    if not _follow(it, env, fn.src, way, model_st, at_model, [s for s in setters if s not in after]):
        return None
    at_model()
    it.evidence.append(f"{fn.src.rel}:{model_st.lineno}")
    got: Any = env.get(name)
    if not isinstance(got, Mod) or (n := got.total()) <= 0:
        raise GiveUp("the training function's model is not a module the interpreter can count")
    return [(got.name, n, list(it.evidence))]


__all__ = ["called_models"]
