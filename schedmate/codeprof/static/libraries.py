"""What a training library does when the job's code calls it, when the library itself is not in the workdir.

A job built on detectron2 parses its command line with `default_argument_parser()`, reads its YAML over
`get_cfg()`'s defaults and starts one process per GPU with `launch(main, args.num_gpus, ...)`: none of that
is in the job's own files. Each `Library` below states such conventions as data (the options its parser
adds, its config defaults, the call that spawns the processes, how its config names the model), so the
static pass reads a job on that library the way the library would run it. A library applies only when
the job's code imports it and calls the named entry point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.params import ParamSpace


@dataclass(frozen=True)
class Flag:
    """One option a library's argument parser adds (as argparse would record it)."""

    flags: tuple[str, ...]
    dest: str
    default: Any = None
    action: str | None = None


@dataclass(frozen=True)
class Spawn:
    """A library call that starts the training processes itself: which argument gives the processes per
    node and which the nodes (positional index or keyword)."""

    tail: str
    per_node_arg: int | None = None
    per_node_kw: str | None = None
    nodes_kw: str | None = None
    nodes_arg: int | None = None


@dataclass(frozen=True)
class Library:
    name: str
    imports: tuple[str, ...]
    """top-level import names (or dotted prefixes) of the library"""
    framework: str = "pytorch"
    """the framework (codeprof.facts.FRAMEWORKS) a job on this library runs on"""
    entry_calls: tuple[str, ...] = ()
    """call tails that mean the job uses the library's parser/config (any one)"""
    flags: tuple[Flag, ...] = ()
    config_defaults: dict[str, Any] = field(default_factory=dict)
    spawn: tuple[Spawn, ...] = ()
    model_name: Callable[[ParamSpace], str | None] | None = None
    """the model the library's config describes, as a name of the known-model table"""
    gpu: bool = True
    """a job on this library trains on GPUs (one per process unless it says otherwise)"""
    cli: tuple[str, ...] = ()
    """the library's own command-line programs: a job started by one of them uses the library"""
    batch: Callable[[ParamSpace, int | None], dict[str, tuple[int, list[str]]]] | None = None
    """how the library turns its batch settings into (micro, accumulation, global) for a GPU count"""
    procs: Callable[[ParamSpace], tuple[int | None, list[str]] | None] | None = None
    """the training processes (one per GPU) the library starts itself from its config, when it says
    (a count of None: one per visible GPU)"""


def _detectron2_model(P: ParamSpace) -> str | None:
    """detectron2 configs describe the model by its meta-architecture, backbone depth and heads."""

    def val(key: str) -> Any:
        pv = P.get_path(key)
        return None if pv is None else pv.value

    arch = str(val("model.meta_architecture") or "")
    depth = val("model.resnets.depth")
    backbone = str(val("model.backbone.name") or "")
    if arch == "MaskFormer":  # MaskFormer / Mask2Former (by their transformer decoder) over a ResNet or Swin
        second = "MultiScale" in str(val("model.mask_former.transformer_decoder_name") or "")
        family = "mask2former" if second else "maskformer"
        if "resnet" in backbone and depth in (50, 101):
            return f"{family}_r{depth}"
        swin = {96: None, 128: "b", 192: "l"}.get(val("model.swin.embed_dim"))  # type: ignore[arg-type]
        return f"{family}_swin_{swin}" if "Swin" in backbone and swin else None
    if depth not in (50, 101) or "resnet" not in backbone:
        return None
    fpn = "fpn" in backbone
    if arch == "RetinaNet" and fpn:
        return f"retinanet_r{depth}"
    if arch == "GeneralizedRCNN" and fpn:
        if val("model.keypoint_on") is True and depth == 50:
            return "keypoint_rcnn_r50"
        if val("model.mask_on") is True:
            return f"mask_rcnn_r{depth}"
        return f"faster_rcnn_r{depth}"
    return None


LIBRARIES: tuple[Library, ...] = (
    Library(
        name="detectron2",
        imports=("detectron2",),
        entry_calls=("default_argument_parser", "get_cfg", "default_setup"),
        # detectron2.engine.defaults.default_argument_parser
        flags=(
            Flag(("--config-file",), "config_file", ""),
            Flag(("--resume",), "resume", False, "store_true"),
            Flag(("--eval-only",), "eval_only", False, "store_true"),
            Flag(("--num-gpus",), "num_gpus", 1),
            Flag(("--num-machines",), "num_machines", 1),
            Flag(("--machine-rank",), "machine_rank", 0),
        ),
        # detectron2.config.defaults (get_cfg()): the values a YAML that does not set them runs with
        config_defaults={
            "SOLVER.IMS_PER_BATCH": 16,
            "SOLVER.MAX_ITER": 40000,
            "MODEL.META_ARCHITECTURE": "GeneralizedRCNN",
            "MODEL.BACKBONE.NAME": "build_resnet_backbone",
            "MODEL.RESNETS.DEPTH": 50,
            "MODEL.MASK_ON": False,
            "MODEL.KEYPOINT_ON": False,
        },
        # detectron2.engine.launch(main_func, num_gpus_per_machine, num_machines=1, ...)
        spawn=(Spawn("launch", per_node_arg=1, per_node_kw="num_gpus_per_machine", nodes_kw="num_machines",
                     nodes_arg=2),),
        model_name=_detectron2_model,
    ),
)


def _ultralytics_batch(P: ParamSpace, gpus: int | None) -> dict[str, tuple[int, list[str]]]:
    """Ultralytics: `batch` is the total over the GPUs (each gets batch // GPUs), and the trainer accumulates
    round(nbs / batch) batches (at least one) before each optimizer step."""
    batch, nbs = P.get("batch"), P.get("nbs")
    if batch is None or not isinstance(batch.value, int) or batch.value <= 0:
        return {}
    out = {}
    if gpus:
        out["micro_batch_size"] = (batch.value // gpus, batch.where)
    if nbs is not None and isinstance(nbs.value, int) and nbs.value > 0:
        accum = max(round(nbs.value / batch.value), 1)
        out["grad_accum_steps"] = (accum, [*batch.where, *nbs.where])
        if gpus:
            out["global_batch_size"] = ((batch.value // gpus) * gpus * accum, [*batch.where, *nbs.where])
    return out


def _super_gradients_procs(P: ParamSpace) -> tuple[int | None, list[str]] | None:
    """super-gradients: a recipe's top-level `multi_gpu` and `num_gpus` make `Trainer.train_from_config` start
    one process per GPU itself (DDP); `multi_gpu: Off` (YAML reads it as false) trains in one process."""
    mode, n = P.get_path("multi_gpu"), P.get_path("num_gpus")
    if mode is None:
        return None
    m = str(mode.value).upper()
    if mode.value is False or m in {"OFF", "NONE", "FALSE"}:
        return 1, mode.where
    if m in {"DDP", "DISTRIBUTED_DATA_PARALLEL"} and n is not None and isinstance(n.value, int) and n.value > 0:
        return n.value, [*mode.where, *n.where]
    if m == "AUTO":
        return None, mode.where  # DDP over every visible GPU
    return None  # DataParallel or an unknown mode


LIBRARIES = (
    *LIBRARIES,
    Library(
        name="super-gradients",
        imports=("super_gradients",),
        entry_calls=("train_from_config", "train_from_recipe"),
        procs=_super_gradients_procs,
    ),
    Library(
        name="ultralytics",
        imports=("ultralytics",),
        entry_calls=("YOLO", "RTDETR"),
        cli=("yolo",),
        # ultralytics/cfg/default.yaml
        config_defaults={"epochs": 100, "batch": 16, "nbs": 64},
        batch=_ultralytics_batch,
    ),
    Library(
        name="openmmlab",
        imports=("mmengine", "mmcv", "mmdet", "mmseg", "mmpretrain", "mmcls", "mmaction", "mmyolo", "mmocr",
                 "mmpose", "mmrotate", "mmdet3d", "mmagic", "mmedit", "mmtrack"),
        # mmengine's Runner and the 1.x train_* APIs: one process per GPU, `launcher='none'` is one GPU
        entry_calls=("from_cfg", "Runner", "train_detector", "train_segmentor", "train_model"),
    ),
)


def libraries_used(imports: set[str], call_tails: set[str], programs: set[str] = frozenset()) -> list[Library]:
    """The libraries whose import and entry call both appear in the code read, or whose own program
    started the job."""
    out = []
    for lib in LIBRARIES:
        imported = any(i == p or i.startswith(p + ".") for i in imports for p in lib.imports)
        if (imported and (not lib.entry_calls or call_tails & set(lib.entry_calls))) or programs & set(lib.cli):
            out.append(lib)
    return out
