"""Replay metrics: per-job table, JSON summary and plots."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel

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
    rows = []
    for js in sim.jobs:
        j = js.job
        rows.append(
            {
                "job_id": j.id,
                "user": j.user,
                "num_gpus": j.num_gpus,
                "submit_time": j.submit_time,
                "start_time": js.first_start,
                "end_time": js.end_time,
                "jct_s": (js.end_time - j.submit_time) if js.end_time is not None else np.nan,
                "queue_s": js.queued_s,
                "run_s": js.executed_s,
                "duration_s": j.duration_s,
                "outcome": j.outcome.value,
                "ended_by": js.ended_by,
                "workload": j.workload,
                "spread_slowdown": j.spread_slowdown,
                "max_nodes": js.max_nodes,
                "max_racks": js.max_racks,
                "preemptions": js.preemptions,
                "migrations": js.migrations,
                "comm_lost_gpu_s": js.comm_lost_gpu_s,
                "gpu_s": js.executed_s * j.num_gpus,
            }
        )
    return pd.DataFrame(rows)


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
        for js in sim.jobs:
            fh.write(js.annotation.model_dump_json() + "\n")
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
