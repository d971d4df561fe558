"""`copy.deepcopy(layer)` in the module-size interpreter: an independent copy of a module the count has built
(`nn.ModuleList([copy.deepcopy(block) for _ in range(n)])`, the transformer-stack idiom), so each copy's
parameters are counted; modules shared inside the original stay shared inside the copy."""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.static.modelsize.layers import Mod


def clone(mod: Mod, memo: dict[int, Mod] | None = None) -> Mod:
    memo = {} if memo is None else memo
    if id(mod) in memo:
        return memo[id(mod)]
    out = Mod(mod.name, mod.own, plain=mod.plain)
    memo[id(mod)] = out
    out.weight = mod.weight
    out.children = [clone(c, memo) for c in mod.children]
    out.attrs = {k: _copy_value(v, memo) for k, v in mod.attrs.items()}
    return out


def _copy_value(v: Any, memo: dict[int, Mod]) -> Any:
    if isinstance(v, Mod):
        return clone(v, memo)
    if isinstance(v, list):
        return [_copy_value(x, memo) for x in v]
    if isinstance(v, tuple):
        return tuple(_copy_value(x, memo) for x in v)
    if isinstance(v, dict):
        return {k: _copy_value(x, memo) for k, x in v.items()}
    return v  # classes, numbers, strings: shared as Python's deepcopy shares immutables
