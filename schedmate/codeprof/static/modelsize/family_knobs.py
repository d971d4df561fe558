"""A convolutional model's size from the knobs of its family, wherever the job states them.

    cnn_from_knobs("wrn", {"depth": 28, "widening_factor": 10}, cifar=True) -> (36.5M, ["depth", "widening_factor"])

Read from three places:
- a config section whose `name` / `type` / `arch` is a bare family word, with the knobs beside it or in a sub-section
  named after it (`model: {name: wrn, wrn: {depth: 28, widening_factor: 10}}`, `backbone=dict(type='ResNet',
  depth=50)`, `model: {arch: densenet, depth: 100, growth_rate: 12}`);
- top-level flags beside an architecture flag (`--arch wrn --depth 28 --widen-factor 10`);
- the keyword arguments of a call that builds a family class (`WideResNet(depth=28, widen_factor=10)`,
  `ConvNeXt(depths=[3, 3, 9, 3], dims=[96, 192, 384, 768])`).

Images of 32 px (a `cifar` type, a CIFAR/SVHN/MNIST dataset, a small image size) take the CIFAR layouts (3x3 stem,
three stages); a backbone inside a detector or segmenter (heads or necks beside it) is not the whole model and
is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schedmate.codeprof.static.modelsize import convnets as cn
from schedmate.codeprof.static.names import positive_int as _int

_WORDS = (
    (r"wrn|wide_?resnet", "wrn"),
    (r"(pre_?act_?)?resnet(_?pre_?act|_?v1[bcd]?|_?cifar)?", "resnet"),
    (r"resnext", "resnext"),
    (r"densenet(_?bc)?", "densenet"),
    (r"vgg(_?bn)?", "vgg"),
    (r"convnext", "convnext"),
    (r"swin(_?transformer)?", "swin"),
    (r"efficientnet", "efficientnet"),
    (r"mobilenet_?v2", "mobilenetv2"),
)
NAME_KEYS = {"name", "type", "arch", "architecture", "model", "model_name", "model_type", "net", "network",
             "backbone"}
HEADS = re.compile(r"(^|\.)(\w*_head|heads?|neck|decoder|rpn|roi_\w+)(\.|$)")

_DEPTH = ("depth", "resnet_depth", "num_layers", "n_layers")
_WIDEN = ("widen_factor", "widening_factor", "width_factor", "widen", "k")
_BLOCKS = ("n_blocks", "blocks", "num_blocks", "stage_blocks", "layers", "block_nums")
_CARD = ("cardinality", "groups", "num_groups")
_BASEW = ("base_width", "base_channels", "bottleneck_width", "width_per_group")
_INIT = ("initial_channels", "init_channels", "base_channels", "width", "in_planes")
_GROWTH = ("growth_rate", "growth", "k")
_COMPRESS = ("compression_rate", "compression", "reduction", "theta")
_CLASSES = ("num_classes", "n_classes", "nb_classes", "classes", "class_num", "n_class")


def family_of_word(value: Any) -> str | None:
    """The family a bare architecture word names (`wrn`, `WideResNet`, `resnet`, `densenet_bc`); a word with a size
    (`resnet50`) is a well-known model, not a family."""
    if not isinstance(value, str):
        return None
    w = re.sub(r"[-\s]", "_", value.strip().lower())
    w = re.sub(r"(?<=[a-z])(?=net$)", "", w)
    return next((fam for pat, fam in _WORDS if re.fullmatch(pat, w)), None)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def _ints(v: Any) -> tuple[int, ...] | None:
    if isinstance(v, (list, tuple)) and v and all(_int(x) is not None for x in v):
        return tuple(int(x) for x in v)
    return None


def _pick(values: Mapping[str, Any], names: tuple[str, ...], used: list[str], conv: Any = _int) -> Any:
    for n in names:
        if n in values and (got := conv(values[n])) is not None:
            used.append(n)
            return got
    return None


def _bottleneck(values: Mapping[str, Any]) -> bool | None:
    bt = values.get("block_type", values.get("block"))
    if isinstance(bt, str):
        return "bottle" in bt.lower()
    b = values.get("bottleneck")
    return b if isinstance(b, bool) else None


def cnn_from_knobs(family: str, values: Mapping[str, Any], cifar: bool = False,
                   classes: int | None = None) -> tuple[int, list[str]] | None:
    """Parameters of a `family` model from its knobs (leaf name -> value), and the knob names used; None when the
    knobs do not pin the architecture down."""
    used: list[str] = []
    cls = _pick(values, _CLASSES, used) or classes or (10 if cifar else 1000)
    depth = _pick(values, _DEPTH, used)
    if family == "wrn":
        widen = _pick(values, _WIDEN, used)
        if depth is None or widen is None or (depth - 4) % 6:
            return None
        width = _pick(values, ("initial_channels", "init_channels", "base_channels"), used) or 16
        return cn.wide_resnet_params(depth, widen, cls, width), used
    if family in {"resnet", "resnext"}:
        blocks = _pick(values, _BLOCKS, used, _ints)
        bottle = _bottleneck(values)
        card = _pick(values, _CARD, used) if family == "resnext" else None
        basew = _pick(values, _BASEW, used) if family == "resnext" else None
        widen = _pick(values, ("widen_factor", "width_factor", "width_multiplier"), used) or 1
        if family == "resnext" and card is None:
            return None
        if blocks is not None and len(blocks) == 4:
            return cn.resnet_params(blocks=blocks, bottleneck=bool(bottle) or family == "resnext", classes=cls,
                                    groups=card or 1, width_per_group=(basew or 64) * widen), used
        if depth is None:
            return None
        if depth in cn.RESNET_BLOCKS and not (family == "resnext" and cifar):
            return cn.resnet_params(depth, bottleneck=bottle, classes=cls, groups=card or 1,
                                    width_per_group=(basew or 64) * widen), used
        if family == "resnext":
            return (cn.cifar_resnext_params(depth, card, basew or 64, cls), used) if (depth - 2) % 9 == 0 else None
        bottle = bool(bottle) if bottle is not None else (depth - 2) % 6 != 0
        if (depth - 2) % (9 if bottle else 6):
            return None
        width = _pick(values, _INIT, used) or 16
        return cn.cifar_resnet_params(depth, bottle, cls, width), used
    if family == "densenet":
        growth = _pick(values, _GROWTH, used)
        blocks = _pick(values, _BLOCKS, used, _ints)
        bottle = _bottleneck(values)
        comp = _pick(values, _COMPRESS, used, _num)
        if blocks is not None and growth is not None:
            return cn.densenet_params(blocks, growth, bottleneck=bottle is not False, compression=comp or 0.5,
                                      classes=cls), used
        if depth in cn.DENSENET_BLOCKS and not cifar:
            return cn.densenet_params(cn.DENSENET_BLOCKS[depth], growth or 32, classes=cls), used
        if depth is None or growth is None:
            return None
        return cn.cifar_densenet_params(depth, growth, bottle is not False, comp or 0.5, cls), used
    if family == "vgg":
        layers = _pick(values, ("n_layers", "layers", "num_convs", "stage_layers"), used, _ints)
        chans = _pick(values, ("n_channels", "channels", "widths"), used, _ints) or (64, 128, 256, 512, 512)
        bn = any(values.get(k) is True for k in ("use_bn", "batch_norm", "bn", "with_bn"))
        if layers is None and depth not in cn.VGG_LAYERS or len(layers or chans) != len(chans):
            return None
        fc: tuple[int, ...] = () if cifar else (4096, 4096)
        return cn.vgg_params(depth, layers, chans, bn, cls, fc, 1 if cifar else 7), used
    if family == "convnext":
        depths, dims = _pick(values, ("depths",), used, _ints), _pick(values, ("dims", "widths"), used, _ints)
        if depths is None or dims is None or len(depths) != len(dims):
            return None
        return cn.convnext_params(depths, dims, cls), used
    if family == "swin":
        dim = _pick(values, ("embed_dim", "embed_dims"), used)
        depths, heads = _pick(values, ("depths",), used, _ints), _pick(values, ("num_heads",), used, _ints)
        if dim is None or depths is None or heads is None or len(depths) != len(heads):
            return None
        window = _pick(values, ("window_size",), used) or 7
        return cn.swin_params(dim, depths, heads, window, classes=cls), used
    if family == "efficientnet":
        w = _pick(values, ("width_coefficient", "width_mult", "width"), used, _num)
        d = _pick(values, ("depth_coefficient", "depth_mult", "depth_multiplier"), used, _num)
        return (cn.efficientnet_params(w, d, cls), used) if w and d else None
    if family == "mobilenetv2":
        w = _pick(values, ("width_mult", "width_multiplier", "alpha"), used, _num)
        return (cn.mobilenet_v2_params(w, cls), used) if w else None
    return None


__all__ = ["HEADS", "NAME_KEYS", "cnn_from_knobs", "family_of_word"]
