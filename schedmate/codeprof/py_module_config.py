"""Python config files that are modules importing other config modules, read the way their loaders evaluate them.

Three loaders evaluate a `.py` config as a Python module rather than as a list of `name = dict(...)` lines:

- mmengine's pure-Python style: `with read_base(): from .._base_.models.x import *` brings every name of the
  base module into this one; later lines edit them (`train_dataloader.update(batch_size=128)`,
  `default_hooks.checkpoint = dict(...)`) and `type=` names a class imported at the top.
- detectron2 LazyConfig (and libai's copy of it): `from ..common.train import train` imports one name of a
  sibling config module; the file then sets fields on it (`train.max_iter = 90000`,
  `dataloader.train.total_batch_size = 64`); `L(SomeClass)(a=1)` is a dict of its keywords.
- configs that star-import shared modules by their package path (`from configs.data import *`).

`evaluate` walks the module's top-level statements in order with a namespace: an import of a config module
that the reader finds binds its names (the module's own evaluation, through `load`), an import of anything
else binds the imported name to its own spelling (so `type=EpochBasedTrainLoop` reads as that name),
assignments to names and to dotted fields of imported dicts, and `.update(...)` calls, change the namespace.
The result is every name the module ends with, as the loader would expose it. Nothing is executed; values
that are not literals or constant arithmetic over known names are left out.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

_EMPTY_TREE = re.compile(r"(^|\.)(ConfigDict|EasyDict|edict|CN|CfgNode|AttrDict|dict|OmegaConf\.create)$")
"""constructors of an empty config tree that later lines fill field by field"""
LAZY_CALLS = frozenset({"L", "LazyCall", "lazycall"})
"""detectron2 / libai wrappers whose call `L(Target)(a=1)` describes `Target(a=1)`: a dict of its keywords"""


def _config_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    """`from X import ...` at top level or inside `with read_base():` blocks (not in functions)."""
    out: list[ast.ImportFrom] = []
    for st in tree.body:
        if isinstance(st, ast.ImportFrom):
            out.append(st)
        elif isinstance(st, ast.With):
            out.extend(s for s in st.body if isinstance(s, ast.ImportFrom))
    return out


def candidates(rel: str, node: ast.ImportFrom) -> list[str]:
    """Files (relative to the reader's root) the import may name: a relative import from the importing file's
    package; an absolute one from any ancestor directory of the importing file (the loader's sys.path)."""
    mod = (node.module or "").replace(".", "/")
    if not mod:
        return []
    here = PurePosixPath(rel).parent
    if node.level:
        base = here
        for _ in range(node.level - 1):
            base = base.parent
        roots = [base]
    elif "config" in mod.lower():  # `from configs.data import *`; an absolute import of code is not a config
        roots = [here, *here.parents]
    else:
        return []
    out: list[str] = []
    for root in roots:
        stem = (root / mod).as_posix() if str(root) != "." else mod
        out.extend([f"{stem}.py", f"{stem}/__init__.py"])
    return out


def is_module_config(rel: str, text: str, exists: Callable[[str], bool]) -> bool:
    """A config that imports another config module the reader can find (or uses mmengine's `read_base`)."""
    if not rel.lower().endswith(".py"):
        return False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    from schedmate.codeprof import config_factories

    if config_factories.is_config_module(text):
        return False  # a `get_config()` function module: ml_collections_config reads it, bases included
    if "read_base" in text:
        return True
    return any(node.level or any(exists(c) for c in candidates(rel, node)) for node in _config_imports(tree))


class _Lazy(ast.NodeTransformer):
    """`L(Target)(a=1)` -> `dict(a=1)`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        inner = node.func
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in LAZY_CALLS \
                and not node.args:
            return ast.copy_location(ast.Call(func=ast.Name(id="dict", ctx=ast.Load()), args=[],
                                              keywords=node.keywords), node)
        return node


class _Symbols(ast.NodeTransformer):
    """`AutoModel.from_pretrained` on a class imported from code -> the string 'AutoModel.from_pretrained'
    (what a `type=` field names), so the dict around it keeps its other keys readable."""

    def __init__(self, symbols: set[str]) -> None:
        self.symbols = symbols

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        path = _path(node)
        if path and path[0] in self.symbols:
            return ast.copy_location(ast.Constant(".".join(path)), node)
        return self.generic_visit(node)


def _names_view(ns: dict[str, Any]) -> dict[str, Any]:
    """The namespace plus dotted names of nested dict fields (`model.cfg.hidden_layers`) for arithmetic."""
    from schedmate.codeprof.configs import flatten

    out = dict(ns)
    for k, v in ns.items():
        if isinstance(v, dict):
            for dk, dv in flatten(v, k):
                out.setdefault(dk, dv)
    return out


def _set(ns: dict[str, Any], path: list[str], value: Any) -> None:
    cur = ns
    for part in path[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = cur[part] = {}
        cur = nxt
    cur[path[-1]] = value


def _get(ns: dict[str, Any], path: list[str]) -> Any:
    cur: Any = ns
    for part in path:
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _path(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Subscript) or not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def evaluate(rel: str, text: str, load: Callable[[str], dict[str, Any] | None]) -> dict[str, Any]:
    """Every name the config module ends with (see the module docstring). `load(path)` is the evaluated
    content of another config file, or None when the reader cannot read it."""
    from schedmate.codeprof.config_tree import _drop_unknown, _Unknown, _value
    from schedmate.codeprof.pyast import dotted

    tree = _Lazy().visit(ast.parse(text))
    ns: dict[str, Any] = {}
    symbols: set[str] = set()  # names bound to a class or function imported from code, not config values

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Call) and not node.args and _EMPTY_TREE.search(dotted(node.func) or ""):
            return {kw.arg: value(kw.value) for kw in node.keywords if kw.arg}  # `OmegaConf.create()`, `CN()`
        node = _Symbols(symbols).visit(copy.deepcopy(node))
        return _drop_unknown(_value(node, _names_view(ns)))

    def do_import(node: ast.ImportFrom) -> None:
        module = next((m for c in candidates(rel, node) if (m := load(c)) is not None), None)
        for alias in node.names:
            if alias.name == "*":
                if module is not None:
                    ns.update(copy.deepcopy(module))
                continue
            name = alias.asname or alias.name
            if module is not None and alias.name in module:
                ns[name] = copy.deepcopy(module[alias.name])
                symbols.discard(name)
            elif module is None:
                ns[name] = alias.name
                symbols.add(name)

    for st in tree.body:
        body = st.body if isinstance(st, ast.With) else [st]
        for s in body:
            if isinstance(s, ast.ImportFrom):
                do_import(s)
            elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                v = value(s.value)
                for t in targets:
                    path = _path(t)
                    if path is None or isinstance(v, _Unknown):
                        continue
                    if len(path) > 1 and not isinstance(ns.get(path[0]), dict):
                        continue  # a field of something that is not a config dict here
                    _set(ns, path, copy.deepcopy(v))
                    symbols.discard(path[0])
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                _update(s.value, ns, value)
    return {k: v for k, v in ns.items() if k not in symbols and not k.startswith("__")}


def _update(call: ast.Call, ns: dict[str, Any], value: Callable[[ast.AST], Any]) -> None:
    """`x.update(a=1)` / `x.y.update(dict(a=1))` / `x.update({'a': 1})` on a config dict of the namespace."""
    from schedmate.codeprof.config_tree import _Unknown, merge

    fn = call.func
    if not (isinstance(fn, ast.Attribute) and fn.attr == "update"):
        return
    path = _path(fn.value)
    target = _get(ns, path) if path else None
    if not isinstance(target, dict) or path is None:
        return
    new: dict[str, Any] = {}
    for a in call.args:
        v = value(a)
        if isinstance(v, dict):
            new.update(v)
    for kw in call.keywords:
        if kw.arg is not None and not isinstance(v := value(kw.value), _Unknown):
            new[kw.arg] = v
    _set(ns, path, merge(target, new))
