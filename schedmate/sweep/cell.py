"""Running one sweep cell, in whatever process a backend gives it: `run_cell(cell) -> CellOutcome`.

The outcome is a small pydantic record (the cell's parameters, the `schedmate replay --json` summary
keys, and any columns or tables the grid's `collect` hook adds) that crosses the process or Ray
boundary back to the driver, which alone writes the results. A cell that raises is not lost: its
outcome says `failed` with the error and traceback. A cell's result depends only on the cell (traces
are loaded from the cell's own spec and seed, scratch directories are the cell's own), never on the
worker or the order.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import socket
import statistics
import time
import traceback
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from schedmate.records import Job
from schedmate.sweep.grid import SweepCell, TraceSource, option_pairs, resolve

SUMMARY_RENAMED = {"policy": "run_policy", "annotator": "run_annotator"}
"""Summary keys that would shadow a cell parameter: the policy as the scheduler describes itself
(`delay+fifo-nb`) and the annotator as it ran (`none+semantic`)."""
SUMMARY_DROPPED = ("network", "seed", "spec", "annotation")
"""Summary keys the cell's own columns already carry (`annotation` is spread into `annotation_*`)."""


class CellOutcome(BaseModel):
    """What a worker sends back for one cell."""

    model_config = ConfigDict(extra="forbid")
    key: str
    status: Literal["ok", "failed"]
    row: dict[str, Any]
    """The cell's row: parameters, summary keys, `annotation_*`, collected columns."""
    tables: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """Side tables from the `collect` hook (name -> rows), each stored as `<name>.parquet`."""
    error: str | None = None
    traceback: str | None = None


def _spec_path(spec: str) -> str:
    if spec.startswith("@shared/"):
        from schedmate.traces import shared_traces_dir

        return str(shared_traces_dir() / spec.removeprefix("@shared/"))
    return spec


@functools.lru_cache(maxsize=2)
def _loaded(source_json: str, seed: int) -> tuple[Job, ...]:
    """A trace's cut jobs (before pacing); kept per process for the next cell on the same trace (jobs are
    immutable records, so sharing them cannot leak one cell into another)."""
    from schedmate.traces import load_trace

    src = TraceSource.model_validate_json(source_json)
    jobs = load_trace(_spec_path(src.spec), fmt=src.fmt, seed=seed, **src.options).jobs
    if src.min_gpus:
        jobs = [j for j in jobs if j.num_gpus >= src.min_gpus]
    end = src.skip + src.take if src.take is not None else None
    return tuple(jobs[src.skip:end])


def paced_jobs(src: TraceSource, seed: int = 0, load: float = 1.0) -> list[Job]:
    """A trace source's jobs: cut, paced by `compress` x `load`, made static if asked (see `TraceSource`)."""
    jobs = list(_loaded(src.model_dump_json(), seed))
    if not jobs:
        raise ValueError(f"trace {src.label!r}: no jobs left after min_gpus/skip/take")
    factor = src.compress * load
    if src.static:
        jobs = [j.model_copy(update={"submit_time": 0.0}) for j in jobs]
    elif factor != 1.0:
        t0 = jobs[0].submit_time
        jobs = [j.model_copy(update={"submit_time": (j.submit_time - t0) / factor}) for j in jobs]
    return jobs


def auto_monitor_interval(jobs: list[Job]) -> float:
    """`monitor_interval_s: auto`: a twentieth of the median job duration, at least 300 s."""
    return max(300.0, statistics.median_high(j.duration_s for j in jobs) / 20)


def cell_jobs(cell: SweepCell) -> list[Job]:
    """The jobs a cell replays."""
    return paced_jobs(cell.trace, cell.spec.seed, cell.load)


def monitor_interval(cell: SweepCell, jobs: list[Job]) -> float | None:
    if cell.trace.monitor_interval_s == "auto":
        return auto_monitor_interval(jobs)
    return cell.spec.monitor_interval_s


def summary_columns(summary: dict[str, Any]) -> dict[str, Any]:
    """A `ReplaySummary` dump as flat table columns (see `SUMMARY_RENAMED`, `SUMMARY_DROPPED`)."""
    out = {SUMMARY_RENAMED.get(k, k): v for k, v in summary.items() if k not in SUMMARY_DROPPED}
    for k, v in (summary.get("annotation") or {}).items():
        if isinstance(v, str | int | float | bool) or v is None:
            out[f"annotation_{k}"] = v
    return out


def run_cell(cell: SweepCell) -> CellOutcome:
    """Replay one cell; never raises for a failing cell (the outcome says `failed`)."""
    t0 = time.perf_counter()
    base = {**cell.params(), "worker": f"{socket.gethostname()}:{os.getpid()}"}
    said = io.StringIO()  # the replay's warnings (dropped jobs, skipped rows) go in the row, not a worker's log
    try:
        with contextlib.redirect_stderr(said):
            row, tables = _replay_cell(cell)
    except Exception as e:  # noqa: BLE001 - any failure of a cell is recorded, not raised
        return CellOutcome(key=cell.key, status="failed",
                           row={**base, "status": "failed", "error": f"{type(e).__name__}: {e}",
                                "warnings": said.getvalue() or None, "cell_wall_s": time.perf_counter() - t0},
                           error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
    return CellOutcome(key=cell.key, status="ok", tables=tables,
                       row={**base, **row, "status": "ok", "error": None, "warnings": said.getvalue() or None,
                            "cell_wall_s": time.perf_counter() - t0})


def _replay_cell(cell: SweepCell) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    from schedmate.annotators import ANNOTATORS
    from schedmate.policies import build_scheduler, policy_options
    from schedmate.replay import replay

    s = cell.spec
    jobs = cell_jobs(cell)
    if cell.scheduler_factory:
        sched = resolve(cell.scheduler_factory, "scheduler_factory")(cell)
    else:
        sched = build_scheduler(s.policy, s.placement, **policy_options(s.policy, option_pairs(s.policy_options)))
    annotator: Any = ANNOTATORS.create(s.annotator, **cell.annotator_options) if cell.annotator_options else s.annotator
    result = replay(jobs, policy=s.policy, placement=s.placement, annotator=annotator, cluster=s.cluster,
                    network=s.network, seed=s.seed, limit=s.limit, workloads=s.workloads, scheduler=sched,
                    semantic=s.semantic, monitor_interval_s=monitor_interval(cell, jobs),
                    semantic_noise=s.semantic_noise)
    row = summary_columns(result.summary.model_dump())
    tables: dict[str, list[dict[str, Any]]] = {}
    if cell.collect:
        extra = resolve(cell.collect, "collect")(cell, result)
        if not isinstance(extra, dict):
            raise ValueError(f"collect {cell.collect!r} returned {type(extra).__name__}, expected a dict")
        for k, v in extra.items():
            if isinstance(v, list):
                tables[k] = [{"cell": cell.key, **r} for r in v]
            else:
                row[k] = v
    return row, tables
