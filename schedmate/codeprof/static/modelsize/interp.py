"""A small abstract interpreter over a job's own `nn.Module` classes: it builds the module tree the way
`__init__` would (layers, `Sequential`/`ModuleList`, loops, helper methods, `super().__init__`) without
importing or running anything, and counts the parameters with `layers.py`.

Values are numbers, strings, containers, `Mod` (a module), `Ref` (an expression of the entry script the
analyzer's resolver may know, such as `args.hidden`), references to local classes/functions/modules and
to external names (`Ext`). Anything it cannot follow raises `GiveUp`; a count is all or nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize import pyfuncs, shapes
from schedmate.codeprof.static.modelsize.binding import bind_parameters, required
from schedmate.codeprof.static.modelsize.inert import assign
from schedmate.codeprof.static.modelsize.keras_graph import star_external
from schedmate.codeprof.static.modelsize.keywords import call_keywords, positional
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import (
    _BINOPS,
    _BUILTINS,
    _CMPS,
    _MATH_CONSTANTS,
    _PARAM_FREE_EXT,
    _SAME_MODULE,
    MAX_DEPTH,
    MAX_STEPS,
    STR_METHODS,
    ClassRef,
    Ext,
    FuncRef,
    LazyDict,
    ModuleRef,
    Ref,
    Shared,
    Source,
    SuperRef,
    Tensor,
    Unknown,
    _registers_nothing,
)

__all__ = ["_PARAM_FREE_EXT", "_SAME_MODULE", "ClassRef", "Ext", "FuncRef", "Interp", "LazyDict", "ModuleRef", "Ref",
           "Source", "SuperRef", "Tensor", "Unknown"]

class _Return(Exception):
    def __init__(self, value: Any):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass

class Interp:
    def __init__(self, read_text: Callable[[str], str | None], import_file: Callable[[str, str], str | None],
                 resolve: Callable[[str], tuple[bool, Any, list[str]]]):
        self.read_text, self.import_file, self.resolve = read_text, import_file, resolve
        self.sources: dict[str, Source | None] = {}
        self.steps = 0
        self.depth = 0
        self.evidence: list[str] = []

    # --- files ------------------------------------------------------------------------------------
    def source(self, rel: str, entry: bool = False) -> Source | None:
        if rel in self.sources:
            return self.sources[rel]
        text = self.read_text(rel)
        try:
            tree = ast.parse(text) if text is not None else None
        except SyntaxError:
            tree = None
        src = Source(rel, tree, entry) if tree is not None else None
        self.sources[rel] = src
        if src is not None:
            for st in tree.body:  # type: ignore[union-attr]
                if isinstance(st, (ast.ClassDef, ast.FunctionDef)):
                    src.defs[st.name] = st
                elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    src.assigns[st.targets[0].id] = st.value
                elif isinstance(st, ast.Import):
                    for a in st.names:
                        src.imports[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0],
                                                                         None)
                elif isinstance(st, ast.ImportFrom):
                    mod = "." * st.level + (st.module or "")
                    for a in st.names:
                        if a.name == "*":
                            src.stars.append(mod)
                        else:
                            src.imports[a.asname or a.name] = (mod, a.name)
        return src

    def _module_file(self, mod: str, src: Source) -> Source | None:
        base = src.rel.rsplit("/", 1)[0] if "/" in src.rel else ""
        if mod.startswith("."):
            up = len(mod) - len(mod.lstrip("."))
            parts = base.split("/") if base else []
            base = "/".join(parts[: len(parts) - (up - 1)]) if up > 1 else base
            mod = mod.lstrip(".")
            if not mod:
                rel = f"{base}/__init__.py" if base else "__init__.py"
                return self.source(rel)
        rel = self.import_file(mod, base)
        return self.source(rel) if rel else None

    def global_(self, src: Source, name: str) -> Any:
        if name in src.cache:
            return src.cache[name]
        src.cache[name] = Unknown(f"{name} is defined in terms of itself")
        val = self._global(src, name)
        src.cache[name] = val
        return val

    def _global(self, src: Source, name: str) -> Any:
        if name in src.defs:
            node = src.defs[name]
            return ClassRef(node, src) if isinstance(node, ast.ClassDef) else FuncRef(node, src)  # type: ignore[arg-type]
        if name in src.assigns:
            node = src.assigns[name]
            if isinstance(node, ast.Dict):
                return LazyDict(node, src)
            val = self.eval(node, {}, src)
            if isinstance(val, Unknown) and src.entry:
                return Ref(name)  # `opt = parser.parse_args()`: the analyzer's resolver knows `opt.x`
            return val
        if name in src.imports:
            mod, attr = src.imports[name]
            target = self._module_file(mod, src)
            if target is None:
                return Ext(f"{mod}.{attr}" if attr else mod)
            if attr is None:
                return ModuleRef(target)
            sub = self._module_file(mod + attr if mod.endswith(".") else f"{mod}.{attr}", src)  # `from . import m`
            got = self.global_(target, attr)
            if isinstance(got, Unknown) and sub is not None and sub is not target:  # not the package itself
                return ModuleRef(sub)
            return Ref(name) if isinstance(got, Unknown) and src.entry else got  # `from .config import cfg`
        for mod in src.stars:  # a local module's names, or a Keras layer from `from keras.layers import *`
            target = self._module_file(mod, src)
            got = self.global_(target, name) if target is not None else star_external(mod, name)
            if not isinstance(got, Unknown):
                return got
        if name in _BUILTINS:
            return Ext(f"builtins.{name}")
        return Ref(name) if src.entry else Unknown(f"name {name} not found in {src.rel}")

    # --- values -----------------------------------------------------------------------------------
    def concrete(self, v: Any) -> Any:
        if isinstance(v, Ref):
            ok, got, ev = self.resolve(v.src)
            if not ok:
                raise GiveUp(f"{v.src} is not known before the run")
            self.evidence.extend(ev)
            return got
        if isinstance(v, Unknown):
            raise GiveUp(v.why)
        if isinstance(v, list):
            return [self.concrete(x) for x in v]
        if isinstance(v, tuple):
            return tuple(self.concrete(x) for x in v)
        return v

    def eval(self, node: ast.expr, env: dict[str, Any], src: Source) -> Any:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise GiveUp("definition too large to follow")
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id] if node.id in env else self.global_(src, node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[Any] = []
            for e in node.elts:
                if isinstance(e, ast.Starred):
                    got = self.concrete_seq(self.eval(e.value, env, src))
                    out.extend(got)
                else:
                    out.append(self.eval(e, env, src))
            return out if isinstance(node, ast.List) else tuple(out)
        if isinstance(node, ast.Dict):
            return {self.concrete(self.eval(k, env, src)): self.eval(v, env, src)
                    for k, v in zip(node.keys, node.values, strict=True) if k is not None}
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            a, b = self.concrete(self.eval(node.left, env, src)), self.concrete(self.eval(node.right, env, src))
            try:
                return _BINOPS[type(node.op)](a, b)
            except (TypeError, ZeroDivisionError, ValueError) as e:
                raise GiveUp(f"arithmetic: {e}") from e
        if isinstance(node, ast.UnaryOp):
            v = self.concrete(self.eval(node.operand, env, src))
            return (not v) if isinstance(node.op, ast.Not) else -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BoolOp):
            vals = [self.concrete(self.eval(v, env, src)) for v in node.values]
            res = vals[0]
            for v in vals[1:]:
                res = (res and v) if isinstance(node.op, ast.And) else (res or v)
            return res
        if isinstance(node, ast.Compare):
            left = self.concrete(self.eval(node.left, env, src))
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = self.concrete(self.eval(comp, env, src))
                if type(op) not in _CMPS:
                    raise GiveUp("comparison")
                if not _CMPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.eval(node.body if self.concrete(self.eval(node.test, env, src)) else node.orelse, env, src)
        if isinstance(node, ast.Attribute):
            return self.attr(self.eval(node.value, env, src), node.attr)
        if isinstance(node, ast.Subscript):
            return self.subscript(self.eval(node.value, env, src), node.slice, env, src)
        if isinstance(node, ast.Call):
            return self.call_node(node, env, src)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(node, env, src)
        return pyfuncs.other_expression(self, node, env, src)  # f-strings; anything else is opaque

    def concrete_seq(self, v: Any) -> list[Any]:
        if isinstance(v, (list, tuple)):
            return list(v)
        if isinstance(v, dict):
            return list(v)
        if isinstance(v, range):
            return list(v)
        if isinstance(v, Mod) and v.name in {"ModuleList", "Sequential"}:
            return list(v.children)  # `for layer in self.decoder.layers:`
        v = self.concrete(v)
        if isinstance(v, (list, tuple, range)):
            return list(v)
        raise GiveUp("iteration over something unknown")

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp, env: dict[str, Any], src: Source) -> list[Any]:
        out: list[Any] = []

        def gen(i: int, scope: dict[str, Any]) -> None:
            if i == len(node.generators):
                out.append(self.eval(node.elt, scope, src))
                return
            g = node.generators[i]
            for item in self.concrete_seq(self.eval(g.iter, scope, src)):
                inner = dict(scope)
                self.bind(g.target, item, inner, src)
                if all(self.concrete(self.eval(c, inner, src)) for c in g.ifs):
                    gen(i + 1, inner)
        gen(0, dict(env))
        return out

    def attr(self, base: Any, name: str) -> Any:
        if (got := shapes.attr(base, name)) is not None:  # `self.pos_embed.shape`, `x.size(1)` (shapes.py)
            return got
        if isinstance(base, Mod):
            if name in base.attrs:
                return base.attrs[name]
            cls = base.attrs.get("__class__")
            if isinstance(cls, ClassRef):
                got = self.class_attr(cls, name)
                if isinstance(got, FuncRef):
                    return FuncRef(got.node, got.src, got.closure, base, got.owner)
                if got is not None:
                    return got
            if name in _SAME_MODULE or name in {"add_module", "register_module", "register_parameter"}:
                return ("method", base, name)
            if name == "weight" and base.weight is not None:
                return Shared(base)
            if name == "bias" and base.weight is not None:  # a torch layer's bias: what its count holds beyond the weight
                return Tensor(n, (n,)) if (n := base.own - base.weight) > 0 else None
            return Unknown(f"attribute {name}", maybe_module=False)
        if isinstance(base, ClassRef):
            got = self.class_attr(base, name)
            return got if got is not None else Unknown(f"class attribute {name}")
        if isinstance(base, ModuleRef):
            if name == "__dict__":
                return base
            return self.global_(base.src, name)
        if isinstance(base, Ext):  # `math.pi`, `np.pi`: a number; any other name stays external
            return _MATH_CONSTANTS.get(f"{base.path}.{name}", Ext(f"{base.path}.{name}"))
        if isinstance(base, Ref):
            if name in STR_METHODS:  # `args.mlp.split("-")`, `args.arch.startswith("wide")`: a string setting
                return ("method", self.concrete(base), name)
            return Ref(f"{base.src}.{name}")
        if isinstance(base, SuperRef):
            return ("super", base, name)
        if isinstance(base, (list, dict, str, float)):  # a float's `.item()`: calls.py
            return ("method", base, name)
        return Unknown(f"attribute {name} of {type(base).__name__}")

    def class_attr(self, cls: ClassRef, name: str) -> Any:
        for c in self.mro(cls):
            for st in c.node.body:
                if isinstance(st, ast.FunctionDef) and st.name == name:
                    return FuncRef(st, c.src, None, None, c)
                if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets):
                    return self.eval(st.value, {}, c.src)
        return None

    def mro(self, cls: ClassRef) -> list[ClassRef]:
        out = [cls]
        for b in cls.node.bases:
            try:  # a base the interpreter cannot follow (`Generic[T]` of an external type) ends that branch
                got = self.eval(b, {}, cls.src)
            except GiveUp:
                continue
            if isinstance(got, ClassRef):
                out.extend(self.mro(got))
        return out

    def is_module_class(self, cls: ClassRef) -> bool:
        for c in self.mro(cls):
            for b in c.node.bases:
                text = ast.unparse(b)
                if re.search(r"(^|\.)(Module|LightningModule|Sequential|ModuleList|ModuleDict)$", text):
                    return True
        return False

    def subscript(self, base: Any, sl: ast.expr, env: dict[str, Any], src: Source) -> Any:
        if shapes.shape_of(base) is not None:  # `pos[:, 1:, :]`
            return shapes.index(self, base, sl, env, src)
        if isinstance(sl, ast.Slice):
            bounds = [self.concrete(self.eval(x, env, src)) if x is not None else None
                      for x in (sl.lower, sl.upper, sl.step)]
            seq = self.concrete_seq(base)
            return seq[slice(*bounds)] if not isinstance(base, tuple) else tuple(seq[slice(*bounds)])
        key = self.concrete(self.eval(sl, env, src))
        if isinstance(base, LazyDict):  # a table of models: only the chosen entry is built
            for k, v in zip(base.node.keys, base.node.values, strict=True):
                if k is not None and self.concrete(self.eval(k, {}, base.src)) == key:
                    return self.eval(v, {}, base.src)
            raise GiveUp(f"{key!r} is not in the table")
        if isinstance(base, ModuleRef) and isinstance(key, str):  # `models.__dict__[args.arch]`
            return self.global_(base.src, key)
        if isinstance(base, Ref):
            return Ref(f"{base.src}[{key!r}]")
        if isinstance(base, Mod) and base.name in {"ModuleList", "Sequential"} and isinstance(key, int):
            base = base.children  # `self.layers[-1]`: one of a container's layers
        try:
            return base[key]
        except (TypeError, KeyError, IndexError) as e:
            raise GiveUp(f"subscript: {e}") from e

    def bind(self, target: ast.expr, value: Any, env: dict[str, Any], src: Source) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            vals = self.concrete_seq(value)
            if len(vals) != len(target.elts):
                raise GiveUp("unpacking mismatch")
            for t, v in zip(target.elts, vals, strict=True):
                self.bind(t, v, env, src)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, env, src)
            if isinstance(obj, Mod) and target.attr == "weight" and isinstance(value, Shared):
                if value.owner is not obj:  # tied: the parameter is counted once, with the layer it comes from
                    if obj.weight is None:
                        raise GiveUp("a weight tied to a layer whose weight size is unknown")
                    obj.own -= obj.weight
                    obj.weight = 0
                return
            if isinstance(obj, Mod):
                if isinstance(value, Unknown) and value.maybe_module:
                    raise GiveUp(f"self.{target.attr} is built by a call that cannot be followed ({value.why})")
                obj.attrs[target.attr] = value
        # subscript targets (`d[k] = v`) change no module structure we count

    # --- calls --------------------------------------------------------------------------------------
    def call_node(self, node: ast.Call, env: dict[str, Any], src: Source) -> Any:
        if isinstance(node.func, ast.Name) and node.func.id == "super" and "__class__" in env:
            return SuperRef(env["__class__"], env.get("self"))
        fn = self.eval(node.func, env, src)
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.concrete_seq(self.eval(a.value, env, src)))
            else:
                args.append(positional(self, a, env, src))  # a device the run picks: keywords.py

        kwargs = call_keywords(self, node.keywords, env, src)  # flags and `**section` (keywords.py)
        return self.call(fn, args, kwargs, f"{src.rel}:{node.lineno}")

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], where: str) -> Any:
        from schedmate.codeprof.static.modelsize.calls import call_value

        return call_value(self, fn, args, kwargs, where)

    def run_function(self, fn: FuncRef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise GiveUp("calls nested too deep")
        try:
            env: dict[str, Any] = dict(fn.closure or {})
            a = fn.node.args
            params = [p.arg for p in [*a.posonlyargs, *a.args]]
            given = ([fn.bound] if fn.bound is not None else []) + list(args)
            env.update(bind_parameters(a, given, kwargs, lambda d: self.eval(d, {}, fn.src), required(fn.node.name)))
            for p in [*params[len(given):], *(k.arg for k in a.kwonlyargs)]:
                kwargs.pop(p, None)  # what is left goes to **kwargs
            if a.vararg:
                env[a.vararg.arg] = tuple(given[len(params):])
            if a.kwarg:
                env[a.kwarg.arg] = dict(kwargs)
            if fn.owner is not None:
                env["__class__"] = fn.owner
            try:
                self.exec_body(fn.node.body, env, fn.src)
            except _Return as r:
                return r.value
            return None
        finally:
            self.depth -= 1

    def _cannot_register(self, call: ast.Call, env: dict[str, Any], src: Source) -> bool:
        """A call for its effect that cannot add modules: a method of the module being built whose body sets no
        `self.<attr>` and calls no `add_module`/`append`/`register_*` (weight initialisation, logging)."""
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in {"load_state_dict", "register_buffer"}:  # no parameter added
            return True
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
            return False
        obj = env.get("self")
        cls = obj.attrs.get("__class__") if isinstance(obj, Mod) else None
        got = self.class_attr(cls, f.attr) if isinstance(cls, ClassRef) else None
        return isinstance(got, FuncRef) and _registers_nothing(got.node)

    def exec_body(self, body: list[ast.stmt], env: dict[str, Any], src: Source) -> None:
        for st in body:
            self.exec_stmt(st, env, src)

    def exec_stmt(self, st: ast.stmt, env: dict[str, Any], src: Source) -> None:
        self.steps += 1
        if isinstance(st, ast.Assign):
            assign(self, st, env, src)  # values that cannot change the count do not stop it (inert.py)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.bind(st.target, self.eval(st.value, env, src), env, src)
        elif isinstance(st, ast.AugAssign):
            cur = self.eval(st.target, env, src) if not isinstance(st.target, ast.Subscript) else None
            if cur is None and isinstance(st.target, ast.Subscript):
                return
            inc = self.eval(st.value, env, src)
            if isinstance(cur, list) and isinstance(st.op, ast.Add):
                cur.extend(self.concrete_seq(inc))
                return
            if type(st.op) not in _BINOPS:
                raise GiveUp("augmented assignment")
            self.bind(st.target, _BINOPS[type(st.op)](self.concrete(cur), self.concrete(inc)), env, src)
        elif isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Call) and not self._cannot_register(st.value, env, src):
                self.eval(st.value, env, src)
        elif isinstance(st, ast.If):
            self.exec_body(st.body if self.concrete(self.eval(st.test, env, src)) else st.orelse, env, src)
        elif isinstance(st, ast.For):
            try:
                items = self.concrete_seq(self.eval(st.iter, env, src))
            except GiveUp:
                if _registers_nothing(st):
                    return  # `for m in self.modules(): nn.init...(m.weight)`: initialisation only
                raise
            for item in items:
                self.bind(st.target, item, env, src)
                try:
                    self.exec_body(st.body, env, src)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(st, ast.Return):
            raise _Return(self.eval(st.value, env, src) if st.value is not None else None)
        elif isinstance(st, ast.FunctionDef):
            env[st.name] = FuncRef(st, src, env)
        elif isinstance(st, ast.Break):
            raise _Break
        elif isinstance(st, ast.Continue):
            raise _Continue
        elif isinstance(st, ast.ImportFrom) and (target := self._module_file("." * st.level + (st.module or ""), src)):
            for a in st.names:  # `from ..data import datasets` inside a builder: bound like a module-level import
                if a.name != "*":
                    env[a.asname or a.name] = self.global_(target, a.name)
        elif isinstance(st, (ast.Pass, ast.Assert, ast.ImportFrom, ast.Global, ast.Nonlocal)):
            return
        else:
            from schedmate.codeprof.static.modelsize.pyfuncs import block_stmt  # imports this module
            block_stmt(self, st, env, src)  # `with`/`try` blocks, or give up
