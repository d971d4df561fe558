"""torchrun / `python -m torch.distributed.run|launch`: nodes from --nnodes, processes from --nproc_per_node."""

from __future__ import annotations

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import scan_options, to_int
from schedmate.codeprof.launch.python import entry

_VALUED = {
    "nnodes", "nproc_per_node", "node_rank", "master_addr", "master_port", "rdzv_endpoint", "rdzv_backend",
    "rdzv_id", "rdzv_conf", "max_restarts", "monitor_interval", "log_dir", "redirects", "tee", "local_addr",
    "role", "start_method", "logs_specs", "local_ranks_filter", "nproc-per-node",
}
_FLAGS = {"standalone", "no_python", "run_path", "m", "module", "use_env"}


@family("torchrun")
def torchrun_cmd(ctx: Ctx, toks: list[str]) -> bool:
    return torchrun(ctx, toks, 1)


def torchrun(ctx: Ctx, toks: list[str], i: int, legacy: bool = False) -> bool:
    L, where = ctx.launch, ctx.where
    if not L.chain or not L.chain[-1].startswith("python -m"):
        L.chain.append("torchrun")
    opts, i = scan_options(toks, i, _VALUED, _FLAGS)
    nn = opts.get("nnodes")
    if isinstance(nn, str):
        n = to_int(nn)
        if n is None and ":" in nn:  # elastic min:max
            lo, hi = (to_int(x) for x in nn.split(":", 1))
            n = lo if lo == hi else None
            if n is None:
                L.notes.append(f"elastic --nnodes {nn}: node count not fixed")
        L.put("num_nodes", n, where, raw=nn)
    elif "standalone" in opts or "nnodes" not in opts:
        L.put("num_nodes", 1, where, override=False)
    npn = opts.get("nproc_per_node")
    if isinstance(npn, str):
        L.put("procs_per_node", to_int(npn), where, raw=npn)  # "gpu"/"auto": every local GPU, unknown here
        if to_int(npn) is None and npn in ("gpu", "auto"):
            L.unknown["procs_per_node"] = [f"--nproc_per_node {npn} (every GPU of the node)"]
    elif npn is None:
        L.put("procs_per_node", 1, where, override=False)
    L.put("distributed_launcher", True, where)
    if i >= len(toks):
        return False
    if opts.get("m") is True or opts.get("module") is True:
        return entry(ctx, None, toks[i + 1 :], module=toks[i])
    if opts.get("no_python") is True:
        return ctx.dispatch(toks[i:])
    return entry(ctx, toks[i], toks[i + 1 :])
