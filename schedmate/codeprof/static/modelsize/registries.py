"""A name -> builder table the job fills with decorators (`MODELS = Registry("models")` in one module,
`@MODELS.register_module()` / `@MODELS.register("dino")` / `@MODELS.registe_with_name(module_name="dino")` above
classes and functions in others), read when the job looks a name up: `MODELS.get(args.modelname)(args)`.

The registry is an instance of the job's own class named `...Registry`; the lookup is one of its methods taking
the name (`get`, `get_module`, `__getitem__`). The table is built from the job's Python files that import that
registry object (or define it), without running them: the key is the decorator's string argument (or its
`name=`/`module_name=` keyword), else the decorated definition's name. The key is the resolved setting; a key
registered twice, or not registered, gives up (no guess).

    registry_lookup(it, fn, args, kwargs) -> the registered class or function | None (not a registry lookup)
The interpreter needs `it.list_py` (a callable listing the job's .py files) to read the table.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any

from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import ClassRef, FuncRef, Source

if TYPE_CHECKING:
    from schedmate.codeprof.static.modelsize.interp import Interp

_REGISTRY_CLASS = re.compile(r"Registry$", re.IGNORECASE)
_LOOKUPS = {"get", "get_module", "__getitem__"}
_KEY_WORDS = ("name", "module_name")
_MAX_FILES = 400


def _owner(it: Interp, obj: Mod) -> tuple[Source, str] | None:
    """The module and global name the registry object is made in (`MODELS = Registry(...)`), not a module that
    imports it."""
    for src in it.sources.values():
        if src is None:
            continue
        for name, val in src.cache.items():
            if val is obj and name in src.assigns:
                return src, name
    return None


def _decorator_key(dec: ast.expr, reg: str, default: str) -> str | None:
    """The key a decorator `@<reg>.<method>(...)` registers under, or None when it is not one of `reg`'s."""
    call = dec if isinstance(dec, ast.Call) else None
    head = call.func if call is not None else dec
    if not (isinstance(head, ast.Attribute) and isinstance(head.value, ast.Name) and head.value.id == reg
            and "regist" in head.attr):
        return None
    if call is None:
        return default
    for a in call.args[:1]:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            return a.value
    for k in call.keywords:
        if k.arg in _KEY_WORDS and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
            return k.value.value
    if call.args or any(k.arg in _KEY_WORDS for k in call.keywords):
        return ""  # a key the table cannot read: the whole table is unsure
    return default


def _table(it: Interp, reg_src: Source, reg: str) -> dict[str, list[Any]]:
    files = getattr(it, "py_files", None)
    if files is None:
        lister = getattr(it, "list_py", None)
        if lister is None:
            raise GiveUp("the job's files cannot be listed to read the registry")
        files = [f for f in lister() if f.endswith(".py")][:_MAX_FILES]
        it.py_files = files  # type: ignore[attr-defined]
    table: dict[str, list[Any]] = {}
    for rel in files:
        text = it.read_text(rel) if rel != reg_src.rel else ""
        if rel != reg_src.rel and (text is None or f"{reg}." not in text or "regist" not in text):
            continue
        src = it.source(rel)
        if src is None:
            continue
        if src is not reg_src:
            imp = src.imports.get(reg)
            if imp is None or imp[1] != reg or it._module_file(imp[0], src) is not reg_src:
                continue  # a same-named registry of another module
        for node in src.tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                for dec in node.decorator_list:
                    key = _decorator_key(dec, reg, node.name)
                    if key is not None:
                        ref = ClassRef(node, src) if isinstance(node, ast.ClassDef) else FuncRef(node, src)
                        table.setdefault(key, []).append(ref)
    return table


def registry_lookup(it: Interp, fn: FuncRef, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The entry `fn` (a registry's lookup method bound to the registry object) returns for the call's key."""
    obj = fn.bound
    cls = obj.attrs.get("__class__") if isinstance(obj, Mod) else None
    if not (isinstance(cls, ClassRef) and _REGISTRY_CLASS.search(cls.node.name) and fn.node.name in _LOOKUPS
            and len(args) in (1, 2) and not kwargs):
        return None
    owner = _owner(it, obj)  # type: ignore[arg-type]
    if owner is None:
        raise GiveUp("a registry not bound to a module-level name")
    key = it.concrete(args[0])
    table = _table(it, *owner)
    if "" in table:
        raise GiveUp("a registry entry whose key cannot be read")
    found = table.get(key, []) if isinstance(key, str) else []
    if len(found) != 1:
        raise GiveUp(f"{key!r} is registered {len(found)} times in {owner[1]}")
    it.evidence.append(f"{found[0].src.rel}:{found[0].node.lineno}")
    return found[0]


__all__ = ["registry_lookup"]
