"""TF1 graphs built in functions and class methods: `net = tf.layers.dense(s, 500)` in an agent's `_build_net`,
`W = weight_variable([8, 8, 4, 32])` in a `createNetwork()` helper, `slim.conv2d(x, 64, [3, 3])`, counted by
running the builder the entry script calls through the interpreter with symbolic tensors that carry their
feature width (the last dimension), so that a layer's input width comes from the tensor it is applied to.

    s = tf.placeholder(tf.float32, [None, 24])       -> TTensor(24)
    tf.layers.dense(s, 500)                          -> 24 * 500 + 500 counted, TTensor(500)
    tf.get_variable("w", [500, 20], trainable=False) -> not counted (a target network's copy)

A statement that fails to evaluate is skipped when it builds no weights (an optimizer, a summary, a target
update); one that builds weights and cannot be valued makes the whole count None.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.static.modelsize.interp import Interp
from schedmate.codeprof.static.modelsize.keras_layers import KLayer
from schedmate.codeprof.static.modelsize.layers import GiveUp
from schedmate.codeprof.static.modelsize.tf_layers import TFShaped, layer_on_shape, layer_on_width, shaped, tf_functional
from schedmate.codeprof.static.modelsize.values import ClassRef, Ext, FuncRef, Ref, Source, Unknown

# calls that create weights (the builders a job's graph function is made of)
_BUILDS = re.compile(r"\b(layers\.dense|layers\.conv[123]d|get_variable|tf\.Variable|slim\.(conv2d|fully_connected)|"
                     r"layers\.fully_connected|layers\.conv2d_transpose|keras\.layers\.[A-Z]\w*)\s*\(")
_ELEMENTWISE = {"relu", "relu6", "elu", "selu", "tanh", "sigmoid", "softmax", "log_softmax", "dropout", "max_pool",
                "avg_pool", "max_pool2d", "avg_pool2d", "leaky_relu", "softplus", "identity", "stop_gradient",
                "batch_normalization", "lrn", "add", "multiply", "square", "abs", "clip_by_value", "bias_add"}
_INITS = {"truncated_normal", "random_normal", "random_uniform", "zeros", "ones", "constant", "fill"}
_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)


@dataclass(eq=False)
class TTensor:
    """A symbolic TF tensor: its last dimension when known. Arithmetic keeps it (a bias, a sum of branches)."""

    width: int | None

    def _same(self, other: Any) -> TTensor:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same


@dataclass(eq=False)
class TInit:
    """An initial value of a known shape (`tf.truncated_normal(shape, stddev=0.01)`)."""

    shape: tuple[int, ...]


@dataclass
class TFGraph:
    total: int = 0
    where: list[str] = field(default_factory=list)
    builders: set[str] = field(default_factory=set)  # names of the job's functions and classes that create weights
    muted: bool = False  # valuing the locals before a call site: weights built there are not this count's
    keras_called: list[Any] = field(default_factory=list)  # Keras layers already applied (a shared layer counts once)

    def builds(self, text: str) -> bool:
        return bool(_BUILDS.search(text)) or any(re.search(rf"\b{re.escape(b)}\s*\(", text) for b in self.builders)


def _find_builders(tree: ast.Module) -> set[str]:
    """Functions and classes that create weights, directly or through another such function (`createNetwork`
    calling `weight_variable`)."""
    defs = [(d.name, ast.unparse(d)) for d in ast.walk(tree) if isinstance(d, (ast.FunctionDef, ast.ClassDef))]
    found: set[str] = set()
    while True:
        g = TFGraph(builders=found)
        more = {name for name, text in defs if name not in found and not name.startswith("__") and g.builds(text)}
        if not more:
            return found
        found |= more


def _dims(it: Interp, v: Any, what: str) -> tuple[int, ...]:
    v = it.concrete(v)
    dims = tuple(it.concrete(d) for d in v) if isinstance(v, (list, tuple)) else (v,)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise GiveUp(f"TF {what} of an unknown shape ({v!r})")
    return dims


def _width(x: Any, what: str) -> int:
    if isinstance(x, TTensor) and x.width is not None:
        return x.width
    if isinstance(x, TFShaped):
        return x.shape[-1]
    raise GiveUp(f"TF {what} applied to a tensor of unknown width")


def _trainable(it: Interp, kwargs: dict[str, Any]) -> bool:
    t = kwargs.get("trainable", True)
    try:
        return it.concrete(t) is not False
    except GiveUp:
        raise GiveUp("TF weights whose trainable flag is not known") from None


def _arg(args: list[Any], kwargs: dict[str, Any], i: int, *names: str) -> Any:
    for n in names:
        if n in kwargs:
            return kwargs[n]
    return args[i] if i < len(args) else None


def external(it: Interp, g: TFGraph, path: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A `tensorflow.*` call during a traced builder; None when it is not one this module reads."""
    parts = path.split(".")
    last = parts[-1]
    nn = "nn" in parts[:-1]
    if last == "placeholder":
        shape = _arg(args, kwargs, 1, "shape")
        try:
            dims = it.concrete(shape)
            w = dims[-1] if isinstance(dims, (list, tuple)) and dims else None
            return TTensor(w if isinstance(w, int) and not isinstance(w, bool) and w > 0 else None)
        except GiveUp:
            return TTensor(None)
    if last in _INITS and not nn:
        shape = _arg(args, kwargs, 1 if last in {"constant", "fill"} else 0, "shape", "dims")
        try:
            return TInit(_dims(it, shape, last))
        except GiveUp:
            return Unknown(f"tf.{last} of an unknown shape")
    x = _arg(args, kwargs, 0, "inputs")
    if isinstance(x, TFShaped) and not nn and _trainable(it, kwargs):  # tf.layers on a tensor of known shape
        got = tf_functional(last, x, [it.concrete(a) for a in args], {k: it.concrete(v) for k, v in kwargs.items()})
        if got is not None:
            g.total += 0 if g.muted else got[0]
            return got[1]
    if last == "flatten":
        return TTensor(None)
    if last == "one_hot":  # indices -> vectors of `depth`
        depth = it.concrete(_arg(args, kwargs, 1, "depth"))
        return TTensor(depth if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0 else None)
    n, out = 0, None
    if last in {"get_variable", "Variable", "dense", "fully_connected", "conv1d", "conv2d", "conv3d",
                "conv2d_transpose"} and not nn and not _trainable(it, kwargs):
        return TTensor(None)  # a step counter, a target network's copy: not trained
    if last in {"get_variable", "Variable"}:
        if last == "get_variable":
            shape = _dims(it, _arg(args, kwargs, 1, "shape"), "variable")
        else:
            init = _arg(args, kwargs, 0, "initial_value")
            if not isinstance(init, TInit):
                raise GiveUp("tf.Variable from a value whose shape is not read")
            shape = init.shape
        n, out = math.prod(shape), TTensor(shape[-1])
    elif last in {"dense", "fully_connected"}:
        units = _dims(it, _arg(args, kwargs, 1, "units", "num_outputs"), "dense units")[0]
        n, out = _width(_arg(args, kwargs, 0, "inputs"), "dense") * units + units, TTensor(units)
    elif last in {"conv1d", "conv2d", "conv3d", "conv2d_transpose"} and not nn:
        f = _dims(it, _arg(args, kwargs, 1, "filters", "num_outputs"), "conv filters")[0]
        k = _dims(it, _arg(args, kwargs, 2, "kernel_size"), "kernel size")
        rank = int(last[4]) if last[4].isdigit() else 2
        k = k * rank if len(k) == 1 else k
        n, out = math.prod(k) * _width(_arg(args, kwargs, 0, "inputs"), last) * f + f, TTensor(f)
    elif last in {"matmul", "conv2d", "conv1d", "conv3d"}:  # tf.nn.conv2d(x, W, ...): the width of W
        w = _arg(args, kwargs, 1, "b", "filters", "filter")
        return TTensor(w.width if isinstance(w, TTensor) else None)
    elif last == "reshape":
        try:
            dims = it.concrete(_arg(args, kwargs, 1, "shape"))
            dims = [it.concrete(d) for d in dims] if isinstance(dims, (list, tuple)) else dims
            w = dims[-1] if isinstance(dims, (list, tuple)) and dims else None
        except GiveUp:
            dims, w = None, None
        if (full := shaped(dims)) is not None:  # an image batch `[-1, 28, 28, 1]`: its spatial sizes are kept
            return full
        return TTensor(w if isinstance(w, int) and w > 0 else None)
    elif last in _ELEMENTWISE and args and isinstance(args[0], (TTensor, TFShaped)):
        return args[0]
    else:
        return None
    if _trainable(it, kwargs) and not g.muted:
        g.total += n
    return out


class _TFInterp(Interp):
    """The interpreter with `with` blocks entered and weight-free statements allowed to fail."""

    def exec_stmt(self, st: ast.stmt, env: dict[str, Any], src: Source) -> None:
        if isinstance(st, ast.With):
            g: TFGraph = self.tf_graph  # type: ignore[attr-defined]
            muted, reused = g.muted, False
            for item in st.items:
                if item.optional_vars is not None and isinstance(item.optional_vars, ast.Name):
                    env[item.optional_vars.id] = Unknown("a context manager")
                reused = reused or self._reuses(item.context_expr, env, src)
            g.muted = muted or reused  # `variable_scope(..., reuse=True)` looks up the variables made before
            try:
                self.exec_body(st.body, env, src)
            finally:
                g.muted = muted
            return
        try:
            super().exec_stmt(st, env, src)
        except _ERRORS:
            if self.tf_graph.builds(ast.unparse(st)):  # type: ignore[attr-defined]
                raise
            for t in getattr(st, "targets", []):
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        env[n.id] = Unknown("a statement that could not be valued")


    def _reuses(self, ctx: ast.expr, env: dict[str, Any], src: Source) -> bool:
        if not (isinstance(ctx, ast.Call) and ast.unparse(ctx.func).endswith("variable_scope")):
            return False
        for k in ctx.keywords:
            if k.arg == "reuse":
                try:
                    return self.concrete(self.eval(k.value, dict(env), src)) is True
                except _ERRORS:
                    raise GiveUp("a variable scope whose reuse is not known") from None
        return False

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], where: str) -> Any:
        x = args[0] if args else kwargs.get("inputs")
        if not isinstance(fn, KLayer) or not isinstance(x, (TTensor, TFShaped)):
            return super().call(fn, args, kwargs, where)
        # a Keras layer applied to a graph tensor: its weights are made at this first call (tf_layers.py)
        g: TFGraph = self.tf_graph  # type: ignore[attr-defined]
        if isinstance(x, TFShaped):
            n, out = layer_on_shape(fn, x)
        else:
            n, w = layer_on_width(fn, _width(x, fn.name))
            out = TTensor(w)
        if not any(f is fn for f in g.keras_called):
            g.keras_called.append(fn)
            g.total += 0 if g.muted else n
        return out


_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")


def _estimator_model_fn(it: Interp, g: TFGraph, src: Source, call: ast.Call, env: dict[str, Any]) -> Any:
    """`tf.estimator.Estimator(model_fn=fn, ...)`: the graph builder the estimator calls with the input batch;
    None when the call is not one, or its model function creates no weights."""
    try:
        est = it.eval(call.func, dict(env), src)
    except _ERRORS:
        return None
    if not (isinstance(est, Ext) and est.path.split(".")[-1] in {"Estimator", "TPUEstimator"}):
        return None
    node = next((k.value for k in call.keywords if k.arg == "model_fn"), call.args[0] if call.args else None)
    fn = it.eval(node, dict(env), src) if node is not None else None
    if not isinstance(fn, FuncRef) or not (fn.node.name in g.builders or g.builds(ast.unparse(fn.node))):
        return None
    names = {a.arg for a in [*fn.node.args.args, *fn.node.args.kwonlyargs]}
    # the batch and the mode are only known at run time: a reference that any subscript or attribute keeps
    given = {n: ({} if n == "params" else Ref(f"estimator {n}")) for n in _MODEL_FN_ARGS if n in names}
    return lambda: it.call(fn, [], given, f"{src.rel}:{call.lineno}")


def _builds_graph(it: Interp, g: TFGraph, src: Source, call: ast.Call) -> bool:
    try:
        fn = it.eval(call.func, {}, src)
    except _ERRORS:
        return False
    if isinstance(fn, (ClassRef, FuncRef)):
        return fn.node.name in g.builders or g.builds(ast.unparse(fn.node))
    return False


def count_tf_graph(read_text: Callable[[str], str | None], import_file: Callable[[str, str], str | None],
                   resolve: Callable[[str], tuple[bool, Any, list[str]]], entry: str) -> tuple[int, list[str]] | None:
    """The weights the graph builders the entry script calls create (see the module docstring)."""
    from schedmate.codeprof.static.modelsize import _method_env

    it = _TFInterp(read_text, import_file, resolve)
    it.tf_graph = g = TFGraph()  # type: ignore[attr-defined]
    src = it.source(entry, entry=True)
    if src is None:
        return None
    for block in src.tree.body:  # `with tf.name_scope("S"): S = tf.placeholder(...)` at module level always runs
        if isinstance(block, ast.With):
            for st in block.body:
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    src.assigns.setdefault(st.targets[0].id, st.value)
    g.builders = _find_builders(src.tree)
    inside = {id(n) for d in ast.walk(src.tree) if isinstance(d, (ast.FunctionDef, ast.ClassDef))
              and d.name in g.builders for n in ast.walk(d) if n is not d}
    for st in ast.walk(src.tree):
        if not isinstance(st, (ast.Assign, ast.Expr)) or not isinstance(st.value, ast.Call) or id(st) in inside:
            continue
        it.steps, it.evidence = 0, []
        if not _builds_graph(it, g, src, st.value):
            if not ast.unparse(st.value.func).endswith("Estimator"):
                continue
            try:
                g.muted = True
                env = _method_env(it, src, st) if isinstance(st, ast.Assign) else {}
                g.muted = False
                run = _estimator_model_fn(it, g, src, st.value, env)
                if run is not None:
                    run()
                    g.where.append(f"{entry}:{st.lineno}")
            except _ERRORS:
                return None
            continue
        try:
            target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None
            if isinstance(target, ast.Name) and st in src.tree.body and src.assigns.get(target.id) is st.value:
                it.global_(src, target.id)  # module level: later references (`actor.a`) reuse the same object
            else:
                g.muted = True
                env = _method_env(it, src, st) if isinstance(st, ast.Assign) else {}
                g.muted = False
                it.eval(st.value, env, src)
        except _ERRORS:
            return None
        g.where.append(f"{entry}:{st.lineno}")
    return (g.total, g.where) if g.total > 0 else None


__all__ = ["TFGraph", "TInit", "TTensor", "count_tf_graph", "external"]
