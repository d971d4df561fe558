"""Parameter counts of the `torch.nn` building blocks, from their constructor arguments.

Each formula is PyTorch's own layout (weights and biases as `nn.Module.parameters()` lists them). A
dimension that is not a known positive number makes the layer uncountable (`GiveUp`): the caller then
reports no count rather than a guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


class GiveUp(Exception):
    """The definition cannot be counted statically (an unresolved dimension or an unsupported construct)."""


class Mod:
    """A module value: its own parameters and its registered children (shared children counted once)."""

    def __init__(self, name: str, own: int = 0, children: list[Mod] | None = None, plain: bool = False):
        self.name = name
        self.plain = plain  # an ordinary object (not an nn.Module): modules it holds are not registered
        self.weight: int | None = None  # numel of the layer's own `.weight` (weight tying shares it)
        self.own = own
        self.children: list[Mod] = list(children or [])
        self.attrs: dict[str, Any] = {}

    def total(self, seen: set[int] | None = None) -> int:
        seen = set() if seen is None else seen
        if id(self) in seen or self.plain:
            return 0
        seen.add(id(self))
        n = self.own
        for c in [*self.children, *(v for v in self.attrs.values() if isinstance(v, Mod))]:
            n += c.total(seen)
        return n


# layers without parameters (activations, pooling, dropout, reshaping, padding, losses)
PARAM_FREE = frozenset(
    ["ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "ELU", "SELU", "CELU", "GLU", "Tanh", "Sigmoid", "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus", "Softsign", "Softmax", "Softmax2d", "LogSoftmax", "LogSigmoid", "Tanhshrink", "Threshold", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Flatten", "Unflatten", "Identity", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ChannelShuffle", "CosineSimilarity", "PairwiseDistance", "Fold", "Unfold"]
)


def _pos(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise GiveUp(f"{what} is not a known positive integer ({v!r})")
    return v


def _arg(a: list[Any], kw: dict[str, Any], i: int, name: str, default: Any = GiveUp) -> Any:
    if name in kw:
        return kw[name]
    if i < len(a):
        return a[i]
    if default is GiveUp:
        raise GiveUp(f"argument {name} missing")
    return default


def _flag(v: Any, what: str) -> bool:
    if isinstance(v, bool) or v in (0, 1):
        return bool(v)
    if v is None:
        return False
    raise GiveUp(f"{what} is not a known flag ({v!r})")


def _kernel(k: Any, n: int) -> int:
    if isinstance(k, (list, tuple)):
        return math.prod(_pos(x, "kernel_size") for x in k)
    return _pos(k, "kernel_size") ** n


def _conv(n: int, transposed: bool) -> Callable[[list[Any], dict[str, Any]], int]:
    def count(a: list[Any], kw: dict[str, Any]) -> int:
        cin, cout = _pos(_arg(a, kw, 0, "in_channels"), "in_channels"), _pos(_arg(a, kw, 1, "out_channels"), "out")
        k = _kernel(_arg(a, kw, 2, "kernel_size"), n)
        groups = _pos(_arg(a, kw, 6, "groups", 1), "groups")  # the same slots in ConvNd and ConvTransposeNd
        bias = _flag(_arg(a, kw, 7, "bias", True), "bias")
        per = (cin * (cout // groups)) if transposed else (cout * (cin // groups))
        return per * k + (cout if bias else 0)
    return count


def _lazy(a: list[Any], kw: dict[str, Any]) -> int:
    raise GiveUp("a lazy layer's input size is only known at run time")


def _linear(a: list[Any], kw: dict[str, Any]) -> int:
    i, o = _pos(_arg(a, kw, 0, "in_features"), "in_features"), _pos(_arg(a, kw, 1, "out_features"), "out_features")
    return i * o + (o if _flag(_arg(a, kw, 2, "bias", True), "bias") else 0)


def _norm(i_affine: int, default_affine: bool, per: int = 2) -> Callable[[list[Any], dict[str, Any]], int]:
    def count(a: list[Any], kw: dict[str, Any]) -> int:
        n = _pos(_arg(a, kw, 0, "num_features"), "num_features")
        affine = _flag(kw.get("affine", a[i_affine] if i_affine < len(a) else default_affine), "affine")
        return per * n if affine else 0
    return count


def _layernorm(a: list[Any], kw: dict[str, Any]) -> int:
    shape = _arg(a, kw, 0, "normalized_shape")
    n = math.prod(_pos(x, "shape") for x in shape) if isinstance(shape, (list, tuple)) else _pos(shape, "shape")
    if not _flag(_arg(a, kw, 2, "elementwise_affine", True), "elementwise_affine"):
        return 0
    return n * (2 if _flag(_arg(a, kw, 3, "bias", True), "bias") else 1)


def _groupnorm(a: list[Any], kw: dict[str, Any]) -> int:
    c = _pos(_arg(a, kw, 1, "num_channels"), "num_channels")
    return 2 * c if _flag(_arg(a, kw, 3, "affine", True), "affine") else 0


def _rnn(gates: int) -> Callable[[list[Any], dict[str, Any]], int]:
    def count(a: list[Any], kw: dict[str, Any]) -> int:
        i, h = _pos(_arg(a, kw, 0, "input_size"), "input_size"), _pos(_arg(a, kw, 1, "hidden_size"), "hidden_size")
        layers = _pos(_arg(a, kw, 2, "num_layers", 1), "num_layers")
        bias = _flag(_arg(a, kw, 3, "bias", True), "bias")
        dirs = 2 if _flag(_arg(a, kw, 6, "bidirectional", False), "bidirectional") else 1
        total = 0
        for layer in range(layers):
            inp = i if layer == 0 else h * dirs
            total += dirs * (gates * h * (inp + h) + (2 * gates * h if bias else 0))
        return total
    return count


def _cell(gates: int) -> Callable[[list[Any], dict[str, Any]], int]:
    def count(a: list[Any], kw: dict[str, Any]) -> int:
        i, h = _pos(_arg(a, kw, 0, "input_size"), "input_size"), _pos(_arg(a, kw, 1, "hidden_size"), "hidden_size")
        return gates * h * (i + h) + (2 * gates * h if _flag(_arg(a, kw, 2, "bias", True), "bias") else 0)
    return count


def _mha(a: list[Any], kw: dict[str, Any]) -> int:
    e = _pos(_arg(a, kw, 0, "embed_dim"), "embed_dim")
    bias = _flag(_arg(a, kw, 3, "bias", True), "bias")
    return 4 * e * e + (4 * e if bias else 0)


def _ffn_block(a: list[Any], kw: dict[str, Any], attn: int, norms: int) -> int:
    d = _pos(_arg(a, kw, 0, "d_model"), "d_model")
    f = _pos(_arg(a, kw, 2, "dim_feedforward", 2048), "dim_feedforward")
    return attn * (4 * d * d + 4 * d) + 2 * d * f + f + d + norms * 2 * d


def _embedding(a: list[Any], kw: dict[str, Any]) -> int:
    return _pos(_arg(a, kw, 0, "num_embeddings"), "num_embeddings") * _pos(_arg(a, kw, 1, "embedding_dim"), "dim")


def _transformer(a: list[Any], kw: dict[str, Any]) -> int:
    d = _pos(_arg(a, kw, 0, "d_model", 512), "d_model")
    ne = _pos(_arg(a, kw, 2, "num_encoder_layers", 6), "num_encoder_layers")
    nd = _pos(_arg(a, kw, 3, "num_decoder_layers", 6), "num_decoder_layers")
    f = _pos(_arg(a, kw, 4, "dim_feedforward", 2048), "dim_feedforward")
    enc = _ffn_block([d, 1, f], {}, 1, 2)
    dec = _ffn_block([d, 1, f], {}, 2, 3)
    return ne * enc + nd * dec + 4 * d


LEAF_COUNTS: dict[str, Callable[[list[Any], dict[str, Any]], int]] = {
    "Linear": _linear,
    "LazyLinear": _lazy,
    "Conv1d": _conv(1, False), "Conv2d": _conv(2, False), "Conv3d": _conv(3, False),
    "ConvTranspose1d": _conv(1, True), "ConvTranspose2d": _conv(2, True), "ConvTranspose3d": _conv(3, True),
    "Embedding": _embedding, "EmbeddingBag": _embedding,
    "BatchNorm1d": _norm(2, True), "BatchNorm2d": _norm(2, True), "BatchNorm3d": _norm(2, True),
    "SyncBatchNorm": _norm(2, True),
    "InstanceNorm1d": _norm(3, False), "InstanceNorm2d": _norm(3, False), "InstanceNorm3d": _norm(3, False),
    "LayerNorm": _layernorm, "GroupNorm": _groupnorm,
    "RMSNorm": lambda a, kw: _layernorm([_arg(a, kw, 0, "normalized_shape"), None, True, False], {}),
    "PReLU": lambda a, kw: _pos(_arg(a, kw, 0, "num_parameters", 1), "num_parameters"),
    "LSTM": _rnn(4), "GRU": _rnn(3), "RNN": _rnn(1),
    "LSTMCell": _cell(4), "GRUCell": _cell(3), "RNNCell": _cell(1),
    "MultiheadAttention": _mha,
    "TransformerEncoderLayer": lambda a, kw: _ffn_block(a, kw, 1, 2),
    "TransformerDecoderLayer": lambda a, kw: _ffn_block(a, kw, 2, 3),
    "Transformer": _transformer,
}


# layers whose `.weight` can be tied to another layer's, with how many positional arguments precede `bias`
_WEIGHTED = {"Linear": 2, "Embedding": 2, "Conv1d": 7, "Conv2d": 7, "Conv3d": 7}


_DATA_PARALLEL = {"DataParallel", "DistributedDataParallel"}

# the constructor arguments a torch layer keeps as attributes of the same name, in positional order (model code
# reads them back: `vgg[-2].out_channels`, `self.fc.in_features`)
_CONV_ARGS = ("in_channels", "out_channels")  # torch keeps kernel, stride, padding as tuples
_NORM_ARGS = ("num_features", "eps", "momentum", "affine")
_RNN_ARGS = ("input_size", "hidden_size", "num_layers")
_KEPT_ARGS: dict[str, tuple[str, ...]] = {
    "Linear": ("in_features", "out_features"), "Embedding": ("num_embeddings", "embedding_dim"),
    **dict.fromkeys(("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"),
                    _CONV_ARGS),
    **dict.fromkeys(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"), _NORM_ARGS),
    "GroupNorm": ("num_groups", "num_channels"), "LayerNorm": ("normalized_shape",),
    **dict.fromkeys(("LSTM", "GRU", "RNN"), _RNN_ARGS), "MultiheadAttention": ("embed_dim", "num_heads"),
}


def _kept(name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    out = {k: (args[i] if i < len(args) else kwargs[k]) for i, k in enumerate(_KEPT_ARGS.get(name, ()))
           if i < len(args) or k in kwargs}
    return {k: v for k, v in out.items() if isinstance(v, (int, float, tuple, list)) and not isinstance(v, bool)}


def build_nn(name: str, args: list[Any], kwargs: dict[str, Any]) -> Mod:
    """The module value of `nn.<name>(*args, **kwargs)`; GiveUp for an unknown layer or dimension."""
    if name.rsplit(".", 1)[-1] in _DATA_PARALLEL and args and isinstance(args[0], Mod):
        return args[0]  # `nn.DataParallel(net)`: the wrapped module's parameters, nothing more
    if name in PARAM_FREE or name.endswith("Loss"):
        return Mod(name)
    if name in LEAF_COUNTS:
        mod = Mod(name, LEAF_COUNTS[name](args, kwargs))
        mod.attrs.update(_kept(name, args, kwargs))
        if name in _WEIGHTED:  # the same layer without its bias: the `.weight` alone
            mod.weight = LEAF_COUNTS[name](args[:_WEIGHTED[name]], {**kwargs, "bias": False})
        return mod
    if name in {"Sequential", "ModuleList", "ModuleDict", "ParameterList"}:
        items: list[Any] = []
        named: dict[str, Any] = {}
        for a in args:
            if isinstance(a, dict):
                named.update(a)
            else:
                items.extend(a if isinstance(a, (list, tuple)) else [a])
        if name == "ModuleList":  # `fuse.append(None)` (HRNet's fuse layers): an empty slot, no parameters
            items = [x for x in items if x is not None]
        if not all(isinstance(x, Mod) for x in [*items, *named.values()]):
            raise GiveUp(f"nn.{name} of something that is not a counted module")
        mod = Mod(name, 0, items)
        mod.attrs.update({str(k): v for k, v in named.items()})  # `transformer.wte` stays reachable by name
        return mod
    if name in {"TransformerEncoder", "TransformerDecoder"}:
        layer = _arg(args, kwargs, 0, "encoder_layer" if name.endswith("Encoder") else "decoder_layer")
        n = _pos(_arg(args, kwargs, 1, "num_layers"), "num_layers")
        norm = _arg(args, kwargs, 2, "norm", None)
        if not isinstance(layer, Mod) or (norm is not None and not isinstance(norm, Mod)):
            raise GiveUp(f"nn.{name} of an uncounted layer")
        return Mod(name, layer.total() * n + (norm.total() if norm is not None else 0))
    raise GiveUp(f"nn.{name} has no formula here")
