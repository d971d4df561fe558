"""`collect` hooks that hold a sweep at a chosen cell, so tests can interrupt or fail it without timing.

A gate is a file named by `$SWEEP_TEST_GATE`: cells with seed >= 1 wait for it (`wait_for_gate`) or
fail while it is missing (`fail_without_gate`); seed-0 cells pass straight through.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def _gate() -> Path:
    return Path(os.environ["SWEEP_TEST_GATE"])


def wait_for_gate(cell, result) -> dict:
    while cell.spec.seed >= 1 and not _gate().exists():
        time.sleep(0.05)
    return {"gate_passed": True}


def fail_without_gate(cell, result) -> dict:
    if cell.spec.seed >= 1 and not _gate().exists():
        raise RuntimeError(f"gate {_gate()} is closed")
    return {"jobs_seen": len(result.jobs), "by_gpus": [{"num_gpus": int(g), "jobs": int(n)} for g, n in
                                                       result.jobs.groupby("num_gpus").size().items()]}


def die_at_seed_one(cell, result) -> dict:
    """The worker process exits at once (as one killed by the OOM killer would) for seed-1 cells."""
    if cell.spec.seed == 1:
        os._exit(3)
    return {}


def consolidating_scheduler(cell):
    """A scheduler the registry does not name: `consolidate-fifo` (strict FIFO, packed in a rack)."""
    from schedmate.policies import build_scheduler

    if cell.spec.policy != "consolidate-fifo":
        raise ValueError(f"unknown policy {cell.spec.policy!r}")
    sched = build_scheduler("fifo", "consolidate-rack")
    sched.backfill = False
    return sched
