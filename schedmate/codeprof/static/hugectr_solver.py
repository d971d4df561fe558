"""HugeCTR's solver: `hugectr.CreateSolver(batchsize=..., vvgpu=[[0, 1], ...])` (documented) takes the global batch
of one training iteration and the GPUs per node (one list per node); one process drives them all and each GPU
gets an equal share of the batch. So the global batch is `batchsize`, the GPU count the ids listed, and the
per-GPU batch the one over the other when it divides.
"""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.launch import to_int


def _gpus(value: Any) -> int | None:
    if isinstance(value, (list, tuple)) and value and all(isinstance(n, (list, tuple)) for n in value):
        ids = [g for node in value for g in node]
        return len(ids) if ids and all(isinstance(g, int) for g in ids) else None
    return None


def hugectr_solver(sp: Any) -> None:
    r = sp.r
    if not sp._imports_any("hugectr"):
        return
    for rel, c in sp._find_calls("CreateSolver"):
        kw = c["kwargs"]
        if "batchsize" not in kw:
            continue
        where = f"{rel}:{c['line']}"
        ok, batch, ev = sp._resolver.eval(kw["batchsize"])
        batch = to_int(batch) if ok else None
        if not batch or batch <= 0:
            return
        r.put("global_batch_size", batch, [where, *ev], note="HugeCTR CreateSolver batchsize is the global batch")
        if "vvgpu" not in kw:
            return  # the GPUs are then the solver's default: not read here
        ok, v, ev_g = sp._resolver.eval(kw["vvgpu"])
        gpus = _gpus(v) if ok else None
        if gpus is None:
            return
        if r.val("num_gpus") is None:
            r.put("num_gpus", gpus, [where, *ev_g], note="HugeCTR vvgpu lists the GPUs of each node")
        if r.val("micro_batch_size") is None and r.val("num_gpus") == gpus and batch % gpus == 0:
            r.put("micro_batch_size", batch // gpus, [where, *ev, *ev_g],
                  note="HugeCTR splits the global batch evenly over the GPUs")
        return
