"""The batch of a JAX job fed by a host-side loader (a torch `DataLoader`, a NumPy iterator).

A JAX program runs one process per host; that process loads a batch and shards it over its local devices
(`jax.pmap`, `shard`, `jax.local_device_count()`, a device mesh). The loader's batch is therefore the host's
batch, not a device's: with one process it is the global batch, and the per-device (micro) batch is it
divided by the devices, which is known only when the GPU count is. A JAX job that names no multi-device API
trains on one device, and its loader batch is the micro batch as for any one-device job.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import to_int

# names of JAX's multi-device APIs: a program that names one splits its host batch over the local devices
_MULTI_DEVICE = re.compile(r"\b(?:pmap|pjit|shard_map|xmap|local_device_count|device_count|local_devices|"
                           r"device_put_replicated|device_put_sharded|create_device_mesh|make_mesh|Mesh|"
                           r"NamedSharding|PositionalSharding|shard_prng_key|shard)\b")


def multi_device_site(py: dict[str, Any], read_text: Any) -> str | None:
    """file:line of the first multi-device JAX name in the files read (calls, decorators, references)."""
    for rel in py:
        for k, line in enumerate((read_text(rel) or "").splitlines(), 1):
            code = line.split("#", 1)[0]
            if _MULTI_DEVICE.search(code) and ("jax" in code or "jnp" in code or "flax" in code or "pmap" in code):
                return f"{rel}:{k}"
    return None


def host_loader_batch(sp: Any, micro: tuple[Any, list[str]]) -> tuple[Any, list[str]] | None:
    """A JAX job's loader batch read as the host's batch: the global batch of a one-process launch, and the
    micro batch only when the GPU count is known (None otherwise: a guess would be a wrong number)."""
    L = sp.r.launch
    value = to_int(micro[0])
    if value is None or L is None or not L.get("single_process"):
        return micro
    site = multi_device_site(sp.r.py, sp.wd.read_text)
    if site is None:
        return micro  # one device: the loader's batch is the device's
    where = [*micro[1], site]
    sp.r.put("global_batch_size", value, where, note="jax: one process shards its loader batch over its devices")
    world = sp._world
    if world and value % world == 0:
        return value // world, where
    sp.r.notes.append(f"micro_batch_size: {site} shards the host batch {value} over every local device; "
                      "the device count is set at submission")
    return None
