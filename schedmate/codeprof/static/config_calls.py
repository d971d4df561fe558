"""A config function the entry calls with the job's flags: `config = exp_config.get_config(FLAGS.epochs,
FLAGS.batch_size)` and, in the config module, `def get_config(num_epochs, batch_size): return dict(...)`.

The call's arguments are bound to the function's parameters as Python binds them (`modelsize/binding.py`);
each parameter so bound is a value of the job's config under the parameter's name (`num_epochs`), and each field
of the returned dict that is computed from bound parameters and constants only (`max_steps=num_epochs * 100 //
batch_size`) is set under its key. Fields that need anything else (a dataset's size read at run time) stay
unset. Read without running anything; a call under a branch the command line rules out is skipped.
"""

from __future__ import annotations

import ast
from typing import Any

from schedmate.codeprof.config_factories import CONFIG_FUNCTIONS
from schedmate.codeprof.params import CODE_DEFAULT, ParamSpace
from schedmate.codeprof.pyast import const_eval, dotted
from schedmate.codeprof.static.modelsize.binding import bind_parameters

_UNBOUND = object()


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted module for the module imports of a file (`from pkg.configs import exp as cfg`
    gives `cfg -> pkg.configs.exp`; `import pkg.cfg as c` gives `c -> pkg.cfg`)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
    return out


def returned_dict_fields(fn: ast.FunctionDef) -> list[tuple[str, ast.expr]]:
    """(dotted key, value expression) of the `dict(...)`/`{...}` the function returns, directly or through
    the one local it returns (`config = dict(...)` ... `return config`); nested dicts give dotted keys."""
    ret = next((n.value for n in fn.body if isinstance(n, ast.Return) and n.value is not None), None)
    if isinstance(ret, ast.Name):
        ret = next((n.value for n in fn.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name) and n.targets[0].id == ret.id), None)
    out: list[tuple[str, ast.expr]] = []

    def walk(node: ast.expr | None, prefix: str) -> None:
        if isinstance(node, ast.Call) and dotted(node.func) == "dict" and not node.args:
            pairs = [(k.arg, k.value) for k in node.keywords if k.arg]
        elif isinstance(node, ast.Dict):
            pairs = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        else:
            return
        for key, value in pairs:
            if isinstance(value, ast.Dict) or (isinstance(value, ast.Call) and dotted(value.func) == "dict"):
                walk(value, f"{prefix}{key}.")
            else:
                out.append((f"{prefix}{key}", value))

    walk(ret, "")
    return out


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _attr_leaves(node: ast.AST) -> list[str]:
    """The option names an argument reads: `FLAGS.batch_size`, `args.epochs`, a bare name."""
    return [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)] + sorted(_names(node))


def bind_config_call(fn: ast.FunctionDef, values: list[tuple[Any, int]], kw: dict[str, tuple[Any, int]]
                     ) -> dict[str, tuple[Any, int]]:
    """Parameter -> (value, layer) for the parameters the call binds to known values (a default counts at
    the code-default layer); parameters left unknown are absent."""
    def default(d: ast.expr) -> Any:
        ok, v = const_eval(d)
        return (v, CODE_DEFAULT) if ok else _UNBOUND

    env = bind_parameters(fn.args, values, kw, default, lambda p: _UNBOUND)
    return {p: v for p, v in env.items() if v is not _UNBOUND and v is not None and v[0] is not _UNBOUND}


def fields_from_bindings(fn: ast.FunctionDef, bound: dict[str, tuple[Any, int]]) -> list[tuple[str, Any, int]]:
    """(key, value, layer) of the returned dict's fields that depend on a bound parameter and evaluate from
    the bindings and constants alone; the layer is the highest of the parameters used."""
    names = {p: v for p, (v, _) in bound.items()}
    out: list[tuple[str, Any, int]] = []
    for key, expr in returned_dict_fields(fn):
        used = _names(expr) & set(bound)
        if not used:
            continue
        ok, v = const_eval(expr, names)
        if ok and isinstance(v, (int, float, str, bool)):
            out.append((key, v, max(bound[p][1] for p in used)))
    return out


def apply_config_call(P: ParamSpace, fn: ast.FunctionDef, where: str, values: list[tuple[Any, int]],
                      kw: dict[str, tuple[Any, int]]) -> None:
    """Set the bound parameters and the fields computed from them (never over a higher layer)."""
    bound = bind_config_call(fn, values, kw)
    for p, (v, layer) in bound.items():
        if isinstance(v, (int, float, str, bool)):
            P.set(p, v, where, layer)
    for key, v, layer in fields_from_bindings(fn, bound):
        P.set(key, v, where, layer)


def is_config_call(func: str) -> bool:
    return func.rsplit(".", 1)[-1] in CONFIG_FUNCTIONS and "." in func


def argument_layer(P: ParamSpace, src: str) -> int:
    """The layer of the option an argument reads (`FLAGS.epochs` set on the command line), else code default."""
    try:
        node = ast.parse(src.strip(), mode="eval").body
    except SyntaxError:
        return CODE_DEFAULT
    layers = [pv.layer for name in _attr_leaves(node) if (pv := P.get(name)) is not None]
    return max(layers, default=CODE_DEFAULT)


def read_config_calls(sp: Any) -> None:
    """The static pass's step: each active `<module>.get_config(...)` call of the entry whose module the
    entry imports and the analyzer can read (a plain function of that name, not a class method)."""
    entry = sp.r.entry
    text = sp.wd.read_text(entry) if entry else None
    if not text:
        return
    try:
        aliases = import_aliases(ast.parse(text))
    except SyntaxError:
        return
    base = entry.rsplit("/", 1)[0] + "/" if "/" in entry else ""
    for rel, c in sp.calls:
        if rel != entry or not is_config_call(c["func"]) or sp._active(c) is False:
            continue
        owner, name = c["func"].rsplit(".", 1)
        module = aliases.get(owner.split(".", 1)[0])
        if module is None:
            continue
        module = module + owner[len(owner.split(".", 1)[0]):]
        fn = _function_in(sp.wd, module, name, base)
        if fn is None:
            continue
        values: list[tuple[Any, int]] = []
        for src in c["args"]:
            ok, v, _ = sp._resolver.eval(src)
            if not ok or str(src).startswith("*"):
                break  # later positions would be misaligned
            values.append((v, argument_layer(sp.r.params, src)))
        kw: dict[str, tuple[Any, int]] = {}
        for k, src in c["kwargs"].items():
            ok, v, _ = sp._resolver.eval(src)
            if ok:
                kw[k] = (v, argument_layer(sp.r.params, src))
        apply_config_call(sp.r.params, fn, f"{rel}:{c['line']}", values, kw)


def _function_in(wd: Any, module: str, name: str, base: str) -> ast.FunctionDef | None:
    path = module.replace(".", "/") + ".py"
    for rel in (path, base + path):
        text = wd.read_text(rel)
        if not text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return None
        return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    return None
