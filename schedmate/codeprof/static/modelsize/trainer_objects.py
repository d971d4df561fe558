"""Models built by a trainer object the entry script creates from a class in another of the job's files
(`solver = Solver(config, loaders)` with `self.unet = U_Net(...)` in a `build_model` method), often picked by a
string setting (`if self.model_type == 'U_Net': ... elif self.model_type == 'AttU_Net': ...`).

The object's `__init__` aliases (`self.model_type = config.model_type`) are carried back to the entry script's
expressions (`config.model_type`, which the analyzer's resolver reads from the command and the argparse
defaults), so the branch the run takes is known; an assignment under a condition that cannot be settled, when
the same attribute is given another class elsewhere, leaves the count to other readers (no guess).

    trainer_models(it, src, call, where, aux) -> [(class name, params, evidence), ...] | None
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.interp import ClassRef, Interp, Ref, Source
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod

_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)


def _aliases(init: ast.FunctionDef, call: ast.Call) -> dict[str, str]:
    """`self.x = param.field` (or `= param`) in `__init__`, with `param` replaced by the entry call's argument."""
    params = [a.arg for a in init.args.args[1:]]
    given = {p: ast.unparse(a) for p, a in zip(params, call.args, strict=False)}
    given.update({k.arg: ast.unparse(k.value) for k in call.keywords if k.arg})
    out: dict[str, str] = {}
    for st in ast.walk(init):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(t := st.targets[0], ast.Attribute) \
                and isinstance(t.value, ast.Name) and t.value.id == "self":
            text = ast.unparse(st.value)
            head = re.match(r"^([A-Za-z_]\w*)((?:\.\w+)*)$", text)
            if head and head.group(1) in given:
                out[t.attr] = given[head.group(1)] + head.group(2)
    return out


def _guarded(body: list[ast.stmt], path: list[tuple[ast.expr, bool]],
             out: list[tuple[ast.Assign, list[tuple[ast.expr, bool]]]]) -> None:
    """Every `self.x = ...` with the `if` conditions (and which side) above it."""
    for st in body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(t := st.targets[0], ast.Attribute) \
                and isinstance(t.value, ast.Name) and t.value.id == "self" and isinstance(st.value, ast.Call):
            out.append((st, path))
        elif isinstance(st, ast.If):
            _guarded(st.body, [*path, (st.test, True)], out)
            _guarded(st.orelse, [*path, (st.test, False)], out)
        elif isinstance(st, (ast.For, ast.While, ast.With, ast.Try)):
            _guarded(list(getattr(st, "body", [])), path, out)


def _settle(test: ast.expr, aliases: dict[str, str], resolve: Callable[[str], tuple[bool, Any, list[str]]]) -> Any:
    text = ast.unparse(test)
    if any(a not in aliases for a in re.findall(r"\bself\.(\w+)", text)):
        return None  # an attribute the constructor does not take from the entry script
    for a, expr in aliases.items():
        text = re.sub(rf"\bself\.{re.escape(a)}\b", expr, text)
    try:
        ok, val, _ = resolve(text)
    except Exception:  # noqa: BLE001 - an expression the resolver cannot read settles nothing
        return None
    return val if ok and isinstance(val, bool) else None


def trainer_models(it: Interp, src: Source, call: ast.Call, builds: Callable[[Interp, Source, ast.Call], bool],
                   aux: re.Pattern[str]) -> list[tuple[str, int, list[str]]] | None:
    """The models a trainer object (a plain class from another local file) builds, or None when the call is not
    one, builds none, or its choice cannot be settled."""
    try:
        cls = it.eval(call.func, {}, src)
    except _ERRORS:
        return None
    if not isinstance(cls, ClassRef) or cls.src.rel == src.rel or it.is_module_class(cls):
        return None
    init = next((s for s in cls.node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    aliases = _aliases(init, call) if init is not None else {}
    found: list[tuple[ast.Assign, list[tuple[ast.expr, bool]]]] = []
    for fn in cls.node.body:
        if isinstance(fn, ast.FunctionDef):
            _guarded(fn.body, [], found)
    by_attr: dict[str, list[tuple[ast.Assign, bool]]] = {}
    for st, path in found:
        name = st.targets[0].attr  # type: ignore[attr-defined]
        if aux.search(name) or not builds(it, cls.src, st.value):  # type: ignore[arg-type]
            continue
        settled = [(_settle(test, aliases, it.resolve), side) for test, side in path]
        if any(v is not None and v != side for v, side in settled):
            continue  # on a branch the run does not take
        by_attr.setdefault(name, []).append((st, all(v is not None for v, _ in settled)))
    out: list[tuple[str, int, list[str]]] = []
    self_obj = Mod(cls.node.name, plain=True)
    self_obj.attrs.update({a: Ref(e) for a, e in aliases.items()})
    for options in by_attr.values():
        if len(options) > 1 and not all(sure for _, sure in options):
            return None  # several classes for one attribute and the choice is not settled
        for st, _ in options[-1:]:  # several sure ones: the last assignment wins
            it.evidence, it.steps = [f"{cls.src.rel}:{st.lineno}"], 0
            try:
                got = it.eval(st.value, {"self": self_obj}, cls.src)
            except _ERRORS:
                return None
            if isinstance(got, Mod) and not got.plain and (n := got.total()) > 0:
                out.append((got.name, n, list(it.evidence)))
    return out or None


__all__ = ["trainer_models"]
