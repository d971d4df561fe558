"""Keras models written as a layer list: `keras.Sequential([keras.Input(shape=(28, 28, 1)), layers.Conv2D(32, 3),
layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(10)])` counted by carrying the tensor shape through the
layers (a Keras layer knows only its output width; its input width is the previous layer's output).

    KLayer("Dense", [10], {})                       what the interpreter returns for `layers.Dense(10)`
    sequential_params([KLayer(...), ...]) -> int    GiveUp when a layer or a shape is unknown

Trainable weights are counted (a BatchNormalization's moving statistics are not), as `model.summary()` lists
them under "Trainable params".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp

KERAS_PATH = re.compile(r"(^|\.)keras\.")
_FREE = re.compile(r"^(Dropout|SpatialDropout[123]D|GaussianNoise|GaussianDropout|Activation|ReLU|LeakyReLU|"
                   r"Softmax|ELU|Rescaling|Normalization|Random\w+|Resizing|CenterCrop|ActivityRegularization|"
                   r"Masking|AlphaDropout)$")


@dataclass
class KLayer:
    name: str
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)

    def arg(self, i: int, name: str, default: Any = GiveUp) -> Any:
        if name in self.kwargs:
            return self.kwargs[name]
        if i < len(self.args):
            return self.args[i]
        if default is GiveUp:
            raise GiveUp(f"keras {self.name}: {name} missing")
        return default


def _pos(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise GiveUp(f"keras {what} is not a known positive integer ({v!r})")
    return v


def _pair(v: Any, what: str, n: int) -> tuple[int, ...]:
    if isinstance(v, (list, tuple)):
        return tuple(_pos(x, what) for x in v)
    return (_pos(v, what),) * n


def _shape(v: Any) -> tuple[int, ...]:
    if not isinstance(v, (list, tuple)) or not v:
        raise GiveUp(f"keras input shape unknown ({v!r})")
    return tuple(_pos(x, "input shape") for x in v)


def _spatial(size: int, k: int, s: int, padding: str) -> int:
    out = math.ceil(size / s) if padding == "same" else (size - k) // s + 1
    if out <= 0:
        raise GiveUp("keras spatial size shrinks to nothing")
    return out


def _conv(layer: KLayer, shape: tuple[int, ...], n: int) -> tuple[int, tuple[int, ...]]:
    if len(shape) != n + 1:
        raise GiveUp(f"keras {layer.name} on a {len(shape)}-d input")
    filters = _pos(layer.arg(0, "filters"), "filters")
    k = _pair(layer.arg(1, "kernel_size"), "kernel_size", n)
    s = _pair(layer.arg(2, "strides", 1), "strides", n)
    padding = str(layer.arg(3, "padding", "valid")).lower()
    bias = layer.kwargs.get("use_bias", True) is not False
    params = math.prod(k) * shape[-1] * filters + (filters if bias else 0)
    return params, (*(_spatial(d, kk, ss, padding) for d, kk, ss in zip(shape[:-1], k, s, strict=True)), filters)


def _pool(layer: KLayer, shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    p = _pair(layer.arg(0, "pool_size", 2), "pool_size", n)
    s = layer.arg(1, "strides", None)
    st = p if s is None else _pair(s, "strides", n)
    padding = str(layer.arg(2, "padding", "valid")).lower()
    return (*(_spatial(d, kk, ss, padding) for d, kk, ss in zip(shape[:-1], p, st, strict=True)), shape[-1])


def _rnn(layer: KLayer, shape: tuple[int, ...], gates: int, extra_bias: int) -> tuple[int, tuple[int, ...]]:
    units = _pos(layer.arg(0, "units"), "units")
    inp = shape[-1]
    params = gates * (units * (inp + units) + units * extra_bias)
    return params, (*shape[:-1], units) if layer.kwargs.get("return_sequences") is True else (units,)


def apply(layer: KLayer, shape: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """(trainable parameters of `layer`, its output shape) for an input of `shape` (batch dimension left out)."""
    name = layer.name
    if _FREE.match(name):
        return 0, shape
    if name == "Dense":
        units = _pos(layer.arg(0, "units"), "units")
        bias = layer.kwargs.get("use_bias", True) is not False
        return shape[-1] * units + (units if bias else 0), (*shape[:-1], units)
    if name in {"Conv1D", "Conv2D", "Conv3D", "Convolution1D", "Convolution2D"}:
        return _conv(layer, shape, int(re.sub(r"\D", "", name)))
    if name in {"MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D", "MaxPool2D", "AvgPool2D"}:
        return 0, _pool(layer, shape, int(re.sub(r"\D", "", name)))
    if name == "Flatten":
        return 0, (math.prod(shape),)
    if re.fullmatch(r"Global(Average|Max)Pooling[123]D", name):
        return 0, (shape[-1],)
    if name in {"BatchNormalization", "LayerNormalization"}:
        return 2 * shape[-1], shape
    if name == "Reshape":
        target = _shape(layer.arg(0, "target_shape"))
        return 0, target
    if name == "Embedding":
        dim = _pos(layer.arg(1, "output_dim"), "output_dim")
        return _pos(layer.arg(0, "input_dim"), "input_dim") * dim, (*shape, dim)
    if name == "LSTM":
        return _rnn(layer, shape, 4, 1)
    if name == "GRU":
        return _rnn(layer, shape, 3, 2 if layer.kwargs.get("reset_after", True) is not False else 1)
    if name == "SimpleRNN":
        return _rnn(layer, shape, 1, 1)
    raise GiveUp(f"keras layer {name} has no formula here")


def sequential_params(items: list[Any]) -> int:
    """Trainable parameters of a `Sequential` layer list whose input shape is given by an `Input`/`InputLayer` or
    the first layer's `input_shape` / `input_dim`."""
    shape: tuple[int, ...] | None = None
    total = 0
    for layer in items:
        if not isinstance(layer, KLayer):
            raise GiveUp("Sequential of something that is not a Keras layer")
        if layer.name in {"Input", "InputLayer"}:
            shape = _shape(layer.kwargs.get("shape", layer.kwargs.get("input_shape",
                                                                       layer.args[0] if layer.args else None)))
            continue
        if shape is None:
            if layer.name == "Embedding" and "input_shape" not in layer.kwargs:
                shape = (_pos(layer.kwargs.get("input_length", 1), "input_length"),)
            elif "input_shape" in layer.kwargs:
                shape = _shape(layer.kwargs["input_shape"])
            elif "input_dim" in layer.kwargs:
                shape = (_pos(layer.kwargs["input_dim"], "input_dim"),)
            else:
                raise GiveUp("Sequential without an input shape")
        n, shape = apply(layer, shape)
        total += n
    return total


__all__ = ["KERAS_PATH", "KLayer", "apply", "sequential_params"]
