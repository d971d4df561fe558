"""Vision models named by a config's values rather than by one name key.

- an HRNet-style model section: `MODEL: {NAME: cls_hrnet, EXTRA: {STAGE2: {NUM_CHANNELS: [48, 96]}}}` is
  cls_hrnet_w48 (the width of an HRNet is the first branch's channel count of its second stage);
- a maskrcnn-benchmark-style detector: `META_ARCHITECTURE: GeneralizedRCNN` with
  `BACKBONE: {CONV_BODY: R-50-FPN}` is Faster R-CNN R-50-FPN, or Mask R-CNN with `MASK_ON: True`, or
  RetinaNet with `RETINANET_ON: True` (only FPN bodies: a C4 body has another head);
- a registry-built backbone named by its builder and depth (fast-reid/detectron2 style:
  `BACKBONE: {NAME: build_resnet_backbone, DEPTH: 50x, WITH_IBN: True}` is resnet50_ibn_a) in a model that is
  not a detector or segmenter (their heads are counted by no row);
- an EfficientDet built by the job (`efficientdet(args.phi)`, `EfficientDetBackbone(compound_coef=...)`) whose
  compound coefficient option (`--phi 1`, `-c 1`) picks D0-D7;
- the config file named on the command line whose stem starts with a model name
  (`--conf configs/yolov6s_finetune.py`, `--cfg experiments/cls_hrnet_w48_sgd_lr5e-2.yaml`).

Only a name that a row of the well-known table matches counts (a name that merely states a size does not):
a wrong number is worse than null.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof import known

_CONFIG_FLAGS = ("cfg", "config_file", "config", "conf", "conf_file", "config_path", "opt", "exp_file", "f", "file")
_CONFIG_EXT = re.compile(r"\.(ya?ml|py|json|cfg|txt|toml)$", re.IGNORECASE)


def _table_knows(name: str) -> bool:
    n = known.normalise_name(name)
    return any(re.search(pat, n) for pat, *_ in known.KNOWN_MODELS)


def name_from_hrnet_width(params: Any) -> tuple[str, list[str]] | None:
    """`<x>_hrnet` in a model section's NAME completed by the width its second stage's first branch has."""
    for key, pv in params.items():
        if not key.endswith(".name") or not isinstance(pv.value, str) or "hrnet" not in pv.value.lower():
            continue
        head = key[: -len(".name")]
        ch = dict(params.items()).get(f"{head}.extra.stage2.num_channels")  # exactly there, not any leaf
        if ch is None or not isinstance(ch.value, list | tuple) or not ch.value:
            continue
        width = ch.value[0]
        if not isinstance(width, int) or isinstance(width, bool):
            continue
        cand = f"{pv.value.strip().lower()}_w{width}"
        if _table_knows(cand):
            return cand, pv.where + ch.where
    return None


def name_from_conv_body(params: Any) -> tuple[str, list[str]] | None:
    """A GeneralizedRCNN detector named by its CONV_BODY and which heads are on."""
    arch = params.get_path("model.meta_architecture")
    body = params.get_path("model.backbone.conv_body")
    if arch is None or body is None or str(arch.value) != "GeneralizedRCNN" or not isinstance(body.value, str):
        return None
    m = re.fullmatch(r"(R-(?:50|101))-FPN(?:-RETINANET)?", body.value.strip().upper())
    groups = params.get_path("model.resnets.num_groups")
    if m is None or groups is not None and groups.value not in (1, None):
        return None  # `NUM_GROUPS: 32` turns the R-101 body into a ResNeXt, which no row here counts

    def on(flag: str) -> bool:
        pv = params.get_path(f"model.{flag}")
        return pv is not None and pv.value is True

    if on("keypoint_on"):
        return None  # keypoint heads: only the R-50 keypoint row exists and its head differs
    head = "retinanet" if on("retinanet_on") else "mask_rcnn" if on("mask_on") else "faster_rcnn"
    cand = f"{head}_{m.group(1).lower()}"
    return (cand, arch.where + body.where) if _table_knows(cand) else None


def name_from_config_stem(params: Any, positional: list[str] | None = None,
                          args_where: list[str] | None = None) -> tuple[str, list[str]] | None:
    """The stem of the config file the command names (by a config option, or as a positional argument),
    when it starts with a name the table knows."""
    named = [(pv.value, list(pv.where)) for k in _CONFIG_FLAGS
             if (pv := params.get(k)) is not None and isinstance(pv.value, str)
             and (k not in {"f", "file"} or re.search(r"\.(py|ya?ml)$", pv.value.strip()))]  # a generic option
    named += [(a, list(args_where or [])) for a in positional or []]
    for value, where in named:
        if not _CONFIG_EXT.search(value.strip()):
            continue
        stem = PurePosixPath(value.strip()).stem.lower()
        if _table_knows(stem):
            return stem, where
    return None


_BACKBONE_DOMINATES = 60e6


def backbone_is_a_part(params: Any, key: str) -> bool:
    """A `backbone` value is not the trained model when the same config names a model of another name
    (SegmenTron's `MODEL_NAME: PSPNet` + `BACKBONE: resnet101` is PSPNet on a ResNet-101 trunk). A detector's
    or segmenter's heads add some 10-30M parameters, so a backbone of `_BACKBONE_DOMINATES` or more (Swin-L,
    197M) still counts the whole within the 1.5x tolerance and stays the model's name; a smaller one does not."""
    if key != "backbone":
        return False
    bb = params.get("backbone")
    hit = known.lookup_model(bb.value) if bb is not None and isinstance(bb.value, str) else None
    if hit is not None and hit[2] >= _BACKBONE_DOMINATES:
        return False
    for k in ("model_name", "modelname", "model.name", "model.type", "model.arch", "arch"):
        pv = params.get_path(k) if "." in k else params.get(k)
        if pv is not None and isinstance(pv.value, str) and pv.value.strip() and bb is not None \
                and pv.value.strip().lower() != str(bb.value).strip().lower():
            return True
    return False


# a guard that picks one architecture among several by name: `elif base_model == 'mobilenetv2':`
_NAME_CHOICE = re.compile(r"""(==|!=)\s*['"][A-Za-z][\w.-]*['"]|['"][A-Za-z][\w.-]*['"]\s*(==|!=)""")


def one_branch_of_a_name_choice(call: dict[str, Any]) -> bool:
    """A call under a guard comparing something with an architecture-like string is one option of a model
    switch; when the guard cannot be decided, the call is no evidence of which model is trained."""
    return any(_NAME_CHOICE.search(w) and "__name__" not in w for w in call.get("when", []))


_DETECTOR_ARCH = re.compile(r"rcnn|retina|segment|panoptic|detr|fcos|yolo", re.IGNORECASE)


def name_from_backbone_builder(params: Any) -> tuple[str, list[str]] | None:
    """`model.backbone.name: build_<family>_backbone` + `model.backbone.depth: <n>[x]` -> <family><n>."""
    items = dict(params.items())
    nm, depth = items.get("model.backbone.name"), items.get("model.backbone.depth")
    if nm is None or depth is None or not isinstance(nm.value, str):
        return None
    fam = re.fullmatch(r"build_(resnet|resnext|resnest|regnet)_backbone", nm.value.strip().lower())
    n = re.fullmatch(r"(\d{2,3})x?", str(depth.value).strip().lower())
    arch = items.get("model.meta_architecture")
    if fam is None or n is None or arch is not None and _DETECTOR_ARCH.search(str(arch.value)):
        return None
    ibn = items.get("model.backbone.with_ibn")
    cand = f"{fam.group(1)}{n.group(1)}" + ("_ibn_a" if ibn is not None and ibn.value is True else "")
    where = nm.where + depth.where + (ibn.where if ibn is not None and ibn.value is True else [])
    return (cand, where) if _table_knows(cand) else None


def name_from_compound_coef(params: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[str, list[str]] | None:
    """EfficientDet-D<phi> when the job calls an EfficientDet builder and a `phi`/`compound_coef` option is set."""
    pv = params.get("phi", "compound_coef")
    if pv is None or not isinstance(pv.value, int) or isinstance(pv.value, bool) or not 0 <= pv.value <= 7:
        return None
    for rel, c in calls:
        if "efficientdet" in c["func"].rsplit(".", 1)[-1].lower():
            cand = f"efficientdet-d{pv.value}"
            return (cand, [*pv.where, f"{rel}:{c['line']}"]) if _table_knows(cand) else None
    return None
