"""Python Fire entry points: the keyword defaults of the function Fire exposes are the run's options.

`fire.Fire(train)` turns `def train(batch_size=4, num_batches=int(1e5), ...)` into a command line whose
`--batch_size 8` replaces a default; `fire.Fire()` with no argument exposes the module's functions and the
first word of the command line names the one to run (`python train.py train --env=x`); `fire.Fire({'fit':
fit})` maps command names to functions. The defaults of that function are code defaults; the command line's
flags are read as usual.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from schedmate.codeprof.pyast import const_eval, default_pairs


def _fire_target(tree: ast.Module, first_word: str | None) -> str | None:
    """The name of the function the script's `Fire(...)` call runs."""
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name != "Fire":
            continue
        if not node.args:  # the module's functions: the command's first word picks one
            return first_word if first_word in functions else None
        arg = node.args[0]
        if isinstance(arg, ast.Name) and arg.id in functions:
            return arg.id
        if isinstance(arg, ast.Dict) and first_word:
            for k, v in zip(arg.keys, arg.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == first_word and isinstance(v, ast.Name):
                    return v.id
    return None


def fire_defaults(text: str, first_word: str | None) -> Iterator[tuple[str, Any, int]]:
    """(option, default, line) of the function a Fire entry script runs."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    target = _fire_target(tree, first_word)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == target), None)
    if fn is None:
        return
    for arg, default in default_pairs(fn.args):
        ok, v = const_eval(default)
        if ok and isinstance(v, (int, float, str, bool)):
            yield arg.arg, v, default.lineno
