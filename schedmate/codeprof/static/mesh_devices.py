"""The device count of a job whose config spells out its whole device mesh (MaxText-style `ici_<axis>_parallelism`
within a slice and `dcn_<axis>_parallelism` across slices): the mesh must cover every device the job runs on,
so when every axis is a positive integer (no -1 placeholder that fills the rest) the devices are the product.

Read only on GPUs (`hardware: gpu`, where a device is a GPU; TPU chips are not GPUs) and only when the global
batch is per device x devices with no model axis taking a share: every tensor, pipeline, sequence, expert and
autoregressive axis 1, so the devices are all data-parallel (data and fsdp axes shard the batch).
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import to_int

_AXIS = re.compile(r"^(ici|dcn)_(\w+)_parallelism$")
_BATCH_AXES = {"data", "fsdp", "fsdp_transpose"}


def mesh_devices(params: Any) -> tuple[int, list[str]] | None:
    """(devices, where) of a fully stated GPU mesh whose non-batch axes are all 1, else None."""
    hw = params.get("hardware")
    if hw is None or not str(hw.value).lower().startswith("gpu"):
        return None
    total, where, seen = 1, list(hw.where), set()
    for key, pv in params.items():
        m = _AXIS.match(key.rsplit(".", 1)[-1])
        if not m:
            continue
        n = to_int(pv.value)
        if n is None or n < 1 or (m.group(2) not in _BATCH_AXES and n != 1):
            return None  # a placeholder (-1), or a model axis that takes a share of the devices
        seen.add(m.group(1))
        total *= n
        if n > 1:
            where += pv.where
    if seen != {"ici", "dcn"}:
        return None
    return total, where


def put_mesh_devices(sp: Any) -> None:
    r = sp.r
    if r.val("num_gpus") is not None or r.val("micro_batch_size") is None:
        return
    got = mesh_devices(r.params)
    if got is not None:
        r.put("num_gpus", got[0], got[1], note="the product of the device mesh's ici and dcn axes")
