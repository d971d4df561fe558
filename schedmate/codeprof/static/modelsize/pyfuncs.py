"""Two plain-Python tools model constructors use to pick their layers, read by the module-size interpreter.

- `isinstance(dim, tuple)` / `isinstance(heads, int)` over a value the interpreter knows exactly (a number, a
  string, a list, a tuple, a dict, None) or a module it built (against one of the job's classes or
  `nn.Module`) is settled as Python settles it; anything else stays unknown (the caller then gives up).
- `functools.partial(nn.LayerNorm, eps=1e-6)`, passed as a `norm_layer`, is a `Partial`: calling it calls
  the wrapped class or function with the stored arguments first, as Python does.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import ClassRef, Ext, FuncRef, Ref, Unknown

Interp = Any
"""The interpreter (`interp.Interp`), not imported: interp imports this module at load time."""

# the builtin types a settled isinstance may name, and what they are
_TYPES: dict[str, type | tuple[type, ...]] = {"builtins.int": int, "builtins.float": float, "builtins.str": str,
                                              "builtins.bool": bool, "builtins.list": list, "builtins.tuple": tuple,
                                              "builtins.dict": dict}
_PLAIN = (int, float, str, bool, list, tuple, dict, type(None))
_MODULE_BASE = ("torch.nn.Module", "nn.Module")
PARTIAL_PATHS = frozenset({"functools.partial"})
# string methods whose result depends only on the string and concrete arguments


class Steps(list):  # type: ignore[type-arg]
    """The values of `torch.linspace(a, b, n)`, to iterate or index; arithmetic on the tensor itself (`* 2`, `+ x`)
    is not list arithmetic, so it gives up."""

    def _no(self, *_: Any) -> Any:
        raise TypeError("arithmetic on a tensor of steps")

    __add__ = __radd__ = __mul__ = __rmul__ = __iadd__ = __imul__ = _no


@dataclass
class Partial:
    """`functools.partial(fn, *args, **kwargs)`: a callable with some arguments fixed."""

    fn: Any
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)


def make_partial(args: list[Any], kwargs: dict[str, Any]) -> Partial:
    if not args:
        raise GiveUp("functools.partial() without a callable")
    return Partial(args[0], list(args[1:]), dict(kwargs))


def call_partial(it: Interp, p: Partial, args: list[Any], kwargs: dict[str, Any], where: str) -> Any:
    return it.call(p.fn, [*p.args, *args], {**p.kwargs, **kwargs}, where)


def _one(it: Interp, value: Any, typ: Any) -> bool | None:
    """Whether `value` is an instance of `typ`; None when that is not settled."""
    if isinstance(value, Mod):
        if isinstance(typ, Ext) and typ.path in _MODULE_BASE:
            return not value.plain
        cls = value.attrs.get("__class__")
        if isinstance(typ, ClassRef) and isinstance(cls, ClassRef):
            return any(c.node is typ.node for c in it.mro(cls))
        return None
    if isinstance(typ, Ext) and typ.path in _TYPES and isinstance(value, _PLAIN):
        return isinstance(value, _TYPES[typ.path])
    if isinstance(typ, (ClassRef, Ext)) and isinstance(value, _PLAIN) and not isinstance(value, (list, tuple, dict)):
        if isinstance(typ, ClassRef) or typ.path.startswith(("torch.", "nn.")):
            return False  # a number, string or None is never one of the job's classes nor a torch type
    if isinstance(typ, ClassRef) and isinstance(value, (list, tuple, dict)) and closed_mro(it, typ) is not None:
        return False  # a job's class built only on its own classes and nn.Module is no list, tuple or dict
    return None


_ROOT_BASES = re.compile(r"^((torch\.)?nn\.)?Module$|^object$")


def closed_mro(it: Interp, cls: ClassRef) -> list[ClassRef] | None:
    """The class's MRO when every base is one of the job's classes, `nn.Module` or `object` and none answers
    attributes dynamically (`__getattr__`); None otherwise (an external base may add anything)."""
    mro = it.mro(cls)
    for c in mro:
        if any(isinstance(st, ast.FunctionDef) and st.name in {"__getattr__", "__getattribute__"} for st in c.node.body):
            return None
        for b in c.node.bases:
            try:
                got = it.eval(b, {}, c.src)
            except GiveUp:
                return None
            if not isinstance(got, ClassRef) and not _ROOT_BASES.match(ast.unparse(b)):
                return None
    return mro


# what every nn.Module has without setting it (its methods and the training flag)
_MODULE_MEMBERS = frozenset({"forward", "parameters", "named_parameters", "buffers", "children", "modules",
                             "named_modules", "training", "train", "eval", "to", "cuda", "cpu", "state_dict",
                             "load_state_dict", "apply", "register_buffer", "register_parameter", "add_module",
                             "zero_grad", "half", "float", "double", "requires_grad_"})


def has_attr(it: Interp, args: list[Any]) -> bool | Unknown:
    """`hasattr(obj, "name")` over a module the interpreter built (its attributes are all set once its constructor
    ran) or a plain value, as Python answers it; Unknown when not settled (an external base class)."""
    if len(args) != 2:
        return Unknown("hasattr with other than two arguments")
    obj, name = args[0], it.concrete(args[1])
    if not isinstance(name, str):
        return Unknown("hasattr of an unknown name")
    if isinstance(obj, _PLAIN) and not isinstance(obj, (list, tuple, dict)):
        return hasattr(obj, name)
    if not isinstance(obj, Mod):
        return Unknown("builtin hasattr")
    if name in obj.attrs:
        return True
    cls = obj.attrs.get("__class__")
    if not isinstance(cls, ClassRef) or (mro := closed_mro(it, cls)) is None:
        return Unknown("builtin hasattr")
    if any(isinstance(st, (ast.FunctionDef, ast.Assign, ast.AnnAssign)) and name in _defined(st)
           for c in mro for st in c.node.body):
        return True
    return (not obj.plain and name in _MODULE_MEMBERS) or False


def _defined(st: ast.stmt) -> set[str]:
    if isinstance(st, ast.FunctionDef):
        return {st.name}
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]  # type: ignore[attr-defined]
    return {t.id for t in targets if isinstance(t, ast.Name)}


def is_callable(value: Any) -> bool | Unknown:
    """`callable(x)` (the `default(value, factory)` idiom): functions, classes, partials and modules are; numbers,
    strings, None and containers are not; anything else is not settled."""
    if isinstance(value, (ClassRef, FuncRef, Partial)) or (isinstance(value, Mod) and not value.plain):
        return True
    if isinstance(value, _PLAIN):
        return False
    return Unknown("builtin callable")


def is_instance(it: Interp, args: list[Any]) -> bool | Unknown:
    """`isinstance(value, T)` or `isinstance(value, (T1, T2))`, or Unknown when not settled."""
    if len(args) != 2:
        return Unknown("isinstance with other than two arguments")
    value, types = args
    if isinstance(value, Ref):
        ok, got, ev = it.resolve(value.src)
        if not ok:
            return Unknown(f"{value.src} is not known before the run")
        it.evidence.extend(ev)
        value = got
    options = list(types) if isinstance(types, (tuple, list)) else [types]
    answers = [_one(it, value, t) for t in options]
    if any(a is True for a in answers):
        return True
    if all(a is False for a in answers):
        return False
    return Unknown("builtin isinstance")


def str_method(it: Interp, base: str, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`"8192-8192".split("-")`, `arch.startswith("wide")`, `"{}_{}".format(a, b)` over concrete values."""
    vals = [it.concrete(a) for a in args]
    kw = {k: it.concrete(v) for k, v in kwargs.items()}
    if name == "startswith" or name == "endswith":
        if not vals or not isinstance(vals[0], (str, tuple)):
            raise GiveUp(f"str.{name} of something unknown")
        vals[0] = tuple(vals[0]) if isinstance(vals[0], (list, tuple)) else vals[0]
    try:
        return getattr(base, name)(*vals, **kw)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError) as e:
        raise GiveUp(f"str.{name}(): {e}") from e


def other_expression(it: Any, node: Any, env: dict[str, Any], src: Any) -> Any:
    """An f-string of known values (`f"layer_{i + 1}"`, a name for `setattr`); a lambda is opaque but keeps its body
    (flax_params.py reads a `self.param` initialiser's); any other expression is opaque."""
    import ast

    if isinstance(node, ast.Lambda):
        from schedmate.codeprof.static.modelsize.flax_params import lambda_ref

        return lambda_ref(node, env, src)
    if not isinstance(node, ast.JoinedStr):
        return Unknown(f"{type(node).__name__} expression")
    out = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            out.append(str(v.value))
            continue
        x = it.concrete(it.eval(v.value, env, src))  # type: ignore[union-attr]
        x = repr(x) if v.conversion == ord("r") else str(x) if v.conversion == ord("s") else x  # type: ignore[union-attr]
        spec = it.concrete(other_expression(it, v.format_spec, env, src)) if v.format_spec else ""  # type: ignore[union-attr]
        out.append(format(x, spec))
    return "".join(out)


def block_stmt(it: Interp, st: Any, env: dict[str, Any], src: Any) -> None:
    """`with ctx as x:` runs its body (a context manager adds no layer; `x` is unknown); `try:` runs its body,
    then `else` and `finally`, as a run that raises nothing does (a body the interpreter cannot follow gives up,
    so an `except` branch is never needed for the count). Any other statement gives up."""
    import ast

    if isinstance(st, ast.With):
        for item in st.items:
            if item.optional_vars is not None:
                it.bind(item.optional_vars, Unknown("a context manager's value"), env, src)
        it.exec_body(st.body, env, src)
    elif isinstance(st, ast.Try):
        it.exec_body([*st.body, *st.orelse, *st.finalbody], env, src)
    elif isinstance(st, ast.Import):  # `import math` inside a method: bound as at module level
        from schedmate.codeprof.static.modelsize.values import Ext, ModuleRef

        for a in st.names:
            name = a.asname or a.name.split(".")[0]
            path = a.name if a.asname else name
            target = it._module_file(path, src)
            env[name] = ModuleRef(target) if target is not None else Ext(path)
    else:
        raise GiveUp(f"{type(st).__name__} statement at {src.rel}:{st.lineno}")
