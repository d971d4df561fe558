"""A per-device batch setting the input pipeline multiplies by the device count: `ds.batch(num_devices *
batch_size)` with `num_devices = jax.device_count()` (or `jax.local_device_count()`,
`strategy.num_replicas_in_sync`), in the function that builds the loader and receives the setting as a
parameter (`make_loader(ds, n_dev, config.batch_size)`). The setting is then a device's batch (the micro
batch) and the pipeline's batch the global one, which is known once the GPU count is."""

from __future__ import annotations

import ast
import re
from typing import Any

_DEVICE_COUNT = re.compile(r"(?:local_)?device_count\(\)|num_replicas_in_sync")
_BATCH_NAME = re.compile(r"batch_?size|^bs$|^batch$", re.IGNORECASE)


def _device_names(text: str) -> set[str]:
    """Names the file assigns from a device count (`num_devices = jax.device_count()`)."""
    return {m.group(1) for m in re.finditer(r"(\w+)\s*=\s*[\w.]*(?:(?:local_)?device_count\(\)|num_replicas_in_sync\b)",
                                            text)}


def _factors(expr: str) -> list[str] | None:
    """The two factors of `a * b` as source text, or None."""
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return [ast.unparse(node.left), ast.unparse(node.right)]
    return None


def _split(expr: str, devices: set[str]) -> str | None:
    """The batch factor of `<device count> * <batch>` (either order), or None."""
    fs = _factors(expr)
    if fs is None:
        return None
    for dev, batch in (fs, fs[::-1]):
        if (_DEVICE_COUNT.search(dev) or dev.rsplit(".", 1)[-1] in devices) \
                and _BATCH_NAME.search(batch.rsplit(".", 1)[-1]):
            return batch
    return None


def device_times_batch(py: dict[str, Any], read_text: Any, calls: list[tuple[str, dict[str, Any]]],
                       resolver: Any) -> tuple[int, list[str]] | None:
    """(per-device batch, evidence) of a `.batch(<devices> * <batch>)` call in a file read; the batch name is
    resolved directly, or through the argument every call of its enclosing function passes for it (all calls
    must agree); None when unsure."""
    for rel, s in py.items():
        text = read_text(rel) or ""
        if ".batch(" not in text:
            continue
        devices = _device_names(text) | {p for f in s.get("functions", []) for p in (f.get("params") or [])
                                         if re.fullmatch(r"n(um)?_?(devices|replicas|gpus)", p)}
        for c in s.get("calls", []):
            if not c["func"].endswith(".batch"):
                continue
            arg = c["kwargs"].get("batch_size") or (c["args"][0] if c["args"] else None)
            batch = _split(arg, devices) if arg else None
            if batch is None:
                continue
            where = f"{rel}:{c['line']}"
            fn = next((f for f in s.get("functions", []) if f["line"] <= c["line"] <= (f.get("end") or 0)), None)
            params = list(fn.get("params") or []) if fn else []
            if batch in params:
                values = set()
                ev: list[str] = []
                k = params.index(batch)
                for crel, cc in calls:
                    if cc["func"].rsplit(".", 1)[-1] != fn["name"]:
                        continue
                    src = cc["kwargs"].get(batch) or (cc["args"][k] if k < len(cc["args"]) else None)
                    ok, v, e = resolver.eval(src) if src else (False, None, [])
                    if not (ok and isinstance(v, int) and not isinstance(v, bool) and v > 0):
                        return None
                    values.add(v)
                    ev += [f"{crel}:{cc['line']}", *e]
                if len(values) == 1:
                    return values.pop(), [*ev, where]
                return None
            ok, v, e = resolver.eval(batch)
            if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return v, [*e, where]
            return None
    return None
