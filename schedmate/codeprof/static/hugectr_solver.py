"""HugeCTR's solver: `hugectr.CreateSolver(batchsize=N, vvgpu=[[0, 1], [0, 1]])`.

HugeCTR documents `batchsize` as the global batch of one iteration over all GPUs, and `vvgpu` as the GPUs of each
node (one inner list per node, the node processes started by `mpirun -np <nodes>`). So the GPU count is the sum of
the inner lists' lengths (not the process count), the global batch is `batchsize`, and each GPU trains on its
share. Read from the literal keywords only; anything computed is left to the other readings."""

from __future__ import annotations

import ast
from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.static.result import StaticResult


def _literal(src: str | None) -> Any:
    try:
        return ast.literal_eval(src) if src else None
    except (ValueError, SyntaxError):
        return None


def hugectr_solver(facts: dict[str, Fact], res: StaticResult) -> list[str]:
    """Set (in place) the GPU count and the global and per-GPU batch from the one solver the job creates."""
    if not any(i.split(".")[0] == "hugectr" for s in res.py.values() for i in s.get("imports", [])):
        return []
    solvers = [(rel, c) for rel, s in res.py.items() for c in s.get("calls", [])
               if c["func"].rsplit(".", 1)[-1] == "CreateSolver"]
    if len(solvers) != 1:
        return []
    rel, c = solvers[0]
    where = f"{rel}:{c['line']}"
    batch, gpus = _literal(c["kwargs"].get("batchsize")), _literal(c["kwargs"].get("vvgpu"))
    out: list[str] = []
    if isinstance(gpus, list) and gpus and all(isinstance(g, list) and g for g in gpus):
        n = sum(len(g) for g in gpus)
        facts["num_gpus"] = Fact(value=n, source="static", evidence=[where], note="HugeCTR vvgpu: GPUs of each node")
        out.append(f"num_gpus: {n} from HugeCTR vvgpu ({len(gpus)} node lists)")
    else:
        n = None
    if isinstance(batch, int) and not isinstance(batch, bool) and batch > 0:
        facts["global_batch_size"] = Fact(value=batch, source="static", evidence=[where],
                                          note="HugeCTR batchsize: the global batch")
        facts.pop("micro_batch_size", None)
        if n and batch % n == 0:
            facts["micro_batch_size"] = Fact(value=batch // n, source="derived", evidence=[where],
                                             note="HugeCTR batchsize / GPUs in vvgpu")
        out.append(f"global_batch_size: {batch} is HugeCTR's global batchsize, shared by the GPUs")
    return out
