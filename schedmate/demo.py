"""`schedmate demo`: the README's main job.

1. Checks the local LLM server and runs the two LLM components on sample jobs from the datasets
   (the code analyzer on a training job's code, the log monitor on a failing job's log).
2. Gives the embedded default trace (500 jobs) its semantic material (code, launch commands, logs
   written by the simulator as jobs run), replays it on 64 GPUs with a congested network under each
   policy with each annotator, `schedmate` (code analyzer + history + log monitor through the local
   LLM) among them, and prints the table (average/p99 JCT, queueing, failed GPU-h) and the LLM cost.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated

import typer

REPO = Path(__file__).resolve().parent.parent
POLICIES = ("fifo", "sjf", "qssf", "tiresias", "delay")
ANNOTATORS = ("none", "history", "helios", "schedmate", "oracle")


def _llm_components(console) -> None:
    from schedmate.llm import serving

    server = serving.running_server()
    if server is None:
        console.print("[yellow]no local LLM server is running: the LLM components fall back to rules/static[/]")
    else:
        console.print(f"LLM server: {server.engine} at {server.base_url} serving {server.model_alias}")
    from schedmate.codeprof.analyzer import analyze_code

    job_dir = REPO / "eval" / "datasets" / "code" / "jobs"
    sample = min((p for p in job_dir.iterdir() if p.is_dir()), default=None) if job_dir.is_dir() else None
    if sample is not None:
        t0 = time.perf_counter()
        command = (sample / "command.txt").read_text().strip() if (sample / "command.txt").exists() else None
        data = analyze_code(sample, command=command, use_llm=server is not None).to_contract()
        keys = ("framework", "model_name", "params", "num_gpus", "train_steps", "network_sensitivity", "llm_calls")
        shown = {k: data.get(k) for k in keys}
        console.print(f"code analyzer on {sample.name} ({time.perf_counter() - t0:.1f}s): {json.dumps(shown, default=str)}")
    log_dir = REPO / "eval" / "datasets" / "logs"
    logs = sorted(log_dir.glob("**/*.log"))
    failing = [p for p in logs if "oom" in p.name] or logs
    if failing:
        from schedmate.logmon.cli import make_monitor

        t0 = time.perf_counter()
        monitor = make_monitor(str(failing[0]), use_llm=server is not None)
        monitor.feed_bytes(failing[0].read_bytes())
        report = monitor.finish().contract_json()
        console.print(f"log monitor on {failing[0].name} ({time.perf_counter() - t0:.1f}s): "
                      f"{json.dumps(report['failure'], default=str)}")


def run_table(trace: str, cluster: str, network: str, policies: tuple[str, ...], annotators: tuple[str, ...],
              semantic: Path | None = None, progress=None):
    import pandas as pd

    from schedmate.annotators import ANNOTATORS as REGISTRY
    from schedmate.policies import SCHEDULERS
    from schedmate.replay import replay
    from schedmate.traces import load_trace

    jobs = load_trace(trace).jobs
    rows = []
    for policy in policies:
        if policy not in SCHEDULERS:
            continue
        for annotator in annotators:
            if annotator not in REGISTRY:
                continue
            if progress is not None:
                progress(f"{policy} / {annotator}")
            s = replay(jobs, policy=policy, annotator=annotator, cluster=cluster, network=network,
                       semantic=semantic).summary
            cost = s.annotation or {}
            rows.append({"policy": policy, "annotator": annotator, "avg_jct_h": s.avg_jct_s / 3600,
                         "p99_jct_h": s.p99_jct_s / 3600, "avg_queue_h": s.avg_queue_s / 3600,
                         "makespan_h": s.makespan_s / 3600, "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600,
                         "failed_gpu_h": s.failed_gpu_hours, "llm_calls_per_job": cost.get("llm_calls_per_job"),
                         "wall_s": s.wall_s})
    return pd.DataFrame(rows)


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        trace: Annotated[str, typer.Option(help="Trace SPEC.")] = "default",
        cluster: Annotated[str, typer.Option(help="Cluster SPEC.")] = "64",
        network: Annotated[str, typer.Option(help="ideal | congested | congested:R")] = "congested",
        skip_llm: Annotated[bool, typer.Option("--skip-llm", help="Skip the LLM component showcase.")] = False,
    ) -> None:
        """Run the main job: the LLM components on sample jobs, then the replay table on the default trace."""
        from rich.console import Console
        from rich.table import Table

        console = Console(width=160)
        if not skip_llm:
            _llm_components(console)
        import os

        semantic = Path(os.environ.get("SCHEDMATE_HOME", Path.home() / ".schedmate")) / "demo" / "semantic"
        console.print(f"semantic material for the trace's jobs: {semantic}")
        with console.status("replaying") as status:
            df = run_table(trace, cluster, network, POLICIES, ANNOTATORS, semantic=semantic,
                           progress=lambda what: status.update(f"replaying: {what}"))
        table = Table(title=f"trace {trace} on {cluster} GPUs, {network} network")
        for col in df.columns:
            table.add_column(col, justify="right" if df[col].dtype.kind == "f" else "left")
        for _, r in df.iterrows():
            table.add_row(*["-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}" if isinstance(v, float) else str(v) for v in r])
        console.print(table)
        base = df[df["annotator"] == "none"].set_index("policy")["avg_jct_h"]
        for annotator in df["annotator"].unique():
            if annotator == "none":
                continue
            cur = df[df["annotator"] == annotator].set_index("policy")["avg_jct_h"]
            ratios = (base / cur).dropna()
            if len(ratios):
                console.print(f"{annotator}: average JCT {ratios.max():.2f}x lower than no annotation at best "
                              f"({ratios.idxmax()})")
