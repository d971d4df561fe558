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
