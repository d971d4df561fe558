"""A call's values bound to a `def`'s parameters as Python binds them (positional, keyword, default), shared
by the interpreter's calls and the builders and learners it follows."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp


def bind_parameters(a: ast.arguments, given: list[Any], kwargs: dict[str, Any],
                    default: Callable[[ast.expr], Any], missing: Callable[[str], Any]) -> dict[str, Any]:
    """Parameter -> value: the positional values in order, then keywords, then each default through `default`;
    a parameter with none of them gets `missing(name)` (which may raise). Keyword-only parameters without a
    default and not given are None. `*args`/`**kwargs` are the caller's to bind."""
    params = [p.arg for p in [*a.posonlyargs, *a.args]]
    defaults: list[ast.expr | None] = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
    env: dict[str, Any] = {}
    for i, p in enumerate(params):
        if i < len(given):
            env[p] = given[i]
        elif p in kwargs:
            env[p] = kwargs[p]
        elif (d := defaults[i]) is not None:
            env[p] = default(d)
        else:
            env[p] = missing(p)
    for p, dk in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        env[p.arg] = kwargs[p.arg] if p.arg in kwargs else (default(dk) if dk is not None else None)
    return env


def required(function: str) -> Callable[[str], Any]:
    """`missing` for `bind_parameters` that gives up: the count cannot go on without the value."""
    def missing(p: str) -> Any:
        raise GiveUp(f"{function}: argument {p} not given")
    return missing
