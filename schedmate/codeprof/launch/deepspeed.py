"""The `deepspeed` launcher: --num_gpus/--num_nodes, --include, or a hostfile (slots per node)."""

from __future__ import annotations

import re

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import scan_options, to_int
from schedmate.codeprof.launch.python import entry

_VALUED = {"num_gpus", "num_nodes", "hostfile", "include", "exclude", "master_port", "master_addr", "launcher",
           "launcher_args", "node_rank", "num_accelerators", "ssh_port"}
_FLAGS = {"no_python", "no_local_rank", "module", "force_multi", "autotuning", "elastic_training",
          "bind_cores_to_rank"}


@family("deepspeed")
def deepspeed(ctx: Ctx, toks: list[str]) -> bool:
    L, where = ctx.launch, ctx.where
    L.chain.append("deepspeed")
    opts, i = scan_options(toks, 1, _VALUED, _FLAGS)
    ng = opts.get("num_gpus", opts.get("num_accelerators"))
    if isinstance(ng, str):
        L.put("procs_per_node", to_int(ng), where, raw=ng)
    nn = opts.get("num_nodes")
    if isinstance(nn, str):
        L.put("num_nodes", to_int(nn), where, raw=nn)
    inc = opts.get("include")
    if isinstance(inc, str):
        hosts = [h for h in inc.split("@") if h]
        L.put("num_nodes", len(hosts), where, override="num_nodes" not in opts)
        # `localhost:0,1,2,3` names 4 slots; `localhost:` with an empty list (a GPU list left to the
        # submitter) names none that can be counted
        counts = {len([s for s in h.split(":", 1)[1].split(",") if s.strip()]) or None if ":" in h else None
                  for h in hosts}
        if len(counts) == 1 and None not in counts:
            L.put("procs_per_node", counts.pop(), where, override="num_gpus" not in opts)
    hf = opts.get("hostfile")
    if isinstance(hf, str):
        hostfile(ctx, hf, explicit_nodes="num_nodes" in opts or isinstance(inc, str),
                 explicit_slots="num_gpus" in opts)
    elif "num_nodes" not in opts and not isinstance(inc, str):
        L.put("num_nodes", 1, where, override=False)  # no hostfile: runs on the local node only
    cvd = [d for d in (L.env.get("CUDA_VISIBLE_DEVICES") or "").split(",") if d.strip()]
    if "num_gpus" not in opts and "num_accelerators" not in opts and not isinstance(inc, str) and cvd \
            and all(d.strip().isdigit() for d in cvd):
        # with no --num_gpus/--include the launcher starts one process per GPU it can see
        L.put("procs_per_node", len(cvd), ["env:CUDA_VISIBLE_DEVICES"], override=False)
    if "num_gpus" not in opts and "num_accelerators" not in opts and L.get("procs_per_node") is None \
            and "procs_per_node" not in L.unknown:
        L.unknown["procs_per_node"] = ["deepspeed without --num_gpus (every GPU of the node)"]
    L.put("distributed_launcher", True, where)
    if i >= len(toks):
        return False
    if opts.get("module") is True:
        return entry(ctx, None, toks[i + 1 :], module=toks[i])
    if opts.get("no_python") is True:
        return ctx.dispatch(toks[i:])
    return entry(ctx, toks[i], toks[i + 1 :])


def hostfile(ctx: Ctx, path: str, explicit_nodes: bool, explicit_slots: bool) -> None:
    """Nodes and slots from an MPI/DeepSpeed hostfile (`host slots=8`, `host:8`)."""
    L = ctx.launch
    rel = ctx.wd.rel(path, L.base)
    text = ctx.wd.read_text(rel) if rel else None
    if text is None:
        L.notes.append(f"hostfile {path} not readable in the workdir")
        return
    L.files.append(rel)  # type: ignore[arg-type]
    hosts: list[tuple[int, int | None]] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.search(r"slots\s*=\s*(\d+)", line) or re.search(r":(\d+)\s*$", line)
        hosts.append((n, int(m.group(1)) if m else None))
    if not hosts:
        return
    ev = [f"{rel}:{n}" for n, _ in hosts]
    if not explicit_nodes:
        L.put("num_nodes", len(hosts), ev)
    slots = {s for _, s in hosts}
    if not explicit_slots and len(slots) == 1 and None not in slots:
        L.put("procs_per_node", slots.pop(), ev)
    elif not explicit_slots and None not in slots:
        L.put("num_procs", sum(s for _, s in hosts if s), ev)
