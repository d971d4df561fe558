"""Replay metrics: per-job table, JSON summary and plots."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel

from schedmate.jobtable import OUTCOMES
from schedmate.records import Outcome
from schedmate.sim.engine import Simulator


class ReplaySummary(BaseModel):
    """The `schedmate replay --json` contract (field names are stable)."""

    jobs: int
    avg_jct_s: float
    p50_jct_s: float
    p99_jct_s: float
    avg_queue_s: float
    makespan_s: float
    gpu_utilization: float
    comm_overhead_gpu_s: float
    preemptions: int
    failed_gpu_hours: float
    wall_s: float
    events: int
    events_per_s: float
    policy: str = ""
    annotator: str = ""
    cluster_gpus: int = 0
    network: str = ""
    seed: int = 0
    unfinished: int = 0
    migrations: int = 0
    annotation: dict | None = None
    """Cost of the annotator, when it reports one: LLM calls per job, tokens, seconds per job."""
    skipped_rows: int = 0
    """Trace rows dropped as malformed (`--on-error skip`); listed on stderr with file:line:field."""
    dropped_jobs: int = 0
    """Jobs that cannot run on this cluster (more GPUs than it has); listed on stderr."""
    spec: dict | None = None
    """The `ReplaySpec` that ran (when the replay was given one, or a trace spec and a cluster spec)."""


def job_table(sim: Simulator) -> pd.DataFrame:
    """One row per job (replay order): built from the job table and the result columns, with the jobs
    still held as objects (unfinished, or ended with policy notes) filled in from their states."""
    table, res = sim.table, sim.jobs.results
    cols = {f: getattr(res, f).copy() for f in ("first_start", "end_time", "queued_s", "executed_s",
                                               "comm_lost_gpu_s")}
    ints = {f: getattr(res, f).astype(np.int64) for f in ("max_nodes", "max_racks", "preemptions", "migrations")}
    ended_by = np.array(res.reasons, dtype=object)[res.ended_by]
    for js in sim.jobs.kept():
        i = js.idx
        for f, col in cols.items():
            v = getattr(js, f)
            col[i] = np.nan if v is None else v
        for f, col in ints.items():
            col[i] = getattr(js, f)
        ended_by[i] = js.ended_by
    outcome = np.array([o.value for o in OUTCOMES], dtype=object)[table.outcome]
    return pd.DataFrame({
        "job_id": _strings(table.id),
        "user": _strings(table.user),
        "num_gpus": table.num_gpus.astype(np.int64),
        "submit_time": table.submit_time,
        "start_time": cols["first_start"],
        "end_time": cols["end_time"],
        "jct_s": cols["end_time"] - table.submit_time,
        "queue_s": cols["queued_s"],
        "run_s": cols["executed_s"],
        "duration_s": table.duration_s,
        "outcome": _strings(outcome),
        "ended_by": _strings(ended_by),
        "workload": _strings(table.workload),
        "spread_slowdown": table.spread_slowdown,
        "max_nodes": ints["max_nodes"],
        "max_racks": ints["max_racks"],
        "preemptions": ints["preemptions"],
        "migrations": ints["migrations"],
        "comm_lost_gpu_s": cols["comm_lost_gpu_s"],
        "gpu_s": cols["executed_s"] * table.num_gpus,
    })


def _strings(values: np.ndarray) -> pd.Series:
    """A string column as pandas would infer it from the Python values (None where missing)."""
    return pd.Series(values.astype(object), dtype=None)


def summarize(sim: Simulator, table: pd.DataFrame, wall_s: float, **labels: object) -> ReplaySummary:
    done = table[table["end_time"].notna()]
    jct = done["jct_s"].to_numpy(dtype=float)
    if len(done):
        first_submit = float(table["submit_time"].min())
        makespan = float(done["end_time"].max()) - first_submit
    else:
        makespan = 0.0
    busy_gpu_s = float(table["gpu_s"].sum())
    capacity = sim.cluster.total_gpus * makespan
    failed = table[table["outcome"] == Outcome.failed.value]
    return ReplaySummary(
        jobs=len(table),
        avg_jct_s=float(jct.mean()) if len(jct) else 0.0,
        p50_jct_s=float(np.percentile(jct, 50)) if len(jct) else 0.0,
        p99_jct_s=float(np.percentile(jct, 99)) if len(jct) else 0.0,
        avg_queue_s=float(done["queue_s"].mean()) if len(done) else 0.0,
        makespan_s=makespan,
        gpu_utilization=busy_gpu_s / capacity if capacity > 0 else 0.0,
        comm_overhead_gpu_s=float(table["comm_lost_gpu_s"].sum()),
        preemptions=int(table["preemptions"].sum()),
        failed_gpu_hours=float(failed["gpu_s"].sum()) / 3600.0,
        wall_s=wall_s,
        events=sim.events,
        events_per_s=sim.events / wall_s if wall_s > 0 else 0.0,
        unfinished=int(len(table) - len(done)),
        migrations=int(table["migrations"].sum()),
        cluster_gpus=sim.cluster.total_gpus,
        **labels,  # type: ignore[arg-type]
    )


def write_outputs(sim: Simulator, table: pd.DataFrame, summary: ReplaySummary, out: Path) -> list[Path]:
    """Per-job table (Parquet and CSV), summary JSON, time series CSV and the three plots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []
    table.to_parquet(out / "jobs.parquet", index=False)
    table.to_csv(out / "jobs.csv", index=False)
    (out / "summary.json").write_text(json.dumps(summary.model_dump(), indent=2) + "\n")
    written += [out / "jobs.parquet", out / "jobs.csv", out / "summary.json"]
    # The last annotation of every job, one `Annotation` JSON per line: what `schedmate adapt` reads.
    with (out / "annotations.jsonl").open("w") as fh:
        for i in range(len(sim.jobs)):
            fh.write(sim.jobs.annotation(i).model_dump_json() + "\n")
    written.append(out / "annotations.jsonl")
    if sim.log:
        pd.DataFrame(sim.log).to_csv(out / "policy_log.csv", index=False)
        written.append(out / "policy_log.csv")
    ts = sim.timeseries
    if len(ts.t):
        series = pd.DataFrame(
            {"time_s": np.frombuffer(ts.t, dtype=float), "queued": np.asarray(ts.queued),
             "busy_gpus": np.asarray(ts.busy_gpus)}
        )
        series.to_csv(out / "timeseries.csv", index=False)
        written.append(out / "timeseries.csv")
        hours = (series["time_s"] - series["time_s"].iloc[0]) / 3600.0
        for column, ylabel, fname, scale in (
            ("queued", "jobs waiting", "queue_length.png", 1.0),
            ("busy_gpus", "GPU utilisation", "utilization.png", 1.0 / sim.cluster.total_gpus),
        ):
            fig, ax = plt.subplots(figsize=(7, 3))
            ax.step(hours, series[column] * scale, where="post", lw=0.8)
            ax.set_xlabel("hours since first submission")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{summary.policy} / {summary.annotator}")
            fig.tight_layout()
            fig.savefig(out / fname, dpi=110)
            plt.close(fig)
            written.append(out / fname)
    jct = np.sort(table["jct_s"].dropna().to_numpy(dtype=float))
    if len(jct):
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot(jct / 3600.0, np.arange(1, len(jct) + 1) / len(jct))
        ax.set_xscale("log")
        ax.set_xlabel("JCT (hours, log)")
        ax.set_ylabel("CDF")
        ax.set_title(f"JCT: {summary.policy} / {summary.annotator}")
        fig.tight_layout()
        fig.savefig(out / "jct_cdf.png", dpi=110)
        plt.close(fig)
        written.append(out / "jct_cdf.png")
    return written
