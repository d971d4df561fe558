"""A config file with everything it inherits: `_base_` (OpenMMLab-style Python or YAML configs), `_BASE_`
(yacs / detectron2), OmegaConf `${...}` interpolation, and the Python config files' `dict(...)` calls.

    tree = load_tree(read, "configs/swin/swin-t_8xb128.py")
    tree.data            # the merged nested dict (child over base, `_delete_=True` replaces)
    tree.where["optim_wrapper.optimizer.lr"]   # "configs/_base_/schedules/x.py:4"

Nothing is executed: Python config files are read through `ast`, values that are not literals or constant
arithmetic over earlier names are left out (never guessed). A base that cannot be read is named in `notes`.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof import config_factories, py_module_config
from schedmate.codeprof.configs import ConfigError, flatten, key_lines, parse_config
from schedmate.codeprof.gin_config import gin_config, resolve_refs

MAX_BASES = 24
"""bound on the files one config may pull in (inheritance chains in real repos are 2-5 deep)"""
_INTERP = re.compile(r"\$\{([^{}]+)\}")
_MM_REF = re.compile(r"^\{\{\s*_base_\.([\w.]+)\s*\}\}$")


@dataclass
class ConfigTree:
    data: dict[str, Any] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)
    """dotted key -> file:line of the value that won"""
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    modules: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    """config modules imported by Python configs (`py_module_config.py`), each evaluated once"""
    context: dict[str, str] = field(default_factory=dict)
    """values the job renders into Jinja-templated YAML placeholders (`jinja_yaml.py`)"""


Reader = Callable[[str], "str | None"]


def _join(base_file: str, ref: str) -> str:
    if ref.startswith("/"):
        return ref.lstrip("/")
    parts: list[str] = []
    for p in (PurePosixPath(base_file).parent / ref).parts:
        if p == "..":
            if parts:
                parts.pop()
        elif p != ".":
            parts.append(p)
    return "/".join(parts)


class _Unknown:
    """a value the static reader cannot know (a call, a name from an import)"""


UNKNOWN = _Unknown()


def _value(node: ast.AST, names: dict[str, Any]) -> Any:
    """Literal / dict(...) / constant arithmetic; parts that cannot be known become UNKNOWN."""
    from schedmate.codeprof.pyast import const_eval

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        return {kw.arg: _value(kw.value, names) for kw in node.keywords if kw.arg is not None}
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                continue
            ok, key = const_eval(k, names)
            if ok and isinstance(key, (str, int)):
                out[key] = _value(v, names)
        return out
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(e, names) for e in node.elts]
    if isinstance(node, ast.IfExp):  # `8 if runlocal else 4096`
        test = _value(node.test, names)
        return UNKNOWN if isinstance(test, _Unknown) else _value(node.body if test else node.orelse, names)
    if isinstance(node, ast.Subscript):  # `{'Ti': 192, 'B': 768}[version]`
        base, key = _value(node.value, names), _value(node.slice, names)
        try:
            return base[key] if isinstance(base, (dict, list)) and not isinstance(key, _Unknown) else UNKNOWN
        except (KeyError, IndexError, TypeError):
            return UNKNOWN
    if isinstance(node, (ast.Compare, ast.BoolOp)) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _test(node, names)  # `if arg == 'small':`, `variant in ('B', 'L') and not runlocal`
    if isinstance(node, ast.Call) and not node.keywords:
        args = [_value(a, names) for a in node.args]
        if any(isinstance(a, _Unknown) for a in args):
            return UNKNOWN
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id in _PURE_BUILTINS:
            try:
                return _PURE_BUILTINS[fn.id](*args)
            except (TypeError, ValueError):
                return UNKNOWN
        if isinstance(fn, ast.Attribute) and fn.attr in _STR_METHODS:
            obj = _value(fn.value, names)
            if isinstance(obj, str) and all(isinstance(a, str) for a in args):
                return getattr(obj, fn.attr)(*args)
        return UNKNOWN
    ok, v = const_eval(node, {k: x for k, x in names.items() if not isinstance(x, _Unknown)})
    return v if ok else UNKNOWN


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b, ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b, ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b}


def _test(node: ast.AST, names: dict[str, Any]) -> Any:
    """A condition over known values (one comparison, `and`/`or`, `not`); UNKNOWN when any part is."""
    if isinstance(node, ast.UnaryOp):
        v = _value(node.operand, names)
        return v if isinstance(v, _Unknown) else not v
    if isinstance(node, ast.BoolOp):
        v: Any = None
        for part in node.values:
            v = _value(part, names)
            if isinstance(v, _Unknown) or (not v if isinstance(node.op, ast.And) else bool(v)):
                return v if isinstance(v, _Unknown) else bool(v)
        return bool(v)
    assert isinstance(node, ast.Compare)
    if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
        return UNKNOWN
    a, b = _value(node.left, names), _value(node.comparators[0], names)
    if isinstance(a, _Unknown) or isinstance(b, _Unknown):
        return UNKNOWN
    try:
        return bool(_COMPARE[type(node.ops[0])](a, b))
    except TypeError:
        return UNKNOWN


_PURE_BUILTINS: dict[str, Any] = {"bool": bool, "int": int, "float": float, "str": str, "len": len, "min": min,
                                  "max": max, "abs": abs, "round": round}
"""builtins a config may call on known values (no side effects, no I/O)"""
_STR_METHODS = {"split", "lower", "upper", "strip", "replace", "rsplit"}


def python_config(text: str) -> dict[str, Any]:
    """Module-level assignments of a Python config file (OpenMMLab style), partially known dicts kept."""
    out: dict[str, Any] = {}
    for node in ast.parse(text).body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target is not None and value is not None:
            out[target] = _value(value, out)
    return _drop_unknown(out)


def _drop_unknown(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _drop_unknown(v) for k, v in x.items() if not isinstance(v, _Unknown)}
    if isinstance(x, list):
        return [_drop_unknown(v) for v in x if not isinstance(v, _Unknown)]
    return x


_CONFIG_DICT = re.compile(r"(^|\.)(ConfigDict|FrozenConfigDict|EasyDict|edict|Namespace|SimpleNamespace|CN|CfgNode|"
                          r"AttrDict|dict)$")


def attribute_tree(body: list[ast.stmt], known: dict[str, Any] | None = None, factories: frozenset[str] = frozenset()
                   ) -> tuple[dict[str, Any], dict[str, int]]:
    """Config trees built by attribute assignment (`_C = CN(); _C.TRAIN.EPOCHS = 300`, or
    `config = ml_collections.ConfigDict(); config.model.num_layers = 12`) in `body`: the merged values
    under each root's fields (the root variable's name dropped) and the line of each dotted key."""
    local: dict[str, Any] = dict(known or {})
    roots: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    nodes: list[ast.stmt] = []
    for st in body:  # statements in order, descending into plain blocks (if/with/for bodies)
        stack = [st]
        while stack:
            cur = stack.pop(0)
            nodes.append(cur)
            if isinstance(cur, ast.If) and not isinstance(taken := _value(cur.test, local), _Unknown):
                stack.extend(cur.body if taken else cur.orelse)  # a branch the known values decide
                continue
            for attr in ("body", "orelse"):
                if not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    stack.extend(getattr(cur, attr, []) or [])
    aliases: dict[str, str] = {}  # `training = config.training`: a local name for a subtree
    for st in nodes:
        if not isinstance(st, ast.Assign):
            continue
        if len(st.targets) > 1:  # `config.training = training = ConfigDict()`: a subtree and its alias
            paths = [p for t in st.targets if (p := _dotted(t)) and "." in p]
            aliases.update({t.id: paths[0] for t in st.targets if isinstance(t, ast.Name) and len(paths) == 1})
            if len(paths) != 1:
                continue
            st = ast.Assign(targets=[ast.parse(paths[0], mode="eval").body], value=st.value, lineno=st.lineno)
        target, value = st.targets[0], st.value
        if isinstance(target, ast.Name) and (src := _dotted(value)) and src.split(".")[0] in roots and "." in src:
            aliases[target.id] = src
            continue
        if (head := (_dotted(target) or "").split(".")[0]) in aliases:
            target = ast.parse(aliases[head] + (_dotted(target) or "")[len(head):], mode="eval").body
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            v = _value(value, {**local, **_flat_roots(roots)})  # `version, patch = VARIANT.split('/')`
            if isinstance(v, (list, tuple)) and len(v) == len(target.elts):
                for e, x in zip(target.elts, v, strict=True):
                    if not isinstance(x, _Unknown):
                        local[e.id] = x  # type: ignore[union-attr]
            continue
        is_tree = isinstance(value, ast.Call) and _CONFIG_DICT.search(_dotted(value.func) or "") is not None
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) \
                and ((_dotted(value.func) or "").endswith(".get_config") or _dotted(value.func) in factories):
            roots[target.id] = {}  # `config = base_config.get_config()`: the base's fields come as a `_base_`
            continue
        if isinstance(target, ast.Name):
            if is_tree and not value.args:  # type: ignore[union-attr]
                roots[target.id] = {k.arg: _drop_unknown(_value(k.value, local))  # type: ignore[union-attr]
                                    for k in value.keywords if k.arg}  # type: ignore[union-attr]
            else:
                v = _value(value, {**local, **_flat_roots(roots)})
                if not isinstance(v, _Unknown):
                    local[target.id] = v
            continue
        path = _dotted(target)
        if not path or path.split(".")[0] not in roots:
            continue
        parts = path.split(".")
        cur = roots[parts[0]]
        for part in parts[1:-1]:
            nxt = cur.get(part)
            if not isinstance(nxt, dict):
                nxt = cur[part] = {}
            cur = nxt
        if is_tree and not value.keywords:  # type: ignore[union-attr]
            cur.setdefault(parts[-1], {})
            continue
        v = _drop_unknown(_value(value, {**local, **_flat_roots(roots)}))
        if not isinstance(v, _Unknown):
            cur[parts[-1]] = v
            lines[".".join(parts[1:])] = st.lineno
    out: dict[str, Any] = {}
    for d in roots.values():
        out = merge(out, d)
    return out, lines


def _flat_roots(roots: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`config.batch_size` as a name (const_eval reads dotted names), for values computed from earlier fields."""
    out: dict[str, Any] = {}
    for root, tree in roots.items():
        for k, v in flatten(tree, root):
            out[k] = v
    return out


def _param_defaults(fn: ast.FunctionDef) -> dict[str, Any]:
    """`def get_config(runlocal=''):` -> {'runlocal': ''}: what the config function sees when called plainly."""
    a = fn.args
    out: dict[str, Any] = {}
    pos = [*a.posonlyargs, *a.args]
    for arg, default in zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True):
        v = _value(default, {})
        if not isinstance(v, _Unknown):
            out[arg.arg] = v
    return out


def ml_collections_config(text: str, arg: str | None = None) -> dict[str, Any]:
    """The fields a `get_config()` sets on an `ml_collections.ConfigDict` (read without running it), plus
    module globals and module-level attribute trees. Values that are not literals or arithmetic over
    earlier locals are left out. `arg` is what `--config=cfg.py:arg` hands `get_config(arg)` (a string)."""
    tree = config_factories.unwrap_dict_builders(ast.parse(text))  # `d(a=1)`, `ConfigDict({'a': 1})`
    out = python_config(text)
    globals_ = {k: v for k, v in out.items() if not isinstance(v, dict)}
    bases: list[str] = []
    factories = frozenset(config_factories.factory_names(tree))
    for fn in config_factories.config_functions(tree):  # `get_config()`, or a shared-defaults module's one ConfigDict builder
        # module-level tables (`NUM_LAYERS = {'B': 12, 'L': 24}`) are readable inside the function
        tables = {k: v for k, v in out.items() if isinstance(v, dict)}
        params = _param_defaults(fn)
        if arg is not None and (pos := [*fn.args.posonlyargs, *fn.args.args]):
            params[pos[0].arg] = arg
        out = merge(out, attribute_tree(fn.body, {**tables, **globals_, **params}, factories)[0])
        if fn.name != "get_hyper":
            bases.extend([*config_factories.module_bases(tree, fn), *config_factories.factory_bases(tree, fn)])
    out = merge(out, attribute_tree(tree.body, globals_)[0])
    if bases:
        out["_base_"] = bases
    return out


def _dotted(node: ast.AST) -> str | None:
    from schedmate.codeprof.pyast import dotted

    return dotted(node)


def parse_any(rel: str, text: str, arg: str | None = None, context: dict[str, str] | None = None) -> dict[str, Any]:
    low = rel.lower()
    try:
        if low.endswith(".py"):
            return ml_collections_config(text, arg) if config_factories.is_config_module(text) else python_config(text)
        if low.endswith(".gin"):
            return gin_config(text)
    except SyntaxError as e:
        raise ConfigError(f"{rel}: cannot parse: {e}".splitlines()[0]) from e
    return parse_config(rel, text, context)


def merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Child over base, recursively; a child dict with `_delete_: True` replaces the base's."""
    out = copy.deepcopy(base)
    for k, v in child.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and not v.get("_delete_"):
            out[k] = merge(out[k], v)
        elif isinstance(v, dict) and v.get("_delete_"):
            out[k] = {a: b for a, b in v.items() if a != "_delete_"}
        else:
            out[k] = copy.deepcopy(v)
    return out


def _bases(cfg: dict[str, Any]) -> list[str]:
    refs: list[str] = []
    # a Hydra config's defaults list naming options of its own group (`defaults: [default]`): sibling files
    defaults = cfg.get("defaults")
    if isinstance(defaults, list):
        refs.extend(f"{d}.yaml" for d in defaults if isinstance(d, str) and d not in {"_self_"}
                    and re.fullmatch(r"[\w.-]+", d))
    for key in ("_base_", "_BASE_", "__base__", "base_config", "BASE_CONFIG", "_BASES_"):
        v = cfg.get(key)
        if isinstance(v, str):
            refs.append(v)
        elif isinstance(v, list):
            refs.extend(x for x in v if isinstance(x, str))
    return refs


def load_tree(read: Reader, rel: str, env: dict[str, str] | None = None, arg: str | None = None,
              context: dict[str, str] | None = None) -> ConfigTree:
    """`rel` merged over the bases it names (depth first, in order), with interpolations resolved; `context`
    fills Jinja-templated YAML placeholders the job renders (else they stay open)."""
    tree = ConfigTree(context=dict(context or {}))
    tree.data = _load(read, rel, tree, [], arg)
    if rel.lower().endswith(".gin"):
        tree.data = resolve_refs(tree.data)  # gin macros are read lazily: their last binding in any file
    resolve_interpolations(tree, env or {})
    return tree


def _load(read: Reader, rel: str, tree: ConfigTree, chain: list[str], arg: str | None = None) -> dict[str, Any]:
    if rel in chain:
        tree.notes.append(f"{rel}: inherits from itself ({' -> '.join([*chain, rel])}); cycle cut")
        return {}
    if len(tree.files) >= MAX_BASES:
        tree.notes.append(f"{rel}: more than {MAX_BASES} inherited config files; the rest not read")
        return {}
    text = read(rel)
    if text is None:
        tree.notes.append(f"config {rel} not readable in the workdir")
        return {}
    tree.files.append(rel)
    try:
        if rel in tree.modules or py_module_config.is_module_config(rel, text, lambda p: read(p) is not None):
            def module(p: str) -> dict[str, Any] | None:  # an imported config module, evaluated once per tree
                if p not in tree.modules and read(p) is not None:
                    tree.modules[p] = None  # marks it a module (evaluated as one) and cuts import cycles
                    tree.modules[p] = _load(read, p, tree, [*chain, rel])
                return tree.modules.get(p)
            cfg = py_module_config.evaluate(rel, text, module)
        else:
            cfg = parse_any(rel, text, arg, tree.context)
    except ConfigError as e:
        tree.notes.append(str(e))
        return {}
    merged: dict[str, Any] = {}
    for ref in _bases(cfg):
        if "::" in ref:  # OpenMMLab 2.x `scope::path`: the config tree of the package registered as `scope`
            target = _scoped(read, ref)
            if target is None:
                tree.notes.append(f"{rel}: base {ref} is in the installed package's configs; not read")
                continue
            merged = merge(merged, _load(read, target, tree, [*chain, rel]))
            continue
        target = _join(rel, ref)
        if read(target) is None and read(ref.lstrip("/")) is not None:
            target = ref.lstrip("/")  # gin includes and some _BASE_s name paths from the repository root
        merged = merge(merged, _load(read, target, tree, [*chain, rel]))
    own = {k: v for k, v in cfg.items() if k not in {"_base_", "_BASE_", "__base__", "base_config", "BASE_CONFIG"}}
    own = _mm_refs(own, merged)
    flat = flatten(own)
    lines = key_lines(text, [k for k, _ in flat])
    for k, _ in flat:
        tree.where[k] = f"{rel}:{lines.get(k, 1)}"
    return merge(merged, own)


def _scoped(read: Reader, ref: str) -> str | None:
    """`mmrazor::_base_/settings/x.py` (mmengine's cross-package `_base_`): a path under the `configs/` tree of
    the package `mmrazor`. When the job's own repository is that package (its `mmrazor/` package sits beside
    `configs/`), the file is `configs/_base_/settings/x.py` here; a base in another installed package is None."""
    scope, _, path = ref.partition("::")
    if not re.fullmatch(r"\w+", scope) or read(f"{scope}/__init__.py") is None:
        return None
    target = _join("configs/x", path)
    return target if read(target) is not None else None


def _lookup(data: dict[str, Any], dotted: str) -> Any:
    cur: Any = data
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return UNKNOWN
    return cur


def _mm_refs(own: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """`'{{_base_.train_cfg.max_epochs}}'` -> the base's value."""

    def fix(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: fix(v) for k, v in x.items()}
        if isinstance(x, list):
            return [fix(v) for v in x]
        if isinstance(x, str) and (m := _MM_REF.match(x)):
            v = _lookup(base, m.group(1))
            return x if isinstance(v, _Unknown) else v
        return x

    return fix(own)


def resolve_interpolations(tree: ConfigTree, env: dict[str, str],
                           resolvers: dict[str, Callable[[str], Any]] | None = None) -> None:
    """OmegaConf `${a.b}`, `${..x}` (relative), `${oc.env:VAR,default}` and the given custom `resolvers`
    (name -> function of the argument text, raising ValueError when it cannot tell); inner interpolations
    first; unresolvable ones stay as text."""
    resolvers = resolvers or {}

    def resolve(x: Any, path: list[str], depth: int) -> Any:
        if isinstance(x, dict):
            return {k: resolve(v, [*path, str(k)], depth) for k, v in x.items()}
        if isinstance(x, list):
            return [resolve(v, [*path, str(i)], depth) for i, v in enumerate(x)]
        if not isinstance(x, str) or "${" not in x or depth > 8:
            return x
        whole = _INTERP.fullmatch(x.strip())
        if whole:
            v = _one(whole.group(1).strip(), path)
            if isinstance(v, _Unknown):
                return x
            return resolve(v, path, depth + 1)

        def sub(m: re.Match[str]) -> str:
            v = _one(m.group(1).strip(), path)
            return m.group(0) if isinstance(v, (_Unknown, dict, list)) else str(v)

        out = _INTERP.sub(sub, x)
        # the inner interpolations of a resolver call (`${eval:"${a} * 2"}`) are text now: resolve again
        return resolve(out, path, depth + 1) if out != x else out

    def _one(expr: str, path: list[str]) -> Any:
        if expr.startswith(("oc.env:", "env:")):
            name, _, default = expr.split(":", 1)[1].partition(",")
            name = name.strip()
            got = env.get(name, default.strip().strip("'\"") if default else None)
            if got is None:
                return UNKNOWN
            return int(got) if re.fullmatch(r"-?\d+", got) else got
        if ":" in expr:  # resolvers: the given ones over literal arguments; others are not known statically
            name, _, arg = expr.partition(":")
            fn = resolvers.get(name.strip())
            if fn is None or "${" in arg:
                return UNKNOWN
            try:
                return fn(arg)
            except ValueError:
                return UNKNOWN
        if expr.startswith("."):
            ups = len(expr) - len(expr.lstrip("."))
            base = path[: max(0, len(path) - ups)]
            return _lookup(tree.data, ".".join([*base, expr.lstrip(".")]))
        return _lookup(tree.data, expr)

    tree.data = resolve(tree.data, [], 0)
