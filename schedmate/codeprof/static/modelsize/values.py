"""Values of the module-size interpreter: references to the job's files, classes, functions and external
names, opaque values, and tensors (see interp.py)."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_STEPS = 200_000
MAX_DEPTH = 60
# external calls that build nothing with parameters: metrics, losses, criteria
_PARAM_FREE_EXT = re.compile(r"(Loss|Accuracy|Metric|F1Score|Precision|Recall|AUROC|MeanSquaredError|Criterion|"
                             r"MetricCollection|ConfusionMatrix)$")
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Mod: operator.mod,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,  # `n & (n - 1) == 0`: a power of 2
    ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
_CMPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_SAME_MODULE = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval", "apply",
                "requires_grad_", "share_memory"}


@dataclass
class Ref:
    src: str


@dataclass
class Ext:
    path: str


@dataclass
class Unknown:
    why: str
    maybe_module: bool = False


@dataclass
class Tensor:
    numel: int
    shape: tuple[int, ...] | None = None  # when the constructor built it from known sizes (shapes.py)


@dataclass
class Source:
    """One parsed file: its top-level definitions, assignments and imports."""

    rel: str
    tree: ast.Module
    entry: bool
    defs: dict[str, ast.AST] = field(default_factory=dict)
    assigns: dict[str, ast.expr] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (module, attr)
    stars: list[str] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict)


@dataclass
class ClassRef:
    node: ast.ClassDef
    src: Source


@dataclass
class FuncRef:
    node: ast.FunctionDef
    src: Source
    closure: dict[str, Any] | None = None
    bound: Any = None
    owner: ClassRef | None = None


@dataclass
class ModuleRef:
    src: Source


@dataclass
class LazyDict:
    node: ast.Dict
    src: Source


@dataclass
class SuperRef:
    cls: ClassRef
    obj: Any


@dataclass
class Shared:
    """`other.weight` read to tie it to another layer (`self.wte.weight = self.lm_head.weight`)."""

    owner: Any


def _registers_nothing(node: ast.AST) -> bool:
    """Whether code sets no attribute and calls nothing that adds a module (`add_module`, `append`, ...)."""
    for n in ast.walk(node):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Attribute) for t in targets):
                return False
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and re.match(
                r"add_module|register_|append|extend|insert|setattr|update", n.func.attr):
            return False
    return True


# numbers external modules define, read where a module's constructor computes with them (`scale = 2 * math.pi`)
_MATH_CONSTANTS = {f"{m}.{c}": v for m in ("math", "numpy", "torch")
                   for c, v in (("pi", math.pi), ("e", math.e))}
_BUILTINS = {"int", "float", "len", "range", "list", "tuple", "max", "min", "sum", "abs", "round", "bool", "dict",
             "zip", "enumerate", "reversed", "sorted", "getattr", "isinstance", "super", "str", "print", "hasattr",
             "setattr", "map", "callable"}

# string methods the interpreter evaluates over known strings (`args.mlp.split("-")`, `name.startswith("vit")`)
STR_METHODS = frozenset({"split", "strip", "lower", "upper", "replace", "startswith", "endswith", "format", "join",
                         "isdigit", "rstrip", "lstrip"})
