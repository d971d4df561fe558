"""An OpenMMLab-style optimizer hook's `update_interval`: gradient accumulation, and the per-GPU loader
batch the job's own training code may divide by it.

Optimizer hooks of the mmcv 1.x era that accumulate gradients take `optimizer_config =
dict(update_interval=N)` (the Apex `DistOptimizerHook` of Swin-based codebases, the self-supervised
toolboxes' hooks): the optimizer steps once every N iterations. Some codebases also build the training
loader with `samples_per_gpu // update_interval`, so that the config's per-GPU number is the batch per
optimizer step and each forward pass sees a slice of it; that division is read from the job's own
training code, never assumed.
"""

from __future__ import annotations

import re

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.params import ParamSpace
from schedmate.codeprof.reader import Workdir

KEY = "optimizer_config.update_interval"
# `videos_per_gpu=cfg.data.get('videos_per_gpu', 1) // cfg.optimizer_config.get('update_interval', 1)`
_DIVIDED = re.compile(r"_per_gpu\b[^#\n]*//[^#\n]*\bupdate_interval\b")


def _division(wd: Workdir) -> str | None:
    """file:line of a training-code line that divides a per-GPU loader batch by `update_interval`."""
    for rel in sorted(wd.hashes):
        if not rel.endswith(".py"):
            continue
        text = wd.read_text(rel) or ""
        if "update_interval" not in text:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if _DIVIDED.search(line.split("#", 1)[0]):
                return f"{rel}:{n}"
    return None


def apply_update_interval(facts: dict[str, Fact], params: ParamSpace, wd: Workdir) -> list[str]:
    """Set `grad_accum_steps` from the hook's `update_interval` (when nothing else set it) and, when the
    training code divides the loader batch by it, the micro batch; notes saying what was done."""
    pv = params.get(KEY)
    n = pv.value if pv is not None else None
    if not isinstance(n, int) or isinstance(n, bool) or n < 2:
        return []
    have = facts.get("grad_accum_steps")
    notes: list[str] = []
    if have is None or have.value is None:
        facts["grad_accum_steps"] = Fact(value=n, source="static", evidence=list(pv.where),
                                         note="optimizer hook update_interval: one optimizer step every N iterations")
        notes.append(f"grad_accum_steps: {n} from {KEY} ({pv.where[0] if pv.where else 'config'})")
    elif have.value != n:
        return []  # another accumulation setting decides; the loader division is not this one's
    micro = facts.get("micro_batch_size")
    where = _division(wd)
    if where and micro is not None and isinstance(micro.value, int) and micro.value % n == 0:
        facts["micro_batch_size"] = Fact(value=micro.value // n, source="static", evidence=[*micro.evidence, where],
                                         note=f"the loader gets the per-GPU batch // update_interval ({where})")
        notes.append(f"micro_batch_size: {micro.value} // {n} ({where} divides the loader batch)")
    return notes
