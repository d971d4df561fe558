"""Flax parameters created by an initialiser alone: `self.param("log_alpha", lambda key: jnp.array([0.0]))`, or
`self.param("temp", lambda rng: jnp.full((), 1.0))`; the initialiser is a lambda whose result has a shape that
can be read from its body (a list literal given to `jnp.array`, or the shape given to `jnp.zeros` / `ones` /
`full` / `empty`). Anything else leaves the size unknown, so the count gives up.

    LambdaRef               a lambda value: the interpreter's opaque value, carrying its node and scope
    init_size(it, lam)      the number of entries the initialiser returns, or None
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp
from schedmate.codeprof.static.modelsize.values import Ext, Unknown

_SHAPED = {"zeros", "ones", "full", "empty"}
_FROM_VALUE = {"array", "asarray"}


@dataclass
class LambdaRef(Unknown):
    """A lambda: opaque as a value (it is an `Unknown`), but its body can be read where a caller needs it."""

    node: ast.Lambda | None = None
    env: dict[str, Any] = field(default_factory=dict, repr=False)
    src: Any = field(default=None, repr=False)


def lambda_ref(node: ast.Lambda, env: dict[str, Any], src: Any) -> LambdaRef:
    return LambdaRef("a lambda", node=node, env=dict(env), src=src)


def _positive_dims(it: Any, shape: Any) -> tuple[int, ...] | None:
    try:
        v = it.concrete(shape)
        dims = tuple(it.concrete(d) for d in v) if isinstance(v, (list, tuple)) else (v,)
    except GiveUp:
        return None
    if all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        return dims
    return None


def init_size(it: Any, lam: Any) -> int | None:
    """The size of what a `self.param` initialiser lambda returns, when its body says it plainly."""
    if not isinstance(lam, LambdaRef) or lam.node is None or not isinstance(lam.node.body, ast.Call):
        return None
    call = lam.node.body
    env = dict(lam.env)
    for a in lam.node.args.args:
        env[a.arg] = Unknown("a random key")
    try:
        fn = it.eval(call.func, env, lam.src)
    except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
        return None
    if not isinstance(fn, Ext) or not fn.path.startswith("jax.numpy."):
        return None
    name = fn.path.rsplit(".", 1)[-1]
    if name in _FROM_VALUE and call.args:
        arg = call.args[0]
        if isinstance(arg, (ast.List, ast.Tuple)) and not any(isinstance(e, (ast.List, ast.Tuple, ast.Starred))
                                                              for e in arg.elts):
            return len(arg.elts) or None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, (int, float)) and not isinstance(arg.value, bool):
            return 1  # a scalar
        return None
    if name in _SHAPED:
        shape = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "shape"), None)
        if shape is None:
            return None
        if isinstance(shape, ast.Tuple) and not shape.elts:
            return 1  # a scalar: jnp.full((), v)
        try:
            dims = _positive_dims(it, it.eval(shape, env, lam.src))
        except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
            return None
        return math.prod(dims) if dims else None
    return None


__all__ = ["LambdaRef", "init_size", "lambda_ref"]
