"""`#SBATCH` / `sbatch` options and the `SLURM_*` environment they give the job."""

from __future__ import annotations

import re

from schedmate.codeprof.shell.state import (
    Var,
    _State,
)

_SBATCH_FLAGS = {"--exclusive", "--requeue", "--no-requeue", "--wait", "-W", "--test-only", "--parsable",
                 "--hold", "-H", "--overcommit", "-O", "--contiguous", "--spread-job"}


_SHORT = {"N": "nodes", "n": "ntasks", "G": "gpus", "c": "cpus_per_task", "t": "time", "p": "partition",
          "J": "job_name", "o": "output", "e": "error", "A": "account", "w": "nodelist", "x": "exclude",
          "C": "constraint", "q": "qos", "a": "array", "d": "dependency"}


def _options(words: list[str]) -> list[tuple[str, str]]:
    """(long name with underscores, value) of sbatch/srun-style options."""
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(words):
        w = words[k]
        if w.startswith("--"):
            name, eq, val = w[2:].partition("=")
            name = name.replace("-", "_")
            if not eq and f"--{name.replace('_', '-')}" not in _SBATCH_FLAGS and k + 1 < len(words) \
                    and not words[k + 1].startswith("-"):
                val = words[k + 1]
                k += 1
            out.append((name, val if (eq or val) else "true"))
        elif w.startswith("-") and len(w) >= 2:
            name = _SHORT.get(w[1], w[1])
            val = w[2:].lstrip("=")
            if not val and k + 1 < len(words) and not words[k + 1].startswith("-"):
                val = words[k + 1]
                k += 1
            out.append((name, val or "true"))
        k += 1
    return out


def _slurm_env(st: _State) -> None:
    """SLURM_* variables a batch script sees, from the #SBATCH options in force."""
    sb = st.sbatch

    def val(*names: str) -> tuple[str, str] | None:
        for n in names:
            if n in sb:
                return sb[n]
        return None

    def put(name: str, value: str, where: str) -> None:
        if st.find(name) is None or st.find(name).where[:1] == ("slurm",):  # type: ignore[union-attr]
            st.globals[name] = Var(value, None, (where,), True)

    nodes = val("nodes")
    if nodes is None and sb:
        nodes = ("1", "sbatch default (one node)")  # a batch job with no node count gets one node
    if nodes and re.fullmatch(r"\d+", nodes[0]):
        put("SLURM_NNODES", nodes[0], nodes[1])
        put("SLURM_JOB_NUM_NODES", nodes[0], nodes[1])
    tpn = val("ntasks_per_node")
    if tpn and re.fullmatch(r"\d+", tpn[0]):
        put("SLURM_NTASKS_PER_NODE", tpn[0], tpn[1])
    nt = val("ntasks")
    if nt and re.fullmatch(r"\d+", nt[0]):
        put("SLURM_NTASKS", nt[0], nt[1])
        put("SLURM_NPROCS", nt[0], nt[1])
    elif nodes and tpn and nodes[0].isdigit() and tpn[0].isdigit():
        put("SLURM_NTASKS", str(int(nodes[0]) * int(tpn[0])), tpn[1])
        put("SLURM_NPROCS", str(int(nodes[0]) * int(tpn[0])), tpn[1])
    gpn = val("gpus_per_node")
    gres = val("gres")
    n_gpu = None
    if gpn:
        m = re.search(r"(\d+)$", gpn[0])
        n_gpu = (m.group(1), gpn[1]) if m else None
    elif gres:
        m = re.search(r"gpu(?::[\w.-]+)?:(\d+)", gres[0])
        n_gpu = (m.group(1), gres[1]) if m else None
    elif (total := val("gpus")) and nodes and nodes[0] == "1":
        # `--gpus=N` counts the job's GPUs; on one node they are all that node's
        m = re.search(r"(\d+)$", total[0])
        n_gpu = (m.group(1), total[1]) if m else None
    elif (gpt := val("gpus_per_task")) and tpn and tpn[0].isdigit():
        m = re.search(r"(\d+)$", gpt[0])
        n_gpu = (str(int(m.group(1)) * int(tpn[0])), gpt[1]) if m else None
    if n_gpu:
        put("SLURM_GPUS_ON_NODE", *n_gpu)
        put("SLURM_GPUS_PER_NODE", *n_gpu)
        if n_gpu[0].isdigit() and int(n_gpu[0]) > 0 and st.find("CUDA_VISIBLE_DEVICES") is None:
            # Slurm hands the job its GPUs as 0..N-1; the script's own tests and counts see that list (the
            # programs' view of the GPUs stays with the SLURM_GPUS_* variables above)
            st.globals["CUDA_VISIBLE_DEVICES"] = Var(",".join(map(str, range(int(n_gpu[0])))), None,
                                                     (n_gpu[1],), False)
    cpt = val("cpus_per_task")
    if cpt and cpt[0].isdigit():
        put("SLURM_CPUS_PER_TASK", cpt[0], cpt[1])
    for name in ("SLURM_PROCID", "SLURM_NODEID", "SLURM_LOCALID"):
        put(name, "0", "slurm")
