"""PaddlePaddle's launcher, `python -m paddle.distributed.launch [--gpus 0,1,...] [--nnodes N] script.py`: one
process per listed GPU (or `--nproc_per_node`), every visible GPU when neither is given."""

from __future__ import annotations

from schedmate.codeprof.launch.context import Ctx
from schedmate.codeprof.launch.model import scan_options, to_int
from schedmate.codeprof.launch.python import entry

_VALUED = {"gpus", "devices", "nnodes", "nproc_per_node", "ips", "master", "log_dir", "job_id", "rank", "run_mode",
           "selected_gpus", "selected_devices"}


def paddle_launch(ctx: Ctx, toks: list[str], i: int) -> bool:
    L, where = ctx.launch, ctx.where
    opts, i = scan_options(toks, i, _VALUED, set())
    listed = next((opts[k] for k in ("gpus", "devices", "selected_gpus", "selected_devices")
                   if isinstance(opts.get(k), str)), None)
    npn = opts.get("nproc_per_node")
    if isinstance(listed, str) and all(d.strip().isdigit() for d in listed.split(",") if d.strip()):
        L.put("procs_per_node", len([d for d in listed.split(",") if d.strip()]), where)
    elif isinstance(npn, str):
        L.put("procs_per_node", to_int(npn), where, raw=npn)
    else:
        L.unknown.setdefault("procs_per_node", ["paddle.distributed.launch starts one process per visible GPU"])
    nn = opts.get("nnodes")
    L.put("num_nodes", to_int(nn) if isinstance(nn, str) else 1, where, override=isinstance(nn, str),
          raw=nn if isinstance(nn, str) else None)
    L.put("distributed_launcher", True, where)
    L.put("gpu_framework", "paddle", where, override=False)
    return entry(ctx, toks[i], toks[i + 1:]) if i < len(toks) else False
