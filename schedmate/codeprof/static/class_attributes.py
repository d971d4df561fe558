"""Settings written as the class attributes of a plain config class, read through an instance of it.

Research scripts often keep their options in a class body rather than an argument parser:

    class Config:
        lr = 1e-3
        epoch = 14
    opt = Config()          # and elsewhere: `from utils.config import opt`, `for epoch in range(opt.epoch)`

The class attributes are the run's code defaults when the module makes an instance of the class (with no
arguments) or the class is named like a config (`Config`, `Args`, `HParams`, ...: `reading.CONFIG_CLASS`).
Classes named for evaluation, testing or inference are skipped: their batch is not the training one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from schedmate.codeprof.pyast import const_eval

_NOT_TRAINING = re.compile(r"eval|test|valid|infer|predict|sampl|demo", re.IGNORECASE)


def _instantiated(body: list[ast.stmt]) -> set[str]:
    """Names of classes a module-level statement instantiates with no arguments (`opt = Config()`)."""
    out: set[str] = set()
    for st in body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name) \
                and not st.value.args and not st.value.keywords:
            out.add(st.value.func.id)
    return out


def class_attribute_defaults(text: str, config_class: re.Pattern[str]) -> Iterator[tuple[str, Any, int]]:
    """(name, value, line) of each constant class attribute of the module's config classes."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return
    made = _instantiated(body)
    for cls in body:
        if not isinstance(cls, ast.ClassDef) or _NOT_TRAINING.search(cls.name):
            continue
        if cls.name not in made and not config_class.search(cls.name):
            continue
        if any(isinstance(d, ast.Name) and d.id == "dataclass" or isinstance(d, ast.Call) for d in cls.decorator_list):
            continue  # dataclasses are read as such (their fields)
        for st in cls.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                name, value = st.targets[0].id, st.value
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
                name, value = st.target.id, st.value
            else:
                continue
            if name.startswith("_"):
                continue
            ok, v = const_eval(value)
            if ok and isinstance(v, (int, float, str, bool)):
                yield name, v, st.lineno
