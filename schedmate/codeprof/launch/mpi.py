"""mpirun / mpiexec / horovodrun: -np, -H host:slots, --hostfile, -npernode / --map-by ppr:N:node."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.deepspeed import hostfile
from schedmate.codeprof.launch.model import scan_options, to_int

_VALUED = {"np", "n", "H", "host", "hostfile", "machinefile", "npernode", "N", "map_by", "bind_to", "x", "rank_by",
           "ppn", "f", "wdir", "num_proc", "hosts"}
_FLAGS = {"allow_run_as_root", "oversubscribe", "tag_output", "display_map", "report_bindings", "verbose"}


@family("mpirun", "mpiexec", "horovodrun")
def mpirun(ctx: Ctx, toks: list[str]) -> bool:
    L, where = ctx.launch, ctx.where
    L.chain.append(PurePosixPath(toks[0]).name)
    opts, i = scan_options(toks, 1, _VALUED, _FLAGS, two_valued={"mca", "gmca"})
    n = opts.get("np", opts.get("n", opts.get("num_proc")))
    if isinstance(n, str):
        L.put("num_procs", to_int(n), where, raw=n)
    hosts = opts.get("H", opts.get("host", opts.get("hosts")))
    if isinstance(hosts, str):
        parts = [h for h in hosts.split(",") if h]
        L.put("num_nodes", len(parts), where)
        counts = {to_int(h.split(":", 1)[1]) if ":" in h else None for h in parts}
        if len(counts) == 1 and None not in counts:
            L.put("procs_per_node", counts.pop(), where)
    hf = opts.get("hostfile", opts.get("machinefile", opts.get("f")))
    if isinstance(hf, str):
        hostfile(ctx, hf, explicit_nodes=isinstance(hosts, str), explicit_slots=False)
    ppn = opts.get("npernode", opts.get("N", opts.get("ppn")))
    mb = opts.get("map_by")
    if isinstance(mb, str):
        m = re.match(r"ppr:(\d+):node", mb)
        ppn = m.group(1) if m else ppn
    if isinstance(ppn, str):
        L.put("procs_per_node", to_int(ppn), where, raw=ppn)
    if L.get("num_nodes") is None and L.get("num_procs") and L.get("procs_per_node"):
        np_, pp = L.get("num_procs"), L.get("procs_per_node")
        if np_ % pp == 0:
            L.put("num_nodes", np_ // pp, where)
    L.put("distributed_launcher", True, where)
    return ctx.dispatch(toks[i:]) if i < len(toks) else False
