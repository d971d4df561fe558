"""The delay experiment's main grid: every workload x seed x network x policy (x annotator for delay)."""

from __future__ import annotations

import pandas as pd
import typer
from rich.progress import Progress

from eval.delay.workloads import (
    ANNOTATORS,
    BASELINE_POLICIES,
    NETWORKS,
    POLICIES,
    WORKLOADS,
    floors,
    offered_load,
    p99_floor,
    scheduler,
)
from schedmate.policies.base import Scheduler
from schedmate.replay import replay


def by_size(res, keys: dict) -> list[dict]:
    """Per GPU count: mean queueing, mean stretch (run / consolidated duration) and share spread."""
    j = res.jobs
    out = []
    for g, grp in j.groupby("num_gpus"):
        out.append({**keys, "num_gpus": int(g), "jobs": len(grp), "avg_queue_h": grp["queue_s"].mean() / 3600,
                    "avg_jct_h": grp["jct_s"].mean() / 3600,
                    "stretch": (grp["run_s"] / grp["duration_s"].clip(lower=1e-9)).mean(),
                    "spread_share": float((grp["max_nodes"] > 1).mean()),
                    "comm_gpu_h": grp["comm_lost_gpu_s"].sum() / 3600})
    return out


def _row(keys: dict, res, sched: Scheduler) -> dict:
    s = res.summary
    tuner = sched.on_tick
    row = {**keys, "jobs": s.jobs, "makespan_h": s.makespan_s / 3600, "avg_jct_h": s.avg_jct_s / 3600,
           "p99_jct_h": s.p99_jct_s / 3600, "avg_queue_h": s.avg_queue_s / 3600,
           "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600, "gpu_util": s.gpu_utilization,
           "preemptions": s.preemptions, "migrations": s.migrations, "unfinished": s.unfinished,
           "spread_jobs": int((res.jobs["max_nodes"] > 1).sum()), "wall_s": s.wall_s,
           "tuner_s": getattr(tuner, "wall_s", 0.0), "tuner_runs": getattr(tuner, "forward_runs", 0),
           "tunes": getattr(tuner, "tuned", 0)}
    if keys["policy"].startswith("delay"):
        lv = sched.placement.levels
        row.update(placed_L0=lv[0], placed_L1=lv[1], placed_L2=lv[2],
                   guard_claims=getattr(sched.preemption, "claims", 0))
    return row


def run_all(seeds: tuple[int, ...], quick: bool) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Every workload x seed x network x policy (x annotator for delay): (raw rows, tuner log, by size)."""
    rows, logs, sizes = [], [], []
    with Progress(transient=True) as bar:
        task = bar.add_task("delay experiment", total=len(WORKLOADS) * len(seeds) * len(NETWORKS))
        for w in WORKLOADS:
            for seed in seeds:
                jobs = w.make(seed, quick)
                mk_floor, jct_floor = floors(jobs, w.gpus)
                for net in NETWORKS:
                    base = {"workload": w.name, "cluster": w.cluster, "seed": seed, "network": net,
                            "offered_load": round(offered_load(jobs, w.gpus), 3),
                            "makespan_floor_h": mk_floor / 3600, "jct_floor_h": jct_floor / 3600,
                            "p99_floor_h": p99_floor(jobs) / 3600}
                    for pol in POLICIES:
                        for ann in (("none",) if pol in BASELINE_POLICIES else ANNOTATORS):
                            sched = scheduler(pol)
                            res = replay(jobs, scheduler=sched, annotator=ann, cluster=w.cluster, network=net,
                                         seed=seed)
                            keys = {**base, "annotator": ann if pol not in BASELINE_POLICIES else "both",
                                    "policy": pol}
                            rows.append(_row(keys, res, sched))
                            sizes += by_size(res, {k: keys[k] for k in
                                                   ("workload", "seed", "network", "annotator", "policy")})
                            logs += [{"workload": w.name, "seed": seed, "network": net, "annotator": ann, **e}
                                     for e in res.sim.log if e.get("event") == "delay_tuner"]
                    bar.advance(task)
                    typer.echo(f"{w.name:17s} seed {seed} {net:12s} done")
    return pd.DataFrame(rows), pd.DataFrame(logs), pd.DataFrame(sizes)
