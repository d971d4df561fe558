"""The global batch of a one-process job that feeds every GPU from one loader (DataParallel, TF towers)."""

from __future__ import annotations

import re
from typing import Any


def loader_global(sp: Any, accum: int, accum_where: list[str]) -> None:
    """One process feeds every GPU: its loader's batch is what all GPUs see per forward/backward pass, so the
    samples per optimizer step are that batch times the accumulation (Caffe `iter_size`, a `grad_accum`
    setting). Called once the accumulation is known; a stated global batch read later still wins."""
    got = getattr(sp, "_loader_global", None)
    if got is None or accum <= 1:
        return
    value, where = got
    sp.r.put("global_batch_size", value * accum, [*where, *accum_where])


_EVAL_WORDS = {"eval", "evaluation", "val", "valid", "validation", "test", "testing", "dev", "infer", "inference"}


def feeds_evaluation(call: dict[str, Any]) -> bool:
    """True when a call's positional arguments name an evaluation split (`DataLoader(eval_dataset,
    batch_size=1)`, `make_loader(cfg.data.val, ...)`): its keywords (the batch size) are the evaluation's, not
    the training's."""
    for arg in call.get("args", []):
        words = {w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(arg)).lower()) if w}
        if words & _EVAL_WORDS:
            return True
    return False
