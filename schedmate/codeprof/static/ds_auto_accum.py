"""Accumulation behind a DeepSpeed config left to "auto": one step per micro batch.

A DeepSpeed JSON whose `gradient_accumulation_steps` (and `train_batch_size`) say `"auto"`, or leave them
out, takes the value from whatever fills the config: the Hugging Face Trainer (its `TrainingArguments`
accumulate 1 unless told otherwise) or Accelerate (`--gradient_accumulation_steps`, default 1). When no
source names an accumulation anywhere else (no command-line option, config key, keyword argument or
assignment), the run accumulates nothing: the global batch is micro x data-parallel size. Code that only
reads the resolved value back out of the DeepSpeed config
(`n = accelerator.state.deepspeed_plugin.deepspeed_config["gradient_accumulation_steps"]`) sets nothing.
"""

from __future__ import annotations

import re
from typing import Any

_AUTO = (None, "auto")
_READS_DS_CONFIG = re.compile(r"deepspeed_config\s*\[|deepspeed_plugin", re.IGNORECASE)


def _names_accumulation(sp: Any, accum_name: re.Pattern[str]) -> bool:
    """Whether any source other than the DeepSpeed config names an accumulation setting."""
    r = sp.r
    if r.launch and r.launch.get("grad_accum"):
        return True
    if any(accum_name.search(k) for k, _ in r.params.items()):
        return True
    for s in r.py.values():
        for c in s["calls"]:
            if accum_name.search(c["func"]) and not re.search(r"eval", c["func"], re.IGNORECASE):
                return True
            if any(accum_name.search(k) for k in c["kwargs"]):
                return True
        for a in s["assigns"]:
            if accum_name.search(a["target"]) and not _READS_DS_CONFIG.search(a.get("expr") or ""):
                return True
    return False


def ds_auto_accumulation(sp: Any) -> tuple[int, list[str]] | None:
    """1 (with the DeepSpeed config as evidence) when that config leaves accumulation and the global batch
    to "auto" (or out) and nothing else names an accumulation; None otherwise."""
    ds = getattr(sp, "_ds", None)
    if not ds or not isinstance(ds.get("cfg"), dict):
        return None
    cfg = ds["cfg"]
    code_keys = ds.get("code_keys", {})
    for key in ("gradient_accumulation_steps", "train_batch_size"):
        if cfg.get(key) not in _AUTO or key in code_keys:
            return None
    from schedmate.codeprof.static import _ACCUM_NAME  # the package's own test of an accumulation name

    if _names_accumulation(sp, _ACCUM_NAME):
        return None
    line = ds.get("lines", {}).get("gradient_accumulation_steps")
    where = ds.get("ev") or (f"{ds['path']}:{line}" if line else ds.get("path"))
    return 1, [str(where)] if where else []
