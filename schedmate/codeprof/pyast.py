"""Read a Python file with `ast` only (never import, never exec) into a JSON-able summary.

The summary keeps argparse arguments and their defaults, dataclass field defaults (HfArgumentParser
style), module-level assignments, every call with its arguments as source text, imports and string
literals naming config files. `static.py` evaluates the kept expressions against what the command
line and the config files say.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Any

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}
MAX_CALLS = 4000
_LOW_DTYPES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
}


def default_pairs(a: ast.arguments) -> list[tuple[ast.arg, ast.expr]]:
    """(parameter, default expression) of every parameter of a signature that has a default, positional ones
    first, as Python pairs `defaults` with the last positional parameters."""
    pos = [*a.posonlyargs, *a.args]
    return [*zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True),
            *((k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)]


def const_eval(node: ast.AST, names: dict[str, Any] | None = None) -> tuple[bool, Any]:
    """Evaluate literals and constant arithmetic (names from `names` allowed). Never calls anything."""
    names = names or {}
    try:
        return True, _ce(node, names)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, KeyError):
        return False, None


def _ce(node: ast.AST, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        v = _ce(node.operand, names)
        if isinstance(node.op, ast.Not):
            return not v
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _ce(node.left, names), _ce(node.right, names)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            if isinstance(node.op, ast.Add) and isinstance(a, str) and isinstance(b, str):
                return a + b
            raise ValueError("non-numeric arithmetic")
        if isinstance(node.op, ast.Pow) and abs(b) > 64:
            raise ValueError("exponent too large")
        return _BINOPS[type(node.op)](a, b)
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_ce(e, names) for e in node.elts]
    if isinstance(node, ast.Dict):
        pairs = zip(node.keys, node.values, strict=True)
        return {_ce(k, names): _ce(v, names) for k, v in pairs if k is not None}
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise ValueError(f"unknown name {node.id}")
    if isinstance(node, ast.Attribute) and (path := dotted(node)) in names:  # `config.batch_size`, if known
        return names[path]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"int", "float"} \
            and len(node.args) == 1 and not node.keywords:  # `int(1e6)`: a number written for readability
        v = _ce(node.args[0], names)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v) if node.func.id == "int" else float(v)
    raise ValueError(f"not a constant: {type(node).__name__}")


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for Name/Attribute chains, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):  # torch.cuda.amp.GradScaler() -> keep the attribute tail
        inner = dotted(node.func)
        if inner:
            parts.append(inner + "()")
            return ".".join(reversed(parts))
    return None


def _src(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every node ast.parse makes
        return ""


def analyze_python(text: str) -> dict[str, Any]:
    """Summary of one Python source; raises SyntaxError (the caller names the file)."""
    tree = ast.parse(text)
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child._sm_parent = parent  # type: ignore[attr-defined]
    out: dict[str, Any] = {
        "imports": [],
        "argparse": [],
        "dataclasses": {},
        "hf_parser": [],
        "assigns": [],
        "calls": [],
        "strings": [],
        "docstring": ast.get_docstring(tree) or "",
        "functions": [],
        "classes": [],
        "dtype_refs": [],
        "step_loops": [],
        "device_loops": [],  # `for i in range(n): with tf.device('/gpu:%d' % i):` (TF 1.x towers)
        "key_sets": [],
    }
    imports: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(a.name for a in node.names)
        elif isinstance(node, ast.For) and (n := _range_count(node.iter)) is not None and _steps_optimizer(node):
            out["step_loops"].append({"line": node.lineno, "n": n, "var": _src(node.target),
                                      "function": _enclosing_function(node)})
        elif isinstance(node, ast.For) and (n := _range_count(node.iter)) is not None and _gpu_device_body(node):
            out["device_loops"].append({"line": node.lineno, "n": n})
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            # a relative import keeps its leading dots (`from ..cfg import x` -> `..cfg`, `..cfg.x`;
            # `from . import config` -> `.`, `.config`): the reader resolves it from the importer's package
            mod = "." * node.level + (node.module or "")
            imports.add(mod)
            imports.update(f"{mod}{'' if mod.endswith('.') else '.'}{a.name}" for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
            out["functions"].append({"name": node.name, "line": node.lineno, "end": node.end_lineno,
                                     "params": params})
        elif isinstance(node, ast.ClassDef):
            bases = [dotted(b) or "" for b in node.bases]
            out["classes"].append(
                {"name": node.name, "line": node.lineno, "end": node.end_lineno, "bases": bases}
            )
            decos = {
                (dotted(d.func) if isinstance(d, ast.Call) else dotted(d)) or "" for d in node.decorator_list
            }
            if any(d.endswith("dataclass") for d in decos):
                fields = []
                for st in node.body:
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                        fields.append(_dataclass_field(st))
                out["dataclasses"][node.name] = fields
        elif isinstance(node, ast.Call):
            if len(out["calls"]) < MAX_CALLS:
                _record_call(node, out)
        elif isinstance(node, ast.Attribute) and node.attr in _LOW_DTYPES:
            base = dotted(node.value) or ""
            if base in {"torch", "jnp", "jax.numpy", "np", "tf"}:
                out["dtype_refs"].append({"dtype": _LOW_DTYPES[node.attr], "line": node.lineno})
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            v = node.value
            if len(v) < 300 and "\n" not in v and v.lower().endswith((".yaml", ".yml", ".json", ".toml")):
                out["strings"].append({"value": v, "line": node.lineno})
    out["imports"] = sorted(imports, key=lambda i: (i.startswith("."), i))  # absolute ones first, as before
    _record_assigns(tree, out)
    return out


_OPTIMIZER = re.compile(r"(^|_)(optim|optimizer|opt)\d*$", re.IGNORECASE)


def _range_count(it: ast.AST) -> str | None:
    """`N` of a loop over `range(N)`, `trange(N)` or `tqdm(range(N), ...)`."""
    if isinstance(it, ast.Call) and (dotted(it.func) or "").rsplit(".", 1)[-1] == "tqdm" and it.args:
        it = it.args[0]
    if isinstance(it, ast.Call) and (dotted(it.func) or "").rsplit(".", 1)[-1] in {"range", "trange"} \
            and len(it.args) == 1 and not it.keywords:
        return _src(it.args[0])
    return None


def _gpu_device_body(loop: ast.For) -> bool:
    """The loop body places its work on the GPU its index names: `with tf.device('/gpu:%d' % i):` (or an
    f-string / `.format` of it) directly in the body."""
    var = _src(loop.target)
    for st in loop.body:
        if not isinstance(st, ast.With):
            continue
        for item in st.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and (dotted(call.func) or "").endswith("device") and call.args:
                arg = _src(call.args[0])
                if re.search(r"gpu", arg, re.IGNORECASE) and re.search(rf"\b{re.escape(var)}\b", arg):
                    return True
    return False


def _enclosing_function(node: ast.AST) -> str | None:
    """Name of the innermost function around `node` (None at module level)."""
    p = getattr(node, "_sm_parent", None)
    while p is not None:
        if isinstance(p, ast.FunctionDef | ast.AsyncFunctionDef):
            return p.name
        p = getattr(p, "_sm_parent", None)
    return None


def _steps_optimizer(loop: ast.For) -> bool:
    """Does one pass of the loop take one optimizer step (`optimizer.step()` in its body, not inside a
    nested loop, as in `for i in range(N): (accumulate); optim.step()`)?"""
    def walk(body: list[ast.stmt]) -> bool:
        for st in body:
            if isinstance(st, ast.For | ast.While | ast.AsyncFor | ast.FunctionDef | ast.AsyncFunctionDef
                          | ast.ClassDef):
                continue
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                f = dotted(st.value.func) or ""
                if f.endswith(".step") and _OPTIMIZER.search(f.rsplit(".", 2)[-2]):
                    return True
            for attr in ("body", "orelse", "finalbody"):
                sub = getattr(st, attr, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt) and walk(sub):
                    return True
            if isinstance(st, ast.Try) and any(walk(h.body) for h in st.handlers):
                return True
        return False

    return walk(loop.body)


def _dataclass_field(st: ast.AnnAssign) -> dict[str, Any]:
    name = st.target.id  # type: ignore[union-attr]
    f: dict[str, Any] = {"name": name, "line": st.lineno, "has_default": False, "default": None}
    v = st.value
    if v is None:
        return f
    if isinstance(v, ast.Call) and (dotted(v.func) or "").endswith("field"):
        for kw in v.keywords:
            if kw.arg == "default":
                ok, val = const_eval(kw.value)
                if ok:
                    f.update(has_default=True, default=val)
        return f
    ok, val = const_eval(v)
    if ok:
        f.update(has_default=True, default=val)
    return f


_ABSL_DEFINES = {"DEFINE_integer", "DEFINE_float", "DEFINE_string", "DEFINE_bool", "DEFINE_boolean", "DEFINE_enum"}


def _record_call(node: ast.Call, out: dict[str, Any]) -> None:
    func = dotted(node.func) or ""
    if not func:
        return
    args = [_src(a) for a in node.args]
    kwargs = {kw.arg: _src(kw.value) for kw in node.keywords if kw.arg}
    call = {"func": func, "args": args, "kwargs": kwargs, "line": node.lineno, "when": _conditions(node)}
    if any(kw.arg is None for kw in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        call["spread"] = True  # `f(**opts)` / `f(*xs)`: more arguments than the ones named here
    out["calls"].append(call)
    tail = func.rsplit(".", 1)[-1]
    if tail == "add_argument" and node.args:
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not flags:
            return
        long = [f for f in flags if f.startswith("--")]
        dest = kwargs.get("dest")
        if dest:
            ok, d = const_eval(ast.parse(dest, mode="eval").body)
            dest = d if ok else None
        name = dest or (long[0] if long else flags[0]).lstrip("-").replace("-", "_")
        action = None
        default_ok, default = False, None
        for kw in node.keywords:
            if kw.arg == "default":
                default_ok, default = const_eval(kw.value)
            elif kw.arg == "action":
                ok, action = const_eval(kw.value)
            elif kw.arg == "nargs" and action is None:  # several values after one flag: a list
                ok, n = const_eval(kw.value)
                if ok and (n in {"+", "*"} or (isinstance(n, int) and n > 1)):
                    action = "nargs"
        if not default_ok and action == "store_true":
            default_ok, default = True, False
        elif not default_ok and action == "store_false":
            default_ok, default = True, True
        out["argparse"].append(
            {
                "dest": name,
                "flags": flags,
                "default": default,
                "has_default": default_ok,
                "action": action,
                "line": node.lineno,
                "type": kwargs.get("type"),
                "help": _help_text(node),
                "main_only": _under_main_guard(node),
            }
        )
    elif tail in _ABSL_DEFINES and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        # absl / tf.compat flags: DEFINE_integer('batch_size', 32, 'help')
        name = node.args[0].value
        dflt = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
        default_ok, default = const_eval(dflt) if dflt is not None else (False, None)
        help_node = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "help"),
                                                                 None)
        ok_h, help_text = const_eval(help_node) if help_node is not None else (False, "")
        is_bool = tail in {"DEFINE_bool", "DEFINE_boolean"}
        out["argparse"].append(
            {
                "dest": name,
                "flags": [f"--{name}"],
                "default": default,
                "has_default": default_ok,
                "action": "store_true" if is_bool else None,
                "line": node.lineno,
                "type": None,
                "help": help_text if ok_h and isinstance(help_text, str) else "",
                "main_only": _under_main_guard(node),
            }
        )
    elif tail == "define_flags_with_default":  # absl flags from keyword defaults (mlxu and its copies)
        for kw in node.keywords:
            ok, default = const_eval(kw.value) if kw.arg else (False, None)
            if ok and not isinstance(default, (dict, list, tuple)):
                out["argparse"].append({"dest": kw.arg, "flags": [f"--{kw.arg}"], "default": default,
                                        "has_default": True, "action": None, "line": kw.value.lineno,
                                        "type": None, "help": "", "main_only": _under_main_guard(node)})
    elif tail == "HfArgumentParser" and node.args:
        a = node.args[0]
        elts = a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a]
        out["hf_parser"] = [dotted(e) or "" for e in elts]


def _help_text(node: ast.Call) -> str:
    """The literal `help=` of an add_argument call ('' when absent or computed)."""
    for kw in node.keywords:
        if kw.arg == "help":
            ok, v = const_eval(kw.value)
            if ok and isinstance(v, str):
                return v[:300]
            if isinstance(kw.value, ast.JoinedStr):
                return "".join(p.value for p in kw.value.values if isinstance(p, ast.Constant))[:300]
    return ""


def _under_main_guard(node: ast.AST) -> bool:
    """Inside `if __name__ == "__main__":` (code that runs only when its module is the program)."""
    return any(re.fullmatch(r"""__name__\s*==\s*['"]__main__['"]""", w.strip()) for w in _conditions(node))


def _conditions(node: ast.AST) -> list[str]:
    """Source of the `if` tests guarding `node` (negated with `not (...)` in an else branch)."""
    out: list[str] = []
    child, cur = node, getattr(node, "_sm_parent", None)
    while cur is not None:
        if isinstance(cur, ast.If | ast.IfExp):
            body = cur.body if isinstance(cur.body, list) else [cur.body]
            test = _src(cur.test)
            out.append(test if child in body else f"not ({test})")
        elif isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            break
        child, cur = cur, getattr(cur, "_sm_parent", None)
    return out


def _record_assigns(tree: ast.Module, out: dict[str, Any]) -> None:
    """Assignments to names and attribute chains anywhere, with their `if` guards and depth (0 = module
    level, 1+ = inside functions) and augmented ones (`x //= n`)."""

    scope: list[str] = []  # enclosing class and function names (`Exp.__init__`)

    def add(target: ast.AST, value: ast.AST, line: int, op: str | None, depth: int, when: list[str]) -> None:
        if isinstance(target, ast.Subscript) and op is None and isinstance(target.slice, ast.Constant) \
                and isinstance(target.slice.value, str) and (obj := dotted(target.value)):
            # `ds_config["train_micro_batch_size_per_gpu"] = args.batch_size`: a loaded config's key set in code
            out["key_sets"].append({"obj": obj, "key": target.slice.value, "expr": _src(value), "line": line,
                                    "depth": depth, "when": list(when)})
            return
        name = dotted(target)
        if name:
            out["assigns"].append(
                {
                    "target": name,
                    "expr": _src(value),
                    "line": line,
                    "op": op,
                    "depth": depth,
                    "when": list(when),
                    "scope": ".".join(scope),
                }
            )

    def visit(body: list[ast.stmt], depth: int, when: list[str]) -> None:
        for st in body:
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    if isinstance(t, ast.Tuple | ast.List) and isinstance(st.value, ast.Call):
                        # `rank, world_size = get_dist_info()`: each name is one item of the call's result,
                        # recorded as `__unpacked__(i, call)` (unknown unless a rule knows what the call returns)
                        for i, el in enumerate(t.elts):
                            add(el, ast.Call(func=ast.Name(id="__unpacked__"), args=[ast.Constant(i), st.value],
                                             keywords=[]), st.lineno, None, depth, when)
                        continue
                    add(t, st.value, st.lineno, None, depth, when)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                add(st.target, st.value, st.lineno, None, depth, when)
            elif isinstance(st, ast.AugAssign):
                op = {ast.FloorDiv: "//", ast.Mult: "*", ast.Div: "/", ast.Add: "+", ast.Sub: "-"}.get(
                    type(st.op)
                )
                if op:
                    add(st.target, st.value, st.lineno, op, depth, when)
            elif isinstance(st, ast.If):
                test = _src(st.test)
                visit(st.body, depth, [*when, test])
                visit(st.orelse, depth, [*when, f"not ({test})"])
            elif isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef):
                scope.append(st.name)
                visit(st.body, depth + 1, [])
                scope.pop()
            elif isinstance(st, ast.ClassDef):
                # methods only: class-level fields (dataclasses) are read separately
                scope.append(st.name)
                visit([m for m in st.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)], depth, [])
                scope.pop()
            elif isinstance(st, ast.Try):
                visit(st.body, depth, when)
                for h in st.handlers:
                    visit(h.body, depth, when)
                visit(st.orelse, depth, when)
                visit(st.finalbody, depth, when)
            else:
                for attr in ("body", "orelse"):
                    sub = getattr(st, attr, None)
                    if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                        visit(sub, depth, when)

    visit(tree.body, 0, [])
