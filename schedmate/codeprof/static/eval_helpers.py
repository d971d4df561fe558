"""A loader built inside a helper named for evaluation (`def create_val_loader(args): ... DataLoader(dataset,
batch_size=1)`, `def build_test_dataloader(cfg)`) feeds the evaluation, whatever dataset it reads: its batch is
never the training's per-process batch. A helper whose name also says training (`get_train_val_loaders`) builds
both and is left to the other checks (`loader_batch.training_loaders`)."""

from __future__ import annotations

import re

_EVAL = {"eval", "evaluation", "val", "valid", "validation", "test", "testing", "infer", "inference"}
_TRAIN = {"train", "training", "trainval", "fit"}


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()) if w}


def evaluation_helper(function: str | None) -> bool:
    """True when `function` (the name of the def around a loader call) is named for evaluation only."""
    if not function:
        return False
    words = _words(function)
    return bool(words & _EVAL) and not words & _TRAIN
