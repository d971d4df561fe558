"""Seconds per step from a throughput and the batch it is counted in: `Speed: 142.3 samples/sec` beside a
configuration dump that names the batch (`Namespace(batch_size=32, ...)`, `--batch-size 32`, `"batch_size": 32`,
`Batch size: 32`). Used only when the log states no time per step and has no timestamps to measure one.

Only a key that is the batch of a training step counts: not a per-device, micro, evaluation or test batch
(`per_device_train_batch_size`, `eval_batch_size`), whose relation to the throughput the log does not state.
"""

from __future__ import annotations

import re

_BATCH = re.compile(r"(?<![\w-])(?:--)?(?P<prefix>[A-Za-z]+[_-])?batch[_ -]?size['\"]?\s*(?:[:=]\s*|\s)['\"]?(?P<n>\d{1,6})\b",
                    re.IGNORECASE)
_NOT_STEP_BATCH = ("per", "micro", "eval", "val", "valid", "test", "dev", "infer", "predict", "mini", "sub", "gen")


def batch_size_of(text: str) -> int | None:
    """The training batch a configuration line names (the first one), else None."""
    low = text.lower()
    if "batch" not in low:
        return None
    for m in _BATCH.finditer(text):
        if (m["prefix"] or "").lower().rstrip("_-") in _NOT_STEP_BATCH:
            continue  # `eval_batch_size`, `micro_batch_size`; a longer compound (`per_device_train_..`) never matches
        n = int(m["n"])
        if n > 0:
            return n
    return None


def step_seconds(samples_per_s: list[float], batch: int | None) -> list[float]:
    """Seconds per step for each throughput reading, given the batch; empty when the batch is unknown."""
    if not batch:
        return []
    return [batch / r for r in samples_per_s if r > 0]
