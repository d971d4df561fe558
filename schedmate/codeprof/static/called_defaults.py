"""Keyword defaults of the training function the entry script calls: `def train(env_id, batch_size=64)` called
as `train(args.env)` runs with batch_size 64, as Python binds a call's missing arguments to the parameters'
defaults; `def train(env_id, n_envs=8, nminibatches=4, n_steps=128)` so called gives rl_batch.py its rollout.

Only the entry's own functions, called from the entry itself, with no `*args`/`**kwargs` in the call that
could supply the parameter, and only for batch settings (set as the job's) and rollout shapes (handed to the RL
batch reader alone); a parameter the call passes, or a setting the job already holds, is left alone. Each call site must agree:
a function called twice with different omissions gives only the parameters every call leaves to default.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from schedmate.codeprof.params import CODE_DEFAULT
from schedmate.codeprof.pyast import const_eval, default_pairs

# batch settings: set as the job's settings
_BATCH_LIKE = re.compile(r"batch", re.IGNORECASE)
# the rollout shape an on-policy learner's minibatch is derived from: handed to rl_batch.py only, never set as
# settings (a rollout length named `n_steps` is no count of optimizer steps)
ROLLOUT_LIKE = re.compile(r"^(?:n_?envs?|num_envs?|num_processes|n_?steps|num_steps|nminibatches|"
                          r"num_mini_?batch(?:es)?|n_minibatch(?:es)?)$", re.IGNORECASE)


def _omitted(fn: ast.FunctionDef, call: ast.Call) -> set[str] | None:
    """Parameters with a default this call leaves unset (None when a starred argument could set any)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    pos = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    given = set(pos[:len(call.args)]) | {k.arg for k in call.keywords if k.arg}
    with_default = pos[len(pos) - len(fn.args.defaults):] if fn.args.defaults else []
    kwonly = [a.arg for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d is not None]
    return {n for n in (*with_default, *kwonly) if n not in given}


def called_function_defaults(text: str, names: re.Pattern[str] = _BATCH_LIKE) -> list[tuple[str, Any, int]]:
    """(parameter, default, line) of the defaults named like `names` (batch settings unless told) that the
    module's own calls to its own top-level functions leave unset."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    left: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in fns:
            fn = fns[node.func.id]
            got = _omitted(fn, node)
            if got is None:
                left[fn.name] = set()
            else:
                left[fn.name] = left[fn.name] & got if fn.name in left else got
    out: list[tuple[str, Any, int]] = []
    for name, params in left.items():
        for arg, default in default_pairs(fns[name].args):
            if arg.arg not in params or not names.search(arg.arg):
                continue
            ok, v = const_eval(default)
            if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                out.append((arg.arg, v, default.lineno))
    return out


def read_called_defaults(sp: Any) -> None:
    """Set the entry's called-function defaults as code defaults of the job (never over a held value)."""
    entry = sp.r.entry
    if not entry:
        return
    P = sp.r.params
    for name, v, line in called_function_defaults(sp.wd.read_text(entry) or ""):
        if P.get(name) is None:
            P.set(name, v, f"{entry}:{line}", CODE_DEFAULT)
