"""Slurm: `#SBATCH` / sbatch options (nodes, tasks, GPUs) and `srun`, which starts one task per slot unless
a distributed launcher inside starts its own workers."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import PYTHONS, Launch, scan_options, to_int

SLURM_KEYS = {
    "nodes": "num_nodes", "N": "num_nodes", "ntasks_per_node": "procs_per_node", "gpus_per_node": "gpus_per_node",
    "ntasks": "num_procs", "n": "num_procs", "gres": "gres", "gpus": "gpus", "G": "gpus",
    "gpus_per_task": "gpus_per_task",
}
_SRUN_VALUED = {
    "N", "nodes", "n", "ntasks", "ntasks_per_node", "gpus_per_node", "gres", "c", "cpus_per_task", "gpus", "G", "p",
    "partition", "t", "time", "J", "job_name", "mem", "A", "account", "o", "output", "e", "error", "gpus_per_task",
    "mpi", "cpu_bind", "export", "container_image", "container_mounts", "qos", "w", "nodelist", "x", "exclude",
    "constraint", "C", "container_workdir", "container_name", "ntasks_per_socket", "distribution", "m",
    "mem_per_gpu", "mem_per_cpu", "gpu_bind", "hint", "chdir", "D", "reservation", "wckey", "comment",
    "wait", "W",
}
_SRUN_FLAGS = {"exclusive", "l", "label", "u", "unbuffered", "overlap", "kill_on_bad_exit", "K",
               "no_container_mount_home", "container_remap_root", "pty"}
_INNER_LAUNCHERS = {"torchrun", "deepspeed", "accelerate", "bash", "sh"}


def slurm_options(L: Launch, opts: dict[str, str | bool] | dict[str, tuple[str, str]],
                  where: list[str] | str | None = None) -> None:
    """Settings from sbatch/srun options: `{name: value}` with one `where`, or `{name: (value, where)}`."""
    for k, item in opts.items():
        key = SLURM_KEYS.get(k)
        if key is None:
            continue
        v, w = item if isinstance(item, tuple) else (item, where)
        if not isinstance(v, str):
            continue
        w = w or "cmd"
        if key == "gres":
            m = re.search(r"gpu(?::[\w.-]+)?:(\d+)", v)
            if m:
                L.put("gpus_per_node", int(m.group(1)), w)
        elif key == "gpus":
            L.put("slurm_total_gpus", to_int(v.rsplit(":", 1)[-1]), w, raw=v)
        elif key == "gpus_per_node":
            L.put("gpus_per_node", to_int(v.rsplit(":", 1)[-1]), w, raw=v)
        elif key == "gpus_per_task":
            L.put("gpus_per_task", to_int(v.rsplit(":", 1)[-1]), w, raw=v)
        else:
            L.put(key, to_int(v), w, raw=v)


@family("srun")
def srun(ctx: Ctx, toks: list[str]) -> bool:
    L, where = ctx.launch, ctx.where
    L.chain.append("srun")
    opts, i = scan_options(toks, 1, _SRUN_VALUED, _SRUN_FLAGS)
    slurm_options(L, opts, where)
    rest = toks[i:]
    if L.get("num_procs") is not None and L.get("num_nodes") is not None and L.get("procs_per_node") is None:
        n, nn = L.get("num_procs"), L.get("num_nodes")
        if n and nn and n % nn == 0:
            L.put("procs_per_node", n // nn, L.settings["num_procs"].where)
    inner = PurePosixPath(rest[0]).name if rest else ""
    from schedmate.codeprof.launch.clis import CONVENTIONS  # framework entry points start their own workers

    if inner in _INNER_LAUNCHERS or inner in CONVENTIONS or (
        len(rest) > 2 and PYTHONS.match(inner) and rest[1] == "-m"
        and rest[2].startswith(("torch.distributed", "accelerate", "deepspeed"))
    ):
        # the inner launcher decides processes per node; srun's per-node task count is 1 per node
        L.settings.pop("procs_per_node", None)
        L.settings.pop("num_procs", None)
    L.put("distributed_launcher", True, where)
    return ctx.dispatch(rest) if rest else False


def steps_are_nodes(argv: list[str], copies: int, alloc_nodes: int | None, L: Launch) -> bool:
    """The N copies started side by side are `srun` steps of one node each on an allocation of N nodes
    (`for i in ...; do srun -N 1 -n 1 -r $i python train.py ... & done`): each copy is a node of the job, whose
    processes per node its own launcher decides. True when the step asked for one node and either the
    allocation has exactly that many nodes or the step names its node offset (`-r`/`--relative`)."""
    if not argv or PurePosixPath(argv[0]).name != "srun" or copies < 2 or L.get("num_nodes") != 1:
        return False
    relative = any(t in ("-r", "--relative") or t.startswith("--relative=") for t in argv)
    return relative or alloc_nodes == copies

