"""Layers applied to TF1 graph tensors (tf_graph.py): `tf.layers.conv2d(x, 32, 5)`, `tf.layers.max_pooling2d`,
`tf.contrib.layers.flatten` and Keras layers called on a graph tensor (`tf.keras.layers.Dense(32)(y)`), sized the
way keras_layers.py sizes the same Keras layer.

A tensor whose whole shape is known (`tf.reshape(x, [-1, 28, 28, 1])`) is a `TFShaped` and goes through the layer
with its spatial sizes, so that a `flatten` after convolutions and pools has a known width. A tensor known only
by its last dimension goes only through layers whose weights depend on the channels alone (a dense, a
convolution, a recurrent layer), never through a `flatten`.

    layer_on_shape(KLayer("Conv2D", [32, 5]), TFShaped((28, 28, 1))) -> (832, TFShaped((24, 24, 32)))
    layer_on_width(KLayer("LSTM", [256]), 256)                       -> (525312, 256)
"""

from __future__ import annotations

import math
import re
from typing import Any

from schedmate.codeprof.static.modelsize.keras_graph import KTensor, call_layer
from schedmate.codeprof.static.modelsize.keras_layers import KLayer, apply
from schedmate.codeprof.static.modelsize.layers import GiveUp

# tf.layers functions -> the Keras layer of the same arguments (after the input)
_TF_FUNCTIONAL = {"dense": "Dense", "conv1d": "Conv1D", "conv2d": "Conv2D", "conv3d": "Conv3D",
                  "conv2d_transpose": "Conv2DTranspose", "max_pooling1d": "MaxPooling1D",
                  "max_pooling2d": "MaxPooling2D", "average_pooling1d": "AveragePooling1D",
                  "average_pooling2d": "AveragePooling2D"}
# Keras layers whose weights depend only on the input's last dimension, and whose output width is known from
# their arguments (or is the input's)
_WIDTH_ONLY = re.compile(r"^(Dense|Conv[123]D|Convolution[12]D|LSTM|GRU|SimpleRNN|BatchNormalization|"
                         r"LayerNormalization|(Max|Average)Pooling[123]D|MaxPool[12]D|AvgPool[12]D|Dropout|"
                         r"Activation|ReLU|LeakyReLU|Softmax|ELU)$")


class TFShaped(KTensor):
    """A TF graph tensor of a fully known shape (batch left out); the layers it went through are counted by the
    graph as they are applied, not kept on the tensor."""


def shaped(dims: Any) -> TFShaped | None:
    """`tf.reshape(x, [-1, 28, 28, 1])`: the shape after the batch dimension, when every size is known and there
    are at least two of them (a flat reshape keeps the graph's width-only tensor)."""
    if not isinstance(dims, (list, tuple)) or len(dims) < 3:
        return None
    rest = tuple(dims[1:])
    if all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in rest):
        return TFShaped(rest)
    return None


def layer_on_shape(layer: KLayer, x: TFShaped) -> tuple[int, TFShaped]:
    """(trainable parameters, output) of a Keras layer applied to a fully shaped graph tensor."""
    out = call_layer(layer, [KTensor(x.shape)], {})
    return out.layers[id(layer)][1], TFShaped(out.shape)


def layer_on_width(layer: KLayer, width: int) -> tuple[int, int]:
    """(trainable parameters, output width) of a Keras layer applied to a tensor known only by its last
    dimension; GiveUp for a layer whose size or output needs the other dimensions (a flatten, a reshape)."""
    if not _WIDTH_ONLY.match(layer.name):
        raise GiveUp(f"keras {layer.name} on a graph tensor of unknown shape")
    digits = re.sub(r"\D", "", layer.name)
    rank = int(digits) if digits else 0
    # spatial sizes large enough for any kernel: they change the output's spatial size, never the weights
    n, shape = apply(layer, (*(4096,) * rank, width))
    return n, shape[-1]


def tf_functional(last: str, x: TFShaped, args: list[Any], kwargs: dict[str, Any]) -> tuple[int, TFShaped] | None:
    """`tf.layers.conv2d(x, 32, 5, padding="same")` and the other tf.layers functions on a shaped tensor; None
    for a function not read here."""
    if last in {"flatten"}:
        return 0, TFShaped((math.prod(x.shape),))
    name = _TF_FUNCTIONAL.get(last)
    if name is None:
        return None
    rest = {k: v for k, v in kwargs.items() if k not in {"inputs", "name", "reuse", "activation",
                                                          "kernel_initializer", "trainable"}}
    return layer_on_shape(KLayer(name, list(args[1:]), rest), x)


__all__ = ["TFShaped", "layer_on_shape", "layer_on_width", "shaped", "tf_functional"]
