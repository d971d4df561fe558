"""Accumulation left unset next to an unset global batch: the Megatron-style resolution gives 1.

Trainers that take a micro batch, an optional global batch and an optional accumulation count (Megatron's
`--global-batch-size`, LiBai's `train.global_batch_size` / `train.num_accumulation_steps`, set to None in
their default configs) derive the missing one from the others: with neither the global batch nor the
accumulation given, the accumulation is 1 and the global batch micro x data-parallel size. The reading
needs both settings present and explicitly empty (None / null) in the job's own config, and no other
accumulation or global batch anywhere: an absent setting says nothing.
"""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.params import CODE_DEFAULT
from schedmate.codeprof.static.batch_units import ACCUM_NAME
from schedmate.codeprof.static.names import ACCUM, GLOBAL


def _empty(params: Any, match: Any) -> list[str] | None:
    """Where the job's config sets a matching setting to None (None when no such setting, or one has a value)."""
    where: list[str] = []
    for key, pv in params.items():
        leaf = key.rsplit(".", 1)[-1]
        if not match(leaf) or pv.layer < CODE_DEFAULT:
            continue
        if pv.value is not None and str(pv.value).strip().lower() not in {"", "none", "null"}:
            return None
        where += pv.where
    return where or None


def null_accumulation(sp: Any) -> None:
    r = sp.r
    if r.val("grad_accum_steps") is not None or r.val("global_batch_size") is not None:
        return
    if r.val("micro_batch_size") is None or sp._ds is not None:
        return
    acc = _empty(r.params, lambda leaf: leaf in ACCUM or ACCUM_NAME.match(leaf))
    glob = _empty(r.params, lambda leaf: leaf in GLOBAL)
    if acc and glob:
        r.put("grad_accum_steps", 1, [*acc, *glob],
              note="accumulation and global batch both left None: the trainer resolves accumulation 1")
