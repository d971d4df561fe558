"""Config modules built by a function other than `get_config()`: a shared factory another config starts from.

ml_collections configs often start from a module of defaults through a function of any name
(`from configs.defaults import get_default_configs` ... `config = get_default_configs()`), and that module
builds its `ConfigDict` in that function rather than in a `get_config()`. These helpers find which
functions of a config module build its config and which imported factories a config starts from, so the
factory's fields come in as a `_base_` (read without running anything).
"""

from __future__ import annotations

import ast

from schedmate.codeprof.pyast import dotted

CONFIG_FUNCTIONS = frozenset({"get_config", "get_hyper", "get_cfg"})


def _builds_config_dict(fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Call) and (dotted(n.func) or "").rsplit(".", 1)[-1] == "ConfigDict"
               for n in ast.walk(fn))


def config_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """The functions whose body is the module's config: `get_config()` (and its kin) when there is one,
    else the one top-level function that builds a `ConfigDict` (a module of shared defaults); none when
    several do (which one a config starts from is then not known here)."""
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    named = [f for f in fns if f.name in CONFIG_FUNCTIONS]
    if named:
        return named
    builders = [f for f in fns if _builds_config_dict(f)]
    return builders if len(builders) == 1 else []


def is_config_module(text: str) -> bool:
    """A Python config read as ml_collections: a `get_config()` or a function building a `ConfigDict`."""
    return "def get_config" in text or "ConfigDict(" in text


def imported_functions(tree: ast.Module) -> dict[str, str]:
    """`from configs.defaults import get_default_configs` -> {'get_default_configs': 'configs.defaults'}
    (relative imports keep their leading dots)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = ("." * node.level) + node.module
    return out


def factory_bases(tree: ast.Module, fn: ast.FunctionDef) -> list[str]:
    """Files of the imported factories `fn` starts its config from (`config = get_default_configs()`):
    `/pkg/mod.py` from the repository root, or `./mod.py` for a relative import."""
    funcs = imported_functions(tree)
    out: list[str] = []
    for st in ast.walk(fn):
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name):
            mod = funcs.get(st.value.func.id)
            if mod:
                rel = mod.lstrip(".").replace(".", "/") + ".py"
                out.append(f"./{rel}" if mod.startswith(".") else f"/{rel}")
    return out


def factory_names(tree: ast.Module) -> set[str]:
    """Names of imported functions a config may start from (a call to one makes a config root)."""
    return set(imported_functions(tree))


def module_bases(tree: ast.Module, fn: ast.FunctionDef) -> list[str]:
    """Files of the configs a `get_config()` starts from (`config = base_listops_config.get_config()` with
    `from pkg.configs import base_listops_config`): paths from the repository root (`pkg/configs/x.py`), or
    `./x.py` for a relative import of a sibling."""
    modules: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            pkg = ("." * node.level) + (node.module or "")
            for a in node.names:
                modules[a.asname or a.name] = f"{pkg}.{a.name}" if node.module else f"{pkg}{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                modules[a.asname or a.name.rsplit(".", 1)[-1]] = a.name
    out: list[str] = []
    for st in ast.walk(fn):
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
            func = dotted(st.value.func) or ""
            owner = func[: -len(".get_config")] if func.endswith(".get_config") else None
            mod = modules.get(owner or "")
            if mod:
                rel = mod.lstrip(".").replace(".", "/") + ".py"
                out.append(f"./{rel}" if mod.startswith(".") else f"/{rel}")
    return out


def _is_dict_class(node: ast.AST) -> bool:
    return (dotted(node) or "").rsplit(".", 1)[-1] in {"ConfigDict", "FrozenConfigDict", "dict"}


def dict_builders(tree: ast.Module) -> set[str]:
    """Module helpers that only wrap their keyword arguments in a config dict (`def d(**kwargs): return
    ml_collections.ConfigDict(initial_dictionary=kwargs)`, `ConfigDict(kwargs)`, `dict(**kwargs)`): a call of
    one is a dict of its keywords."""
    out: set[str] = set()
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or fn.args.kwarg is None or fn.args.args or fn.args.posonlyargs:
            continue
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(call := body[0].value, ast.Call):
            continue
        kw = fn.args.kwarg.arg
        passed = [*call.args, *(k.value for k in call.keywords)]
        if _is_dict_class(call.func) and len(passed) == 1 and isinstance(passed[0], ast.Name) and passed[0].id == kw:
            out.add(fn.name)
    return out


class _Unwrap(ast.NodeTransformer):
    def __init__(self, builders: set[str]) -> None:
        self.builders = builders

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.builders and not node.args:
            return ast.copy_location(ast.Call(func=ast.Name("dict", ast.Load()), args=[], keywords=node.keywords), node)
        given = [*node.args, *(k.value for k in node.keywords if k.arg in {None, "initial_dictionary"})]
        if _is_dict_class(node.func) and len(given) == 1 and len(node.args) + len(node.keywords) == 1 and (
                isinstance(given[0], ast.Dict) or isinstance(given[0], ast.Call) and _is_dict_class(given[0].func)):
            return given[0]  # `ConfigDict({'a': 1})`, `ConfigDict(dict(a=1))`: the dict it is built from
        return node


def unwrap_dict_builders(tree: ast.Module) -> ast.Module:
    """`tree` with every config dict built from a literal dict (directly or through a helper of
    `dict_builders`) written as that dict, so the static reader sees its fields."""
    return ast.fix_missing_locations(_Unwrap(dict_builders(tree)).visit(tree))
