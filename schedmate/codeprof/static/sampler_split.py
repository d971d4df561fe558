"""A batch sampler wrapped in one that splits each batch over the ranks (`BatchSampler(sampler, args.batch_size)`
then `ShardedBatches(batches, rank=rank, world_size=world)`): the configured batch is the total per step, and each
process sees its share of it."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import to_int

_WORLD_KEYWORDS = ("world_size", "num_replicas", "num_shards", "nranks", "num_processes")
_EVAL = re.compile(r"eval|valid|(^|[._])val([._]|$)|test|predict|infer", re.IGNORECASE)


def _batch_of(call: dict[str, Any]) -> str | None:
    """The batch expression of a `BatchSampler(sampler, batch_size, drop_last)` call."""
    if "batch_size" in call["kwargs"]:
        return str(call["kwargs"]["batch_size"])
    args = call.get("args", [])
    return str(args[1]) if len(args) >= 2 else None


def _summaries(sp: Any) -> list[tuple[str, dict[str, Any]]]:
    """The files read, then the entry's local imports left past the file budget that build a `BatchSampler`
    (scanned here: a trainer module holding the loader is often one of them)."""
    from schedmate.codeprof.pyast import analyze_python

    out = list(sp.r.py.items())
    for rel in getattr(sp, "over_budget", []):
        text = sp.wd.read_text(rel) or ""
        if "BatchSampler(" not in text:
            continue
        try:
            out.append((rel, analyze_python(text)))
        except (SyntaxError, ValueError, RecursionError):
            continue
    return out


def split_sampler_batches(sp: Any) -> list[tuple[int, str]]:
    """(value, file:line) of each training batch that a rank-splitting batch sampler divides over the processes:
    a call told the world size by keyword wrapping a variable bound on an
    earlier line of the same file to a `BatchSampler(..., batch)` call. Evaluation batches (`eval_batch_size`)
    are left out; a batch the sources leave open is too."""
    out: list[tuple[int, str]] = []
    for rel, s in _summaries(sp):
        calls = [c for c in s["calls"] if c["func"].rsplit(".", 1)[-1] == "BatchSampler"]
        for c in s["calls"]:
            if not any(k in c["kwargs"] for k in _WORLD_KEYWORDS) or not c.get("args"):
                continue
            inner = str(c["args"][0])
            bound = [a for a in s["assigns"] if a["target"] == inner and a["line"] < c["line"]
                     and a["expr"].split("(", 1)[0].rsplit(".", 1)[-1] == "BatchSampler"]
            if not bound:
                continue
            source = max(bound, key=lambda a: a["line"])
            made = next((b for b in calls if b["line"] == source["line"] and b is not c), None)
            expr = _batch_of(made) if made is not None else None
            if expr is None or _EVAL.search(expr):
                continue
            ok, v, _ = sp._resolver.eval(expr)
            if ok and to_int(v) and to_int(v) > 0:
                out.append((to_int(v), f"{rel}:{c['line']}"))
    return out


def split_by_sampler(sp: Any, micro: tuple[Any, list[str]] | None) -> str | None:
    """file:line of a rank-splitting batch sampler that divides the batch found as `micro` (the same value):
    that batch is the global one."""
    if micro is None or not to_int(micro[0]):
        return None
    return next((where for v, where in split_sampler_batches(sp) if v == to_int(micro[0])), None)


def device_count_names(py: dict[str, Any]) -> set[str]:
    """Leaf names the job assigns the visible GPU count to (`args.gpu_total = torch.cuda.device_count()`)."""
    return {a["target"].rsplit(".", 1)[-1] for s in py.values() for a in s["assigns"]
            if not a["op"] and re.fullmatch(r"\s*(torch\.)?(cuda\.)?device_count\(\)\s*", a["expr"])}


def splits_over_processes(text: str, py: dict[str, Any]) -> bool:
    """`text` divides a batch by the process or GPU count: a world-size name (batch.py's `_SPLIT_OVER_PROCESSES`)
    or a name the job sets to `torch.cuda.device_count()`."""
    from schedmate.codeprof.static.batch import _SPLIT_OVER_PROCESSES

    if _SPLIT_OVER_PROCESSES.search(text):
        return True
    names = device_count_names(py)
    return bool(names) and re.search(r"batch_?size\w*\)?\s*//?\s*\(?\s*[\w.]*?\b(" + "|".join(map(re.escape, sorted(names)))
                                     + r")\b", text, re.IGNORECASE) is not None


def split_loader_batch(bm: Any, micro: tuple[Any, list[str]]) -> tuple[tuple[Any, list[str]] | None, bool]:
    """A training loader's batch read from a setting the code divides over the processes beforehand, on a path
    the run does not visibly skip (`cfg.batch_size = int(cfg.batch_size / args.n_gpus)` with
    `n_gpus = torch.cuda.device_count()` under `if args.distributed:`): the setting is the global batch, put here;
    the per-process batch is it over the world when the world is known, else open.
    Returns (the micro batch, whether the split applied)."""
    total = to_int(micro[0])
    if not total:
        return micro, False
    for rel, s in bm.r.py.items():
        for a in s["assigns"]:
            name = re.search(r"([\w.]*batch_?size\w*)\)?\s*//?", a["expr"], re.IGNORECASE)
            if a["op"] or name is None or a["target"].rsplit(".", 1)[-1] != name.group(1).rsplit(".", 1)[-1] \
                    or not splits_over_processes(a["expr"], bm.r.py) or bm._resolver.truth(a.get("when", [])) is False:
                continue  # only `x.batch_size = int(x.batch_size / n)`: the setting itself, divided in place
            leaf = a["target"].rsplit(".", 1)[-1]
            held = [pv for k, pv in bm.r.params.items() if k.rsplit(".", 1)[-1] == leaf and to_int(pv.value) == total
                    and pv.where and all(w in micro[1] for w in pv.where)]
            if not held:
                continue
            split = f"{rel}:{a['line']}"
            bm.r.put("global_batch_size", total, [*micro[1], split],
                     note="the code splits this batch over the processes")
            world = bm._world
            return ((total // world, [*micro[1], split]) if world and total % world == 0 else None), True
    return micro, False
