"""TorchX: `torchx run [-s SCHEDULER] [--scheduler_args ..] COMPONENT [component args]`.

The built-in components' documented conventions: `dist.ddp` (and `dist.spmd`) start `-j NNODESxNPROC`
processes (`-j 8` is one node of 8; `-j 1:4x8` is elastic, its node count open) running `--script FILE` or
`-m MODULE`, the script's own arguments after `--`; `utils.python` runs one process. Any other component is
the project's own (`my_components.py:trainer`): its process count is unknown here.
"""

from __future__ import annotations

import re

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import to_int
from schedmate.codeprof.launch.python import entry

_RUN_VALUED = {"s", "scheduler", "cfg", "scheduler_args", "workspace", "parent_run_id", "tee", "log"}
_COMPONENT_VALUED = {"j", "script", "m", "image", "name", "h", "cpu", "gpu", "memMB", "env", "max_retries",
                     "mounts", "rdzv_port", "rdzv_backend", "debug", "tee", "c", "module"}
_J = re.compile(r"^(?:(\d+)(?::(\d+))?x)?(\d+)$")


@family("torchx")
def torchx(ctx: Ctx, toks: list[str]) -> bool:
    L, where = ctx.launch, ctx.where
    if len(toks) < 3 or toks[1] != "run":
        return False
    L.chain.append("torchx")
    i = 2
    while i < len(toks) and toks[i].startswith("-"):
        name, eq, _ = toks[i].lstrip("-").partition("=")
        i += 2 if not eq and name in _RUN_VALUED else 1
    if i >= len(toks):
        return False
    component, rest = toks[i], toks[i + 1:]
    opts: dict[str, str] = {}
    k, tail = 0, []
    while k < len(rest):
        t = rest[k]
        if t == "--":
            tail = rest[k + 1:]
            break
        name, eq, val = t.lstrip("-").partition("=")
        if t.startswith("-") and (eq or name in _COMPONENT_VALUED):
            opts[name] = val if eq else (rest[k + 1] if k + 1 < len(rest) else "")
            k += 1 if eq else 2
        else:
            tail = rest[k:]  # the first bare word: the script's own arguments start here
            break
    kind = component.rsplit("/", 1)[-1]
    if kind in ("dist.ddp", "dist.spmd"):
        m = _J.match(opts.get("j", "1"))
        if m is None:
            L.unknown.setdefault("procs_per_node", [f"torchx -j {opts.get('j')}"])
        else:
            lo, hi, nproc = m.group(1), m.group(2), m.group(3)
            if hi is not None and hi != lo:
                L.notes.append(f"torchx -j {opts['j']}: elastic node count, not fixed")
                L.unknown.setdefault("num_nodes", [f"torchx -j {opts['j']}"])
            else:
                L.put("num_nodes", to_int(lo) if lo else 1, where)
            L.put("procs_per_node", to_int(nproc), where)
        L.put("distributed_launcher", True, where)
    elif kind != "utils.python":
        L.notes.append(f"torchx component {component}: the project's own; its process count is unknown")
        L.unknown.setdefault("num_procs", [f"torchx component {component}"])
    module = opts.get("m") or opts.get("module")
    if module:
        return entry(ctx, None, tail, module=module)
    script = opts.get("script")
    if script:
        return entry(ctx, script, tail)
    return False
