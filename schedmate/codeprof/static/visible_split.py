"""A one-process job that splits each batch over `torch.cuda.device_count()` GPUs itself (a batch divided by
the visible GPU count, or torch's functional `nn.parallel.data_parallel` with no device list): it drives every
visible GPU, so its GPU count is whatever the submission makes visible."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_MANY_PROCESSES = {"spawn", "start_processes", "init_process_group", "DistributedDataParallel", "Process",
                   "initialize_model_parallel", "init_distributed"}
_COUNT = r"(?:torch\.)?cuda\.device_count\(\)"


def _split_pattern(names: set[str]) -> re.Pattern[str]:
    counts = "|".join([_COUNT, *(re.escape(n) for n in sorted(names))])
    return re.compile(rf"\b\w*batch\w*\s*(?:%|//|/)\s*(?:{counts})(?!\w)", re.IGNORECASE)


def batch_split_over_visible_gpus(summaries: dict[str, dict[str, Any]],
                                  read_text: Callable[[str], str | None]) -> str | None:
    """file:line where the job divides a batch by the visible GPU count (`batch_size %
    torch.cuda.device_count()`, `bs // n_gpus` with `n_gpus = torch.cuda.device_count()`), or calls
    `nn.parallel.data_parallel(model, inputs)` without `device_ids`; None when it does neither."""
    tails = {c["func"].rsplit(".", 1)[-1] for s in summaries.values() for c in s.get("calls", [])}
    if tails & _MANY_PROCESSES:
        return None  # processes of their own (`mp.spawn` over the GPUs, DDP): each divides its share
    for rel, s in summaries.items():
        for c in s.get("calls", []):
            if c["func"].endswith("parallel.data_parallel") and "device_ids" not in c["kwargs"] \
                    and len(c.get("args", [])) < 3 and not c.get("spread"):
                return f"{rel}:{c['line']}"
        text = read_text(rel)
        if not text or "device_count" not in text:
            continue
        names = {a["target"] for a in s.get("assigns", [])
                 if re.fullmatch(r"\w+", a["target"]) and re.fullmatch(rf"\s*{_COUNT}\s*", a["expr"])}
        m = _split_pattern(names).search(text)
        if m is not None:
            return f"{rel}:{text.count(chr(10), 0, m.start()) + 1}"
    return None
