"""Epochs made of a fixed number of updates run by JAX's own loop: `for epoch in range(n_epochs): carry =
jax.lax.fori_loop(0, K, update_fn, carry)`. As with the Python inner loop (`loop_length.fixed_block_epochs`),
such an "epoch" is a logging period of K sampled-minibatch updates, not a pass over the data: the run is
n_epochs x K optimizer steps and has no epochs. The update is recognised by the loop body's name
(`update_step`, `partial(train_fn, ...)`); a K computed from the data (`len(data) // batch`) is a pass and is
left alone."""

from __future__ import annotations

import ast
from typing import Any

from schedmate.codeprof.static.loop_length import (
    _PASS_COUNT,
    _UPDATE,
    _local_values,
    epoch_range_loops,
    epochs_times_block,
)

_FORI = {"fori_loop", "lax.fori_loop", "jax.lax.fori_loop"}


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == name), None)
    return kw if kw is not None else (call.args[index] if index < len(call.args) else None)


def _body_name(body: ast.expr | None) -> str | None:
    """`update_fn`, `self.update`, `partial(update_fn, ...)` / `functools.partial(...)` -> the function's name."""
    if isinstance(body, ast.Call) and ast.unparse(body.func).rsplit(".", 1)[-1] == "partial" and body.args:
        body = body.args[0]
    if isinstance(body, ast.Name):
        return body.id
    if isinstance(body, ast.Attribute):
        return body.attr
    return None


def fori_block_epochs(text: str, rel: str, resolver: Any) -> tuple[int, list[str]] | None:
    """n_epochs x K of an epoch loop whose body runs `jax.lax.fori_loop(0, K, <update function>, ...)`, with both
    counts from the sources; None otherwise."""
    if "fori_loop" not in text:
        return None
    for loop, fn, e in epoch_range_loops(text):
        for n in ast.walk(loop):
            if not (isinstance(n, ast.Call) and ast.unparse(n.func) in _FORI):
                continue
            lower, upper = _arg(n, 0, "lower"), _arg(n, 1, "upper")
            name = _body_name(_arg(n, 2, "body_fun"))
            if lower is None or upper is None or name is None or not _UPDATE.match(name) \
                    or "eval" in name.lower() or ast.unparse(lower) != "0":
                continue
            k = ast.unparse(upper)
            if _PASS_COUNT.search(k):
                continue
            return epochs_times_block(e, k, _local_values(fn), resolver, [f"{rel}:{loop.lineno}", f"{rel}:{n.lineno}"])
    return None
