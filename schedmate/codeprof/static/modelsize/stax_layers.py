"""JAX stax models: `init_fn, apply_fn = stax.serial(stax.Conv(16, (8, 8), strides=(2, 2)), stax.Relu,
stax.MaxPool((2, 2)), stax.Flatten, stax.Dense(10))` in the entry script, sized when the script calls
`init_fn(rng, (-1, 28, 28, 1))` with a known input shape (stax infers every weight's shape from it).

Each stax layer is sized as the Keras layer of the same meaning (keras_layers.py), with stax's own defaults:
NHWC convolutions with `VALID` padding and unit strides, and pools whose strides default to one (not to the
window). Any layer not listed here (a `parallel`, a `FanOut`, a nested `serial`) leaves the count None.

    count_stax(read_text, import_file, resolve, "train.py") -> (params, evidence) | None
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.interp import Interp
from schedmate.codeprof.static.modelsize.keras_graph import _apply_more
from schedmate.codeprof.static.modelsize.keras_layers import KLayer
from schedmate.codeprof.static.modelsize.layers import GiveUp

_ERRORS = (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError)
# stax layers without weights that keep the shape (activations are values, not calls)
_FREE = {"Relu", "Elu", "Gelu", "Tanh", "Sigmoid", "Softplus", "LogSoftmax", "Softmax", "Identity", "Exp",
         "Dropout", "LeakyRelu", "Selu"}
_POOLS = {"MaxPool": "MaxPooling2D", "AvgPool": "AveragePooling2D", "SumPool": "AveragePooling2D"}


def _stax_names(tree: ast.Module) -> dict[str, str]:
    """Names the script binds to stax or to its members, by its imports (read from the text: in jax's own
    repository stax is a local file, elsewhere an installed package), -> dotted path."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if a.name == "stax" or node.module.endswith(".stax") or node.module == "stax":
                    out[a.asname or a.name] = full
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.endswith(".stax") and a.asname:
                    out[a.asname] = a.name
    return out


def _stax_path(names: dict[str, str], node: ast.expr) -> str | None:
    text = ast.unparse(node)
    head, _, rest = text.partition(".")
    if head in names:
        path = f"{names[head]}.{rest}" if rest else names[head]
        return path if ".stax." in f".{path}" else None
    return None


def _layer(it: Interp, names: dict[str, str], node: ast.expr, src: Any) -> KLayer:
    """The Keras equivalent of one stax layer expression."""
    call = node if isinstance(node, ast.Call) else None
    path = _stax_path(names, call.func if call else node)
    if path is None:
        raise GiveUp(f"stax layer {ast.unparse(node)} not read")
    name = path.rsplit(".", 1)[-1]
    args = [it.concrete(it.eval(a, {}, src)) for a in call.args] if call else []
    kw = {k.arg: it.concrete(it.eval(k.value, {}, src)) for k in call.keywords if k.arg} if call else {}
    if name in _FREE:
        return KLayer("Activation")
    if name == "Flatten" and call is None:
        return KLayer("Flatten")
    if name == "Dense" and call is not None:
        return KLayer("Dense", args[:1], {"units": kw["out_dim"]} if "out_dim" in kw else {})
    if name == "Conv" and call is not None:
        filters = kw.get("out_chan", args[0] if args else None)
        kernel = kw.get("filter_shape", args[1] if len(args) > 1 else None)
        strides = kw.get("strides", args[2] if len(args) > 2 else None)
        padding = kw.get("padding", args[3] if len(args) > 3 else "VALID")
        return KLayer("Conv2D", [filters, kernel, strides or 1, padding])
    if name in _POOLS and call is not None:
        window = kw.get("window_shape", args[0] if args else None)
        strides = kw.get("strides", args[1] if len(args) > 1 else None)
        padding = kw.get("padding", args[2] if len(args) > 2 else "VALID")
        return KLayer(_POOLS[name], [window, strides or 1, padding])
    if name == "BatchNorm":
        return KLayer("BatchNormalization")
    raise GiveUp(f"stax layer {name} has no formula here")


def _input_shape(it: Interp, tree: ast.Module, init_name: str, src: Any) -> tuple[int, ...]:
    """The shape after the batch dimension given to the first call of the init function."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == init_name \
                and len(node.args) >= 2:
            shape = it.concrete(it.eval(node.args[1], {}, src))
            if isinstance(shape, (list, tuple)) and len(shape) >= 2 and all(
                    isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape[1:]):
                return tuple(shape[1:])
            raise GiveUp("stax init called with an input shape not known")
    raise GiveUp("stax init never called with an input shape")


def count_stax(read_text: Callable[[str], str | None], import_file: Callable[[str, str], str | None],
               resolve: Callable[[str], tuple[bool, Any, list[str]]], entry: str) -> tuple[int, list[str]] | None:
    it = Interp(read_text, import_file, resolve)
    src = it.source(entry, entry=True)
    if src is None:
        return None
    found: list[tuple[int, str]] = []
    names = _stax_names(src.tree)
    for st in ast.walk(src.tree):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple)
                and st.targets[0].elts and isinstance(st.targets[0].elts[0], ast.Name)
                and isinstance(st.value, ast.Call)):
            continue
        path = _stax_path(names, st.value.func)
        if path is None or not path.endswith(".serial"):
            continue
        try:
            shape = _input_shape(it, src.tree, st.targets[0].elts[0].id, src)
            total = 0
            for node in st.value.args:
                n, shape = _apply_more(_layer(it, names, node, src), shape)
                total += n
        except _ERRORS:
            return None  # a stax model that cannot be sized: no partial count
        found.append((total, f"{entry}:{st.lineno}"))
    if len({n for n, _ in found}) != 1:
        return None  # none, or several models of different sizes: which one trains is not settled here
    return found[0][0], [w for _, w in found]


__all__ = ["count_stax"]
