"""detectron2's reference world size: a config written for N GPUs rescaled to the GPUs the job runs on.

`auto_scale_workers(cfg, world_size)` (detectron2's `DefaultTrainer.auto_scale_workers` and the copies repositories
keep of it) takes `reference_world_size` (`SOLVER.REFERENCE_WORLD_SIZE`, `train.reference_world_size`): when it is
set and differs from the world size, scale = world / reference; the total batch becomes round(batch x scale), so
the per-GPU batch stays the reference's, and the iterations round(max_iter / scale). The config's batch and
iterations are then not the run's; they are rescaled here, or left null when the GPU count is open."""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.static.result import StaticResult

_SCALER = "auto_scale_workers"


def _calls_scaler(res: StaticResult) -> bool:
    return any(c.get("func", "").rsplit(".", 1)[-1] == _SCALER for s in res.py.values() for c in s.get("calls", []))


def _reference(res: StaticResult) -> tuple[int, list[str]] | None:
    pv: Any = res.params.get("reference_world_size")
    if pv is None or isinstance(pv.value, bool):
        return None
    try:
        n = int(pv.value)
    except (TypeError, ValueError):
        return None
    return (n, list(pv.where)) if n > 0 else None


def rescale_to_world(facts: dict[str, Fact], res: StaticResult) -> list[str]:
    """Rescale (in place) the global batch and the steps when the job calls the scaler with a reference world
    size that differs from its GPU count; drop them when the GPU count is open. One warning per change."""
    ref = _reference(res)
    if ref is None or not _calls_scaler(res):
        return []
    gpus = facts.get("num_gpus")
    n = gpus.value if gpus is not None else None
    out: list[str] = []
    if n == ref[0]:
        return out
    for name in ("global_batch_size", "micro_batch_size", "train_steps"):
        f = facts.get(name)
        if f is None or f.value is None:
            continue
        if not n or name == "micro_batch_size":  # the per-GPU batch is derived again from the rescaled total
            out.append(f"{name}: {f.value} dropped: {_SCALER} rescales it from reference_world_size {ref[0]}"
                       + ("" if n else " to a GPU count that is open"))
            del facts[name]
            continue
        scale = n / ref[0]
        new = round(f.value * scale) if name == "global_batch_size" else round(f.value / scale)
        where = [*f.evidence, *ref[1], *(gpus.evidence if gpus is not None else [])]
        facts[name] = Fact(value=new, source="derived", evidence=where,
                           note=f"{_SCALER}: reference world size {ref[0]} -> {n} GPUs")
        out.append(f"{name}: {f.value} -> {new}: {_SCALER} scales the config from {ref[0]} to {n} GPUs")
    return out
