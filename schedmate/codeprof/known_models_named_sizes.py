"""Published sizes of architectures that jobs name in a setting, a flag or a config file's name rather than by a
hub id (`architecture: resnet18_cifar`, `model: PixArt_XL_2`, `configs/raft_8x2_100k.py`): a data table.

# data table
Same row format as `known_models.KNOWN_MODELS` (regex on the normalised name, canonical name, family,
parameters), appended after every other table's rows, so an existing row always wins. Each count is the one
the paper or the project's README publishes; a variant with no published count has no row (a wrong number is
worse than null). Patterns are anchored so a longer variant never takes a shorter row's count.
"""

from __future__ import annotations

_END = r"([_-]|$)"

NAMED_SIZE_MODELS: tuple[tuple[str, str, str, float], ...] = (
    # --- ResNets for 32-pixel inputs (`resnet18_cifar`, `ResNet50_CIFAR10`): the ResNet paper's ImageNet bodies
    # with a 3x3 stem and a 10/100-way head; the published ImageNet count less the 1000-way classifier
    (r"^resnet-?18[_-]?cifar(10|100)?$", "resnet18_cifar", "resnet", 11.2e6),
    (r"^resnet-?34[_-]?cifar(10|100)?$", "resnet34_cifar", "resnet", 21.3e6),
    (r"^resnet-?50[_-]?cifar(10|100)?$", "resnet50_cifar", "resnet", 23.5e6),
    (r"^resnet-?101[_-]?cifar(10|100)?$", "resnet101_cifar", "resnet", 42.5e6),
    (r"^resnet-?152[_-]?cifar(10|100)?$", "resnet152_cifar", "resnet", 58.2e6),
    # --- SpanBERT (README: base 12-layer 768-hidden 110M, large 24-layer 1024-hidden 340M; BERT's shapes) -----
    (rf"^spanbert[_-](base){_END}", "spanbert-base", "bert", 110e6),
    (rf"^spanbert[_-](large){_END}", "spanbert-large", "bert", 340e6),
    # --- PixArt-alpha / PixArt-sigma (PixArt-alpha paper: the XL/2 transformer, 0.6B) -------------------------
    (r"^pixart(ms)?([_-]?(alpha|sigma))?[_-]?xl[_/-]?2$", "pixart-xl-2", "unet", 611e6),
    # --- optical flow (RAFT paper: 5.3M, RAFT-small 1.0M; PWC-Net paper: 8.75M) --------------------------------
    (rf"^raft[_-]?(s|small){_END}", "raft-small", "cnn", 1.0e6),
    (rf"^raft{_END}(?!s_|small)", "raft", "cnn", 5.3e6),
    (rf"^pwc[_-]?net{_END}", "pwc-net", "cnn", 8.75e6),
    # --- video transformers (TimeSformer paper: 121.4M, ViT-B with divided space-time attention) -----------------
    (rf"^timesformer{_END}", "timesformer", "vit", 121.4e6),
)
