"""Trace replay: load a trace, annotate its jobs, simulate a scheduler on a cluster, report.

    from schedmate.replay import replay
    result = replay("default", policy="sjf", annotator="oracle", cluster="64")
    print(result.summary.avg_jct_s)

The CLI `schedmate replay` is a thin layer over `replay()`; its `--json` output is a stable contract.
"""

from __future__ import annotations

import json
import random
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, overload

import numpy as np
import pandas as pd
import typer
from pydantic import BaseModel, ConfigDict, Field

from schedmate.annotators import ANNOTATORS, Annotator
from schedmate.cluster import parse_cluster
from schedmate.jobtable import JobTable
from schedmate.policies import SCHEDULERS, build_scheduler, policy_options
from schedmate.policies.base import PLACEMENTS, Scheduler
from schedmate.records import ClusterSpec, Job, NetworkSpec
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.sim.metrics import ReplaySummary, job_table, summarize, write_outputs
from schedmate.workloads import CATALOGUE, WorkloadClass, sample_workload

FORMATS = ("philly", "helios", "acme", "pai2020", "alibaba2023", "gavel", "csv")


@dataclass
class ReplayResult:
    summary: ReplaySummary
    jobs: pd.DataFrame
    sim: Simulator


def _draw_workload(seed: int, job_id: str, num_gpus: int) -> WorkloadClass:
    return sample_workload(random.Random(zlib.crc32(f"{seed}:{job_id}".encode())), num_gpus)


@overload
def assign_workloads(jobs: list[Job], seed: int) -> list[Job]: ...


@overload
def assign_workloads(jobs: JobTable, seed: int) -> JobTable: ...


def assign_workloads(jobs: list[Job] | JobTable, seed: int) -> list[Job] | JobTable:
    """Give jobs whose trace names no model a workload class from the catalogue (seeded per job id,
    so a job keeps its class whatever else is in the trace). Jobs with a class keep it."""
    if isinstance(jobs, JobTable):
        known = np.isin(jobs.workload, list(CATALOGUE))
        todo = np.flatnonzero(~known)
        if not len(todo):
            return jobs
        if jobs.records is not None:  # keep the records (and their identity) where nothing changes
            return JobTable.from_jobs(assign_workloads(list(jobs.records), seed))
        workload, slowdown = jobs.workload.copy(), jobs.spread_slowdown.copy()
        for i in todo.tolist():
            w = _draw_workload(seed, jobs.id[i], jobs.num_gpus.item(i))
            workload[i], slowdown[i] = w.name, w.spread_slowdown
        return jobs.with_columns(workload=workload, spread_slowdown=slowdown)
    out = []
    for j in jobs:
        if j.workload is not None and j.workload in CATALOGUE:
            out.append(j)
            continue
        w = _draw_workload(seed, j.id, j.num_gpus)
        out.append(j.model_copy(update={"workload": w.name, "spread_slowdown": w.spread_slowdown}))
    return out


def fit_to_cluster(jobs: JobTable, cluster: ClusterSpec) -> tuple[JobTable, int]:
    """Drop jobs that ask for more GPUs than the cluster has; returns (kept, dropped)."""
    fits = jobs.num_gpus <= cluster.total_gpus
    if fits.all():
        return jobs, 0
    return jobs.take(fits), int((~fits).sum())


def _say_skipped(errors: list) -> None:
    """Malformed rows dropped in skip mode: the count and the first ten, file:line:field, on stderr."""
    if not errors:
        return
    print(f"warning: {len(errors)} malformed trace row(s) skipped:", file=sys.stderr)
    for e in errors[:10]:
        print(f"  {e.file}:{e.line}:{e.field or '-'}: {e.message}", file=sys.stderr)
    if len(errors) > 10:
        print(f"  ... and {len(errors) - 10} more", file=sys.stderr)


class ReplaySpec(BaseModel):
    """Everything a replay needs that can be written down: the CLI's options, validated once and recorded
    in the results (`ReplaySummary.spec`), so every run says exactly what it ran. Objects (a job list, a
    scheduler or annotator instance, an adapter) are passed to `replay()` beside it."""

    model_config = ConfigDict(extra="forbid")
    trace: str = "default"
    policy: str = "fifo"
    placement: str | None = None
    annotator: str = "none"
    cluster: str = "64"
    network: str = "congested"
    seed: int = 0
    fmt: str | None = None
    on_error: Literal["fail", "skip"] = "fail"
    limit: int | None = Field(default=None, ge=1)
    workloads: bool = True
    out: Path | None = None
    semantic: Path | bool | None = None
    monitor_interval_s: float | None = Field(default=None, gt=0)
    policy_options: dict[str, Any] = Field(default_factory=dict)
    semantic_noise: float = Field(default=0.0, ge=0)


def replay(
    trace: str | list[Job] | JobTable | ReplaySpec,
    policy: str = "fifo",
    placement: str | None = None,
    annotator: str | Annotator = "none",
    cluster: str | ClusterSpec = "64",
    network: str = "congested",
    seed: int = 0,
    fmt: str | None = None,
    on_error: str = "fail",
    limit: int | None = None,
    workloads: bool = True,
    scheduler: Scheduler | None = None,
    config: ReplayConfig | None = None,
    out: Path | None = None,
    progress: bool = False,
    semantic: Path | bool | None = None,
    adapter: Any = "auto",
    monitor_interval_s: float | None = None,
    policy_options: dict[str, object] | None = None,
    semantic_noise: float = 0.0,
) -> ReplayResult:
    """Replay `trace` (a spec for `load_trace`, a list of jobs or a `JobTable`) and return metrics.

    `semantic`: give every job code, a launch command and a simulator-written log (the semantic
    augmentation, `schedmate.semantic`) under this directory (True: `out/semantic` or a temporary
    directory). The `schedmate` annotator needs it and turns it on by itself; jobs' logs are written
    (and read) every `monitor_interval_s` (default: the annotator's own). `adapter`: what acts on
    failure signals (default: `adapters.simulated.FailureSignalAdapter` when the annotator follows
    running jobs; None: nothing). `policy_options`: keyword arguments for `build_scheduler` (see
    `schedmate.policies.policy_options`). `semantic_noise`: scale of the real-cluster noise added to the
    semantic augmentation (0: none, 1: calibrated, see `schedmate.semantic.augment.SemanticNoise`).

    `trace` may be a `ReplaySpec`: its fields then replace the keyword arguments of the same names (the
    keyword form is a thin wrapper over the spec). The spec that ran is recorded in `summary.spec`."""
    if isinstance(trace, ReplaySpec):
        spec_in = trace
        return replay(spec_in.trace, policy=spec_in.policy, placement=spec_in.placement,
                      annotator=annotator if not isinstance(annotator, str) else spec_in.annotator,
                      cluster=spec_in.cluster, network=spec_in.network, seed=spec_in.seed, fmt=spec_in.fmt,
                      on_error=spec_in.on_error, limit=spec_in.limit, workloads=spec_in.workloads,
                      scheduler=scheduler, config=config, out=spec_in.out, progress=progress,
                      semantic=spec_in.semantic, adapter=adapter, monitor_interval_s=spec_in.monitor_interval_s,
                      policy_options=spec_in.policy_options or None, semantic_noise=spec_in.semantic_noise)
    recorded = None
    if isinstance(trace, str) and isinstance(cluster, str):
        recorded = ReplaySpec(trace=trace, policy=policy, placement=placement,
                              annotator=annotator if isinstance(annotator, str) else getattr(annotator, "name", "custom"),
                              cluster=cluster, network=network, seed=seed, fmt=fmt, on_error=on_error,  # type: ignore[arg-type]
                              limit=limit, workloads=workloads, out=out, semantic=semantic,
                              monitor_interval_s=monitor_interval_s, policy_options=dict(policy_options or {}),
                              semantic_noise=semantic_noise)
    row_errors: list = []
    tmp_root: Path | None = None
    if isinstance(trace, str):
        from schedmate.traces import load_trace

        loaded = load_trace(trace, fmt=fmt, on_error=on_error, limit=limit, seed=seed)  # type: ignore[arg-type]
        jobs, row_errors = loaded.table, list(loaded.errors)
        _say_skipped(row_errors)
    elif isinstance(trace, JobTable):
        jobs = trace.head(limit) if limit else trace
    else:
        jobs = JobTable.from_jobs(list(trace)[:limit] if limit else list(trace))
    net = NetworkSpec.parse(network)
    spec = parse_cluster(cluster, net) if isinstance(cluster, str) else cluster
    if workloads:
        jobs = assign_workloads(jobs, seed)
    before = jobs
    jobs, dropped = fit_to_cluster(jobs, spec)
    if dropped:
        gone = [(str(before.id[i]), before.num_gpus.item(i)) for i in np.flatnonzero(before.num_gpus > spec.total_gpus)]
        print(f"warning: {dropped} job(s) need more GPUs than the cluster has ({spec.total_gpus}) and were "
              f"dropped: " + ", ".join(f"{i} ({g} GPUs)" for i, g in gone[:10]) + (" ..." if len(gone) > 10 else ""),
              file=sys.stderr)
    sched = scheduler or build_scheduler(policy, placement, **(policy_options or {}))
    ann = ANNOTATORS.create(annotator) if isinstance(annotator, str) else annotator
    label = getattr(ann, "name", str(annotator))
    if semantic is None and label == "schedmate":
        semantic = True
    if semantic:
        from schedmate.semantic import SemanticLogAnnotator, augment

        if semantic is True:
            import tempfile

            if out is not None:
                root = out / "semantic"
            else:  # a scratch directory, removed when the replay is done (give --semantic DIR to keep it)
                root = tmp_root = Path(tempfile.mkdtemp(prefix="schedmate-semantic-"))
        else:
            root = Path(semantic)
        from schedmate.semantic.augment import CALIBRATED_NOISE

        jobs = JobTable.from_jobs(augment(jobs.to_jobs(), root, seed,
                                          noise=CALIBRATED_NOISE.scaled(semantic_noise) if semantic_noise else None))
        if ann.monitor_interval_s:  # logs are written only for annotators that read them
            ann = SemanticLogAnnotator(ann, monitor_interval_s=monitor_interval_s)
    if adapter == "auto":
        from adapters.simulated import FailureSignalAdapter

        adapter = FailureSignalAdapter() if ann.monitor_interval_s else None
    cfg = config or ReplayConfig(seed=seed)
    sim = Simulator(jobs, spec, sched, ann, cfg, on_annotation=adapter)
    t0 = time.perf_counter()
    if progress and sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task(f"replaying {len(jobs)} jobs", total=len(jobs))
            sim.run(progress=lambda n: bar.update(task, completed=n))
    else:
        sim.run()
    wall = time.perf_counter() - t0
    table = job_table(sim)
    summary = summarize(
        sim, table, wall, policy=sched.describe(), annotator=label + ("+semantic" if semantic and label != "schedmate" else ""),
        network=network, seed=seed,
    )
    inner = getattr(ann, "inner", ann)
    if hasattr(inner, "cost_summary"):
        summary = summary.model_copy(update={"annotation": inner.cost_summary()})
    summary = summary.model_copy(update={"skipped_rows": len(row_errors), "dropped_jobs": dropped,
                                         "spec": recorded.model_dump(mode="json") if recorded else None})
    if dropped:
        sim.log.append({"time": 0.0, "event": "dropped_too_big", "jobs": dropped})
    if out is not None:
        write_outputs(sim, table, summary, out)
    if tmp_root is not None:
        import shutil

        shutil.rmtree(tmp_root, ignore_errors=True)
    return ReplayResult(summary=summary, jobs=table, sim=sim)


# ---------------------------------------------------------------------------------------------- CLI

REPLAY_HELP = """Replay a job trace in the simulator under a scheduling policy.

TRACE SPEC is a file or directory (format auto-detected or given by --format), `default` (the
embedded 500-job demo trace), `synth:<philly|helios|acme>:<jobs>[:seed]` (calibrated synthetic
jobs) or `derived:philly:<jobs>[:seed[:compress]]` (Philly arrivals and GPUs with real durations).

CLUSTER SPEC: a GPU count (`64`, `1024`: 8-GPU nodes, 16 nodes a rack), `nodes=N,gpus=G,rack=R`,
`philly` (real machine list), `alibaba2023` (real GPU node list) or a CSV `name,gpus[,gpu_type,rack]`.

NETWORK: `ideal` (placement still matters, no contention), `congested` (shared NICs, rack uplinks
oversubscribed 1:4) or `congested:R` (1:R).

With --json, prints one JSON object: jobs, avg_jct_s, p50_jct_s, p99_jct_s, avg_queue_s,
makespan_s, gpu_utilization, comm_overhead_gpu_s, preemptions, failed_gpu_hours, wall_s (and more).
With --out DIR, also writes jobs.parquet/jobs.csv, summary.json, timeseries.csv and plots.
"""


def _replay_command(
    trace: Annotated[str, typer.Option("--trace", help="Trace SPEC (see above).")] = "default",
    fmt: Annotated[
        str | None, typer.Option("--format", help=f"Trace format: {'|'.join(FORMATS)} (default: detect).")
    ] = None,
    policy: Annotated[str, typer.Option(help="Scheduling policy: " + "|".join(sorted(SCHEDULERS)))] = "fifo",
    placement: Annotated[
        str | None, typer.Option(help="Placement override: " + "|".join(sorted(PLACEMENTS)) + " (default: the policy's).")
    ] = None,
    annotator: Annotated[str, typer.Option(help="Annotator: none|oracle|history|helios|lucid|lastk|requested|schedmate.")] = "none",
    cluster: Annotated[str, typer.Option(help="Cluster SPEC (see above).")] = "64",
    network: Annotated[str, typer.Option(help="ideal | congested | congested:R")] = "congested",
    seed: Annotated[int, typer.Option(help="Seed for synthetic traces, workload assignment and random choices.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Directory for the per-job table, summary, time series, plots.")] = None,
    on_error: Annotated[str, typer.Option("--on-error", help="Malformed trace rows: fail | skip.")] = "fail",
    limit: Annotated[int | None, typer.Option(help="Replay only the first N jobs.")] = None,
    restart_cost: Annotated[float, typer.Option(help="Seconds of progress lost per preemption.")] = 60.0,
    semantic: Annotated[Path | None, typer.Option(
        help="Semantic augmentation: give jobs code and simulator-written logs under DIR "
             "(automatic for --annotator schedmate).")] = None,
    semantic_noise: Annotated[float, typer.Option(
        "--semantic-noise", min=0.0,
        help="Scale of the real-cluster noise added to the semantic augmentation: 0 none (default), 1 the "
             "calibrated amount (iteration-time dispersion, runs stopped before their configured length, "
             "scripts whose length is set at submission; traces/semantic/README.md), 2 twice it.")] = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (stable contract).")] = False,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o",
        help="Policy option KEY=VALUE, repeatable. delay / delay-tuned: any DelayConfig field "
             "(node_factor, rack_factor, age_cap_s, load_aware, locality_first, network_aware, ...), "
             "preemption=true|false, migration=true|false, preemption.FIELD / migration.FIELD of their "
             "configs (e.g. preemption.guard_victims=0, preemption.guard_pay=0.25: the guard's claims "
             "only when they pay, with the guard_backstop; migration.gain_factor=4), order=NAME.")] = None,
) -> None:
    try:
        result = replay(
            trace, policy=policy, placement=placement, annotator=annotator, cluster=cluster, network=network,
            seed=seed, fmt=fmt, on_error=on_error, limit=limit,
            config=ReplayConfig(seed=seed, restart_cost_s=restart_cost), out=out, progress=not as_json,
            semantic=semantic, policy_options=policy_options(policy, option or []), semantic_noise=semantic_noise,
        )
    except (ValueError, FileNotFoundError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    s = result.summary
    if as_json:
        typer.echo(json.dumps(s.model_dump()))
        return
    _print_summary(s, out)


def _print_summary(s: ReplaySummary, out: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"replay: {s.policy} / annotator {s.annotator} / {s.cluster_gpus} GPUs / {s.network}")
    t.add_column("metric")
    t.add_column("value", justify="right")
    rows: list[tuple[str, Any]] = [
        ("jobs", s.jobs), ("avg JCT (h)", f"{s.avg_jct_s / 3600:.3f}"), ("p50 JCT (h)", f"{s.p50_jct_s / 3600:.3f}"),
        ("p99 JCT (h)", f"{s.p99_jct_s / 3600:.3f}"), ("avg queueing (h)", f"{s.avg_queue_s / 3600:.3f}"),
        ("makespan (h)", f"{s.makespan_s / 3600:.2f}"), ("GPU utilisation", f"{s.gpu_utilization:.3f}"),
        ("comm. overhead (GPU-h)", f"{s.comm_overhead_gpu_s / 3600:.1f}"), ("preemptions", s.preemptions),
        ("migrations", s.migrations),
        ("failed GPU-hours", f"{s.failed_gpu_hours:.1f}"), ("wall (s)", f"{s.wall_s:.2f}"),
        ("events/s", f"{s.events_per_s:,.0f}"),
    ]
    for k, v in rows:
        t.add_row(k, str(v))
    Console().print(t)
    if out is not None:
        Console().print(f"outputs in {out}/")


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    app.command("replay", help=REPLAY_HELP)(_replay_command)
