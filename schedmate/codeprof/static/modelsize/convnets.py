"""Published formulas of convolutional and small policy networks: parameters as a function of the family's knobs.

    resnet_params(50) -> 25.6M                      ImageNet ResNet (torchvision layout; ResNeXt and wide variants
                                                      through `groups` and `width_per_group`)
    cifar_resnet_params(110) -> 1.7M                 He et al.'s 6n+2 CIFAR ResNet (16/32/64 channels)
    wide_resnet_params(28, 10) -> 36.5M              WRN-d-k (pre-activation, 16/16k/32k/64k channels)
    cifar_resnext_params(29, 8, 64) -> 34.4M         ResNeXt-29 (C x d) for 32 px images
    densenet_params((6, 12, 24, 16), 32) -> 8.0M     DenseNet-121; `cifar_densenet_params(100, 12)` DenseNet-BC-100
    vgg_params(16) -> 138M                          VGG-11/13/16/19 (with or without BN, any classifier)
    convnext_params((3, 3, 9, 3), (96, 192, 384, 768)) -> 28.6M, swin_params(96, (2, 2, 6, 2), (3, 6, 12, 24)) -> 28.3M
    efficientnet_params(width, depth) -> B0 5.3M ... B7 66M (compound scaling of the B0 blocks)
    mobilenet_v2_params(1.0) -> 3.5M, nature_cnn_params(actions=6) -> 1.69M, mlp_params([17, 64, 64, 6]) -> 5.7K

Norm layers' scales and biases are counted, running statistics are not; convolutions carry no bias when a norm
follows them (the reference implementations' choice).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise


def _conv(cin: int, cout: int, k: int, bias: bool = False, groups: int = 1) -> int:
    return cout * (cin // groups) * k * k + (cout if bias else 0)


def _fc(cin: int, cout: int, bias: bool = True) -> int:
    return cin * cout + (cout if bias else 0)


def _bn(c: int) -> int:
    return 2 * c


RESNET_BLOCKS = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3),
                 200: (3, 24, 36, 3)}


def resnet_params(depth: int | None = None, blocks: Sequence[int] | None = None, bottleneck: bool | None = None,
                  classes: int = 1000, groups: int = 1, width_per_group: int = 64, in_ch: int = 3,
                  stem: int = 64) -> int:
    """The ImageNet ResNet: a 7x7 stem, four stages of basic (18, 34) or bottleneck blocks with 64..512 planes,
    projection shortcuts where the shape changes, a linear classifier (none when `classes` is 0)."""
    blocks = tuple(blocks) if blocks is not None else RESNET_BLOCKS[depth]  # type: ignore[index]
    bottleneck = (depth is None or depth >= 50) if bottleneck is None else bottleneck
    exp = 4 if bottleneck else 1
    n = _conv(in_ch, stem, 7) + _bn(stem)
    cin = stem
    for i, nb in enumerate(blocks):
        planes = 64 * 2 ** i
        for b in range(nb):
            if bottleneck:
                w = planes * width_per_group // 64 * groups
                n += _conv(cin, w, 1) + _bn(w) + _conv(w, w, 3, groups=groups) + _bn(w)
                n += _conv(w, planes * exp, 1) + _bn(planes * exp)
            else:
                n += _conv(cin, planes, 3) + _bn(planes) + _conv(planes, planes, 3) + _bn(planes)
            if b == 0 and (i > 0 or cin != planes * exp):
                n += _conv(cin, planes * exp, 1) + _bn(planes * exp)
            cin = planes * exp
    return n + (_fc(cin, classes) if classes else 0)


def cifar_resnet_params(depth: int, bottleneck: bool = False, classes: int = 10, width: int = 16,
                        projection: bool = True) -> int:
    """He et al.'s CIFAR ResNet: depth 6n+2 (basic) or 9n+2 (bottleneck), three stages of `width` x 1/2/4
    channels; 1x1 projection shortcuts (`projection=False`: parameter-free zero-padding shortcuts)."""
    n_per = (depth - 2) // (9 if bottleneck else 6)
    exp = 4 if bottleneck else 1
    n = _conv(3, width, 3) + _bn(width)
    cin = width
    for i in range(3):
        planes = width * 2 ** i
        for b in range(n_per):
            if bottleneck:
                n += _conv(cin, planes, 1) + _bn(planes) + _conv(planes, planes, 3) + _bn(planes)
                n += _conv(planes, planes * exp, 1) + _bn(planes * exp)
            else:
                n += _conv(cin, planes, 3) + _bn(planes) + _conv(planes, planes, 3) + _bn(planes)
            if b == 0 and cin != planes * exp and projection:
                n += _conv(cin, planes * exp, 1) + _bn(planes * exp)
            cin = planes * exp
    return n + _fc(cin, classes)


def wide_resnet_params(depth: int, widen_factor: int, classes: int = 10, width: int = 16) -> int:
    """WRN-depth-k (Zagoruyko & Komodakis): (depth - 4) / 6 pre-activation basic blocks per stage over
    `width`, `width` x k, 2k, 4k channels, 1x1 shortcuts where the width changes, a final BN and classifier."""
    n_per = (depth - 4) // 6
    chans = [width, width * widen_factor, 2 * width * widen_factor, 4 * width * widen_factor]
    n = _conv(3, chans[0], 3)
    cin = chans[0]
    for out in chans[1:]:
        for _ in range(n_per):
            n += _bn(cin) + _conv(cin, out, 3) + _bn(out) + _conv(out, out, 3)
            if cin != out:
                n += _conv(cin, out, 1)
            cin = out
    return n + _bn(cin) + _fc(cin, classes)


def cifar_resnext_params(depth: int, cardinality: int, base_width: int, classes: int = 10) -> int:
    """ResNeXt-depth (C x d) for 32 px images: (depth - 2) / 9 bottlenecks per stage, inner width C x d x 2^i,
    output 256 x 2^i, a 3x3 stem of 64 channels."""
    n_per = (depth - 2) // 9
    n = _conv(3, 64, 3) + _bn(64)
    cin = 64
    for i in range(3):
        inner, out = cardinality * base_width * 2 ** i, 256 * 2 ** i
        for b in range(n_per):
            n += _conv(cin, inner, 1) + _bn(inner) + _conv(inner, inner, 3, groups=cardinality) + _bn(inner)
            n += _conv(inner, out, 1) + _bn(out)
            if b == 0 and cin != out:
                n += _conv(cin, out, 1) + _bn(out)
            cin = out
    return n + _fc(cin, classes)


DENSENET_BLOCKS = {121: (6, 12, 24, 16), 169: (6, 12, 32, 32), 201: (6, 12, 48, 32), 161: (6, 12, 36, 24)}


def _dense_blocks(c: int, blocks: Sequence[int], k: int, bottleneck: bool, compression: float) -> tuple[int, int]:
    n = 0
    for i, nb in enumerate(blocks):
        for _ in range(nb):
            if bottleneck:
                n += _bn(c) + _conv(c, 4 * k, 1) + _bn(4 * k) + _conv(4 * k, k, 3)
            else:
                n += _bn(c) + _conv(c, k, 3)
            c += k
        if i != len(blocks) - 1:
            out = math.floor(c * compression)
            n += _bn(c) + _conv(c, out, 1)
            c = out
    return n, c


def densenet_params(blocks: Sequence[int], growth_rate: int = 32, init: int | None = None,
                    bottleneck: bool = True, compression: float = 0.5, classes: int = 1000) -> int:
    """The ImageNet DenseNet: a 7x7 stem of 2k channels, dense blocks of (BN, 1x1 to 4k, BN, 3x3 to k) layers,
    transitions compressing the channels, a final BN and classifier."""
    init = init or 2 * growth_rate
    n, c = _dense_blocks(init, blocks, growth_rate, bottleneck, compression)
    return _conv(3, init, 7) + _bn(init) + n + _bn(c) + _fc(c, classes)


def cifar_densenet_params(depth: int, growth_rate: int, bottleneck: bool = True, compression: float = 0.5,
                          classes: int = 10) -> int:
    """DenseNet(-BC) for 32 px images: three dense blocks of (depth - 4) / 6 bottleneck layers (/ 3 plain
    layers), a 3x3 stem of 2k (BC) or 16 channels."""
    per = (depth - 4) // (6 if bottleneck else 3)
    init = 2 * growth_rate if bottleneck else 16
    n, c = _dense_blocks(init, (per, per, per), growth_rate, bottleneck, compression if bottleneck else 1.0)
    return _conv(3, init, 3) + n + _bn(c) + _fc(c, classes)


VGG_LAYERS = {11: (1, 1, 2, 2, 2), 13: (2, 2, 2, 2, 2), 16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}


def vgg_params(depth: int | None = None, layers: Sequence[int] | None = None,
               channels: Sequence[int] = (64, 128, 256, 512, 512), bn: bool = False, classes: int = 1000,
               fc: Sequence[int] = (4096, 4096), spatial: int = 7) -> int:
    """VGG: stages of 3x3 convolutions (with biases, BN optional) over `channels`, then the classifier over the
    last stage's `spatial` x `spatial` map: `fc` hidden widths (ImageNet 4096, 4096; none for CIFAR variants)."""
    layers = tuple(layers) if layers is not None else VGG_LAYERS[depth]  # type: ignore[index]
    n, cin = 0, 3
    for nl, c in zip(layers, channels, strict=True):
        for _ in range(nl):
            n += _conv(cin, c, 3, bias=True) + (_bn(c) if bn else 0)
            cin = c
    dims = [cin * spatial * spatial, *fc, classes]
    return n + sum(_fc(a, b) for a, b in pairwise(dims))


def convnext_params(depths: Sequence[int], dims: Sequence[int], classes: int = 1000) -> int:
    """ConvNeXt: a 4x4 patchify stem and LayerNorm, stages of (7x7 depthwise conv, LayerNorm, 4x MLP, layer
    scale) blocks, LayerNorm + 2x2 conv downsampling between stages, a final LayerNorm and head."""
    n = _conv(3, dims[0], 4, bias=True) + _bn(dims[0])
    for i, (d, c) in enumerate(zip(depths, dims, strict=True)):
        if i:
            n += _bn(dims[i - 1]) + _conv(dims[i - 1], c, 2, bias=True)
        n += d * (_conv(c, c, 7, bias=True, groups=c) + _bn(c) + _fc(c, 4 * c) + _fc(4 * c, c) + c)
    return n + _bn(dims[-1]) + _fc(dims[-1], classes)


def swin_params(embed_dim: int, depths: Sequence[int], num_heads: Sequence[int], window: int = 7,
                mlp_ratio: float = 4.0, patch: int = 4, classes: int = 1000) -> int:
    """Swin Transformer: patch embedding (+ LayerNorm), stages of window-attention blocks with a relative
    position bias table, patch merging (LayerNorm over 4C, linear to 2C) between stages, final norm, head."""
    n = _conv(3, embed_dim, patch, bias=True) + _bn(embed_dim)
    c = embed_dim
    for i, (d, h) in enumerate(zip(depths, num_heads, strict=True)):
        hid = int(c * mlp_ratio)
        block = _bn(c) + _fc(c, 3 * c) + (2 * window - 1) ** 2 * h + _fc(c, c) + _bn(c) + _fc(c, hid) + _fc(hid, c)
        n += d * block
        if i != len(depths) - 1:
            n += _bn(4 * c) + _fc(4 * c, 2 * c, bias=False)
            c *= 2
    return n + _bn(c) + _fc(c, classes)


# EfficientNet-B0 stages: (expand ratio, kernel, repeats, output channels); stem 32, head 1280, SE ratio 0.25
_B0 = ((1, 3, 1, 16), (6, 3, 2, 24), (6, 5, 2, 40), (6, 3, 3, 80), (6, 5, 3, 112), (6, 5, 4, 192), (6, 3, 1, 320))
EFFICIENTNET_SCALES = {0: (1.0, 1.0), 1: (1.0, 1.1), 2: (1.1, 1.2), 3: (1.2, 1.4), 4: (1.4, 1.8), 5: (1.6, 2.2),
                       6: (1.8, 2.6), 7: (2.0, 3.1)}


def _round_filters(c: float, width: float, divisor: int = 8) -> int:
    c *= width
    new = max(divisor, int(c + divisor / 2) // divisor * divisor)
    return int(new + divisor) if new < 0.9 * c else int(new)


def efficientnet_params(width: float = 1.0, depth: float = 1.0, classes: int = 1000) -> int:
    """EfficientNet by compound scaling of the B0 blocks (MBConv with squeeze-excitation): channels x `width`
    rounded to multiples of 8, repeats x `depth` rounded up; B0..B7 are the (width, depth) pairs of the paper."""
    stem = _round_filters(32, width)
    n = _conv(3, stem, 3) + _bn(stem)
    cin = stem
    for expand, k, repeats, out in _B0:
        cout = _round_filters(out, width)
        for _ in range(math.ceil(repeats * depth)):
            mid = cin * expand
            if expand != 1:
                n += _conv(cin, mid, 1) + _bn(mid)
            se = max(1, int(cin * 0.25))
            n += _conv(mid, mid, k, groups=mid) + _bn(mid) + _fc(mid, se) + _fc(se, mid)
            n += _conv(mid, cout, 1) + _bn(cout)
            cin = cout
    head = _round_filters(1280, width)
    return n + _conv(cin, head, 1) + _bn(head) + _fc(head, classes)


# MobileNetV2 stages: (expand ratio, output channels, repeats)
_MBV2 = ((1, 16, 1), (6, 24, 2), (6, 32, 3), (6, 64, 4), (6, 96, 3), (6, 160, 3), (6, 320, 1))


def mobilenet_v2_params(width_mult: float = 1.0, classes: int = 1000) -> int:
    """MobileNetV2 with a width multiplier (channels rounded to multiples of 8; the last 1280 is not shrunk)."""
    stem = _round_filters(32, width_mult)
    n = _conv(3, stem, 3) + _bn(stem)
    cin = stem
    for t, c, reps in _MBV2:
        cout = _round_filters(c, width_mult)
        for _ in range(reps):
            mid = cin * t
            if t != 1:
                n += _conv(cin, mid, 1) + _bn(mid)
            n += _conv(mid, mid, 3, groups=mid) + _bn(mid) + _conv(mid, cout, 1) + _bn(cout)
            cin = cout
    last = _round_filters(1280, width_mult) if width_mult > 1.0 else 1280
    return n + _conv(cin, last, 1) + _bn(last) + _fc(last, classes)


def nature_cnn_params(actions: int = 18, frames: int = 4, feature: int = 512, heads: int = 1,
                      head_width: int | None = None) -> int:
    """The DQN (Mnih et al. 2015) Atari torso: 32 8x8/4, 64 4x4/2 and 64 3x3/1 convolutions over `frames` stacked
    84x84 frames, a 3136 -> 512 layer, then `heads` linear heads of `head_width` outputs (default `actions`; an
    actor-critic adds a one-unit value head)."""
    n = _conv(frames, 32, 8, bias=True) + _conv(32, 64, 4, bias=True) + _conv(64, 64, 3, bias=True)
    n += _fc(7 * 7 * 64, feature)
    return n + heads * _fc(feature, head_width or actions)


def mlp_params(sizes: Sequence[int], bias: bool = True) -> int:
    """A stack of linear layers through the given widths (input, hidden..., output)."""
    return sum(_fc(a, b, bias) for a, b in pairwise(sizes))


__all__ = ["cifar_densenet_params", "cifar_resnet_params", "cifar_resnext_params", "convnext_params",
           "densenet_params", "efficientnet_params", "mlp_params", "mobilenet_v2_params", "nature_cnn_params",
           "resnet_params", "swin_params", "vgg_params", "wide_resnet_params"]
