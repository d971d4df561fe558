"""Keras functional models: `x = layers.Conv2D(64, 3)(inputs)`, `concatenate([a, b])`, `Model(inputs, outputs)`,
counted by carrying the tensor shape through every layer call and keeping, on each tensor, the layers it was
computed through. The model's size is the sum over the layers on the way to its outputs: a layer built but
not on that path (an encoder's last block the decoder never reads) is not counted, a layer called twice (a
shared layer) counts once.

    inputs = Input((256, 256, 1))            -> a KLayer "Input", read as a KTensor where a tensor is expected
    Conv2D(64, 3, padding="same")(inputs)    -> KTensor((256, 256, 64), {id(layer): (layer, 640)})
    Model(inputs=inputs, outputs=x)          -> Mod("Model", sum of the output's layers)

Channels-last only (a `data_format="channels_first"` layer gives up); trainable weights, as keras_layers.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.static.modelsize.keras_layers import KERAS_PATH, KLayer, apply
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import Ext, Unknown

# merge layers (class form) and their functional spellings
MERGES = {"Concatenate": "concatenate", "Add": "add", "Multiply": "multiply", "Average": "average",
          "Maximum": "maximum", "Minimum": "minimum", "Subtract": "subtract"}
MERGE_FUNCS = set(MERGES.values())


@dataclass(eq=False)
class KTensor:
    """A symbolic Keras tensor: its shape (batch left out) and the layers it was computed through."""

    shape: tuple[int, ...]
    # id(layer) -> (layer, its parameters); the layer is held so that its id is not reused by a later one
    layers: dict[int, tuple[KLayer, int]] = field(default_factory=dict)


def star_external(module: str, name: str) -> Any:
    """`from keras.layers import *`: a capitalised name (or a merge function) from an external Keras module."""
    keras = KERAS_PATH.search(f"{module}.") or module.split(".")[0] == "keras"
    if keras and (name[:1].isupper() or name in MERGE_FUNCS):
        return Ext(f"{module}.{name}")
    return Unknown(f"name {name} not found")


def tensor(v: Any) -> KTensor:
    if isinstance(v, KTensor):
        return v
    if isinstance(v, KLayer) and v.name in {"Input", "InputLayer"}:
        shape = v.kwargs.get("shape", v.kwargs.get("input_shape", v.args[0] if v.args else None))
        if not isinstance(shape, (list, tuple)) or not shape or not all(
                isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
            raise GiveUp(f"keras Input of unknown shape ({shape!r})")
        return KTensor(tuple(shape))
    raise GiveUp("a Keras layer called on something that is not a Keras tensor")


def _union(tensors: list[KTensor]) -> dict[int, tuple[KLayer, int]]:
    out: dict[int, tuple[KLayer, int]] = {}
    for t in tensors:
        out.update(t.layers)
    return out


def merge(name: str, inputs: Any, axis: Any = -1) -> KTensor:
    """`concatenate([a, b], axis=-1)` and the element-wise merges (`add`, `multiply`, ...)."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise GiveUp(f"keras {name} of something that is not a list of tensors")
    ts = [tensor(v) for v in inputs]
    if name.lower() != "concatenate":
        if len({t.shape for t in ts}) != 1:
            raise GiveUp(f"keras {name} of tensors with different shapes")
        return KTensor(ts[0].shape, _union(ts))
    rank = len(ts[0].shape)
    if not isinstance(axis, int) or not -rank - 1 <= axis <= rank or axis == 0 or any(
            len(t.shape) != rank for t in ts):
        raise GiveUp("keras concatenate on an axis that is not read here")
    ax = axis - 1 if axis > 0 else rank + axis  # Keras counts the batch dimension
    rest = {t.shape[:ax] + t.shape[ax + 1:] for t in ts}
    if len(rest) != 1:
        raise GiveUp("keras concatenate of tensors whose other dimensions differ")
    shape = list(ts[0].shape)
    shape[ax] = sum(t.shape[ax] for t in ts)
    return KTensor(tuple(shape), _union(ts))


def _ints(v: Any, n: int, what: str) -> tuple[int, ...]:
    vals = tuple(v) if isinstance(v, (list, tuple)) else (v,) * n
    if len(vals) != n or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in vals):
        raise GiveUp(f"keras {what} not a known integer ({v!r})")
    return vals


def _apply_more(layer: KLayer, shape: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """Shape-only layers and transposed convolutions not in keras_layers.apply; the rest goes there."""
    name, n = layer.name, len(shape) - 1
    if name.startswith("UpSampling") and name[-2:-1].isdigit():
        size = _ints(layer.arg(0, "size", 2), n, "size")
        return 0, (*(d * s for d, s in zip(shape[:-1], size, strict=True)), shape[-1])
    if name.startswith("ZeroPadding") and name[-2:-1].isdigit():
        pad = layer.arg(0, "padding", 1)
        pairs = [p if isinstance(p, (list, tuple)) else (p, p) for p in (pad if isinstance(pad, (list, tuple))
                                                                            else (pad,) * n)]
        if len(pairs) != n:
            raise GiveUp("keras ZeroPadding of an unread padding")
        return 0, (*(d + sum(_ints(p, 2, "padding")) for d, p in zip(shape[:-1], pairs, strict=True)), shape[-1])
    if name in {"Conv2DTranspose", "Conv1DTranspose", "Conv3DTranspose", "Deconvolution2D"}:
        filters = layer.arg(0, "filters")
        k = _ints(layer.arg(1, "kernel_size"), n, "kernel_size")
        s = _ints(layer.arg(2, "strides", 1), n, "strides")
        if not isinstance(filters, int) or filters <= 0:
            raise GiveUp("keras transposed convolution of unknown filters")
        same = str(layer.arg(3, "padding", "valid")).lower() == "same"
        params = math.prod(k) * shape[-1] * filters + (filters if layer.kwargs.get("use_bias", True) is not False else 0)
        out = (d * ss if same else (d - 1) * ss + kk for d, kk, ss in zip(shape[:-1], k, s, strict=True))
        return params, (*out, filters)
    return apply(layer, shape)


def call_layer(layer: KLayer, args: list[Any], kwargs: dict[str, Any]) -> KTensor:
    """`layer(x)` (or `layer([a, b])` for a merge layer): the output tensor."""
    x = args[0] if args else kwargs.get("inputs")
    if str(layer.kwargs.get("data_format", "channels_last")).lower() == "channels_first":
        raise GiveUp("keras channels_first layers are not followed")
    if layer.name in MERGES:
        return merge(layer.name, x, layer.kwargs.get("axis", -1))
    t = tensor(x)
    n, shape = _apply_more(layer, t.shape)
    return KTensor(shape, {**t.layers, id(layer): (layer, n)})


def functional_model(args: list[Any], kwargs: dict[str, Any]) -> Mod:
    """`Model(inputs, outputs)` (also the Keras 1 spellings `input=` / `output=`)."""
    out = kwargs.get("outputs", kwargs.get("output", args[1] if len(args) > 1 else None))
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if not outs or not all(isinstance(o, KTensor) for o in outs):
        raise GiveUp("a functional Keras model whose outputs were not followed")
    return Mod("Model", sum(n for _, n in _union(outs).values()))


__all__ = ["MERGES", "MERGE_FUNCS", "KTensor", "call_layer", "functional_model", "merge", "star_external"]
