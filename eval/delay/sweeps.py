"""The delay experiment's side studies: load sweep, starvation guard sweep, oversubscription stress,
ablation of delay's mechanisms, and delay driven by the `schedmate` annotator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import typer
from rich.progress import Progress

from eval.delay.report import vs_baselines
from eval.delay.workloads import (
    ANNOTATORS,
    BASELINES,
    CLUSTER,
    CLUSTER_4GPU,
    CLUSTER_PHILLY,
    CLUSTER_TESTBED,
    CONGESTED,
    WORKLOADS,
    distributed,
    floors,
    offered_load,
    p99_floor,
    scheduler,
)
from schedmate.policies import build_scheduler
from schedmate.policies.base import Scheduler
from schedmate.records import Job
from schedmate.replay import replay
from schedmate.traces import load_trace

# ------------------------------------------------------------------------------------------ load sweep

SWEEP_COMPRESS = (0.45, 1.0, 2.0, 5.0)
SWEEP_LOADS = (0.9, 1.5, 3.0)
SWEEP_LOADS_4GPU_C8 = (0.9, 1.2, 1.5, 2.0)
SWEEP_LOADS_TESTBED = (1.2, 1.5, 2.0)
SWEEP_POLICIES = ("consolidate-fifo", "consolidate", "consolidate-rack", "scatter", "delay")


def load_sweep(out: Path, seeds: tuple[int, ...]) -> pd.DataFrame:
    """Philly-derived workload at several load levels (arrivals compressed more) and the distributed
    workload at several offered loads on both node sizes, congested:4; distributed-4gpu also under
    congested:8 (where classic consolidation crosses the 1:8 uplinks) and testbed64 under both; fixed
    delay. Means over `seeds` (`load_sweep.csv` keeps every seed)."""
    # (workload, cluster, GPUs, network, level: Philly's arrival compression or the target load, jobs(seed))
    cases: list[tuple[str, str, int, str, float, Callable[[int], list[Job]]]] = [
        ("philly", CLUSTER, 256, "congested:4", c, lambda s, c=c: load_trace(f"derived:philly:800:{s}:{c}").jobs)
        for c in SWEEP_COMPRESS]
    for load in sorted(set(SWEEP_LOADS) | set(SWEEP_LOADS_4GPU_C8)):
        def dist(s: int, load: float = load) -> list[Job]:
            return distributed(800, s, 256, load)
        if load in SWEEP_LOADS:
            cases += [("distributed", CLUSTER, 256, "congested:4", load, dist),
                      ("distributed-4gpu", CLUSTER_4GPU, 256, "congested:4", load, dist)]
        if load in SWEEP_LOADS_4GPU_C8:
            cases.append(("distributed-4gpu", CLUSTER_4GPU, 256, "congested:8", load, dist))
    for load in SWEEP_LOADS_TESTBED:
        def testbed(s: int, load: float = load) -> list[Job]:
            return distributed(400, s, 64, load)
        cases += [("testbed64", CLUSTER_TESTBED, 64, net, load, testbed) for net in CONGESTED]
    rows = []
    with Progress(transient=True) as bar:
        task = bar.add_task("load sweep", total=len(cases) * len(seeds))
        for wname, cluster, gpus, net, c, make in cases:
            for seed in seeds:
                jobs = make(seed)
                load = round(offered_load(jobs, gpus), 2)
                floor_p99 = p99_floor(jobs)
                for pol in SWEEP_POLICIES:
                    for ann in ANNOTATORS if pol == "delay" else ("none",):
                        s = replay(jobs, scheduler=scheduler(pol), annotator=ann, cluster=cluster, network=net,
                                   seed=seed).summary
                        rows.append({"workload": wname, "network": net, "level": c, "seed": seed,
                                     "offered_load": load, "p99_floor_h": floor_p99 / 3600,
                                     "annotator": ann if pol == "delay" else "both",
                                     "policy": pol, "makespan_h": s.makespan_s / 3600,
                                     "avg_jct_h": s.avg_jct_s / 3600, "p99_jct_h": s.p99_jct_s / 3600,
                                     "avg_queue_h": s.avg_queue_s / 3600,
                                     "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600,
                                     "gpu_util": s.gpu_utilization, "preemptions": s.preemptions,
                                     "migrations": s.migrations})
                bar.advance(task)
    df = pd.DataFrame(rows)
    df.to_csv(out / "load_sweep.csv", index=False)
    return df


# ------------------------------------------------------------------------------------------ stress

STRESS_NETWORKS = ("congested:8", "congested:16", "congested:32")


def oversubscription(out: Path, seeds: tuple[int, ...]) -> pd.DataFrame:
    """Where the -50 % makespan target would come within reach: the static testbed trace with the rack
    uplinks oversubscribed beyond the published setups (1:16, 1:32), delay (fixed) against each
    consolidation baseline. Means over seeds of the per-seed changes (`oversubscription.csv`)."""
    w = next(w for w in WORKLOADS if w.name == "testbed64-static")
    rows = []
    for seed in seeds:
        jobs = w.make(seed, False)
        mk_floor, _ = floors(jobs, w.gpus)
        for net in STRESS_NETWORKS:
            for pol, ann in [(b, "none") for b, _ in BASELINES] + [("delay", a) for a in ANNOTATORS]:
                s = replay(jobs, scheduler=scheduler(pol), annotator=ann, cluster=w.cluster, network=net,
                           seed=seed).summary
                rows.append({"seed": seed, "network": net, "policy": pol, "annotator": ann,
                             "makespan_h": s.makespan_s / 3600, "avg_jct_h": s.avg_jct_s / 3600,
                             "makespan_floor_h": mk_floor / 3600})
    df = pd.DataFrame(rows)
    df.to_csv(out / "oversubscription.csv", index=False)
    rel = vs_baselines(df, ["seed", "network"], ["makespan_h", "avg_jct_h"], (("makespan_floor_h", "makespan_h"),))
    delay = rel[rel.policy == "delay"]
    cols = [c for c in delay.columns if c.endswith("_pct") or c in ("makespan_h", "avg_jct_h")]
    return delay.groupby(["network", "annotator"], sort=False)[cols].mean().reset_index()


# ------------------------------------------------------------------------------------------ ablation

ABLATION_VARIANTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("delay", ()),
    ("session-4 guard", ("guard=age", "preemption.guard_claims=lower")),
    ("guard protects at once", ("guard_wait_factor=0",)),
    ("guard drains", ("preemption.guard_victims=0",)),
    ("no locality-first", ("locality_first=false",)),
    ("no preemption", ("preemption=false",)),
    ("no migration", ("migration=false",)),
)
"""Delay with one mechanism off at a time (`-o` options of `schedmate replay`)."""


def ablation(out: Path, seeds: tuple[int, ...]) -> pd.DataFrame:
    """Each delay mechanism off in turn (`ABLATION_VARIANTS`) next to `consolidate-rack`: testbed64 under
    congested:8 at loads 0.9 and 1.5, and the Philly-derived workload on the real Philly machine list
    overloaded (`derived:philly:6000:<seed>:3.2`, offered load about 1.2) under congested:4. Means over
    seeds (`ablation.csv` keeps every seed)."""
    from schedmate.policies.schedulers import policy_options

    def testbed(load: float) -> Callable[[int], list[Job]]:
        return lambda s: distributed(400, s, 64, load)

    cases: list[tuple[str, str, str, Callable[[int], list[Job]]]] = [
        ("testbed64 load 0.9", CLUSTER_TESTBED, "congested:8", testbed(0.9)),
        ("testbed64 load 1.5", CLUSTER_TESTBED, "congested:8", testbed(1.5)),
        ("philly-cluster load 1.2", CLUSTER_PHILLY, "congested:4",
         lambda s: load_trace(f"derived:philly:6000:{s}:3.2").jobs),
    ]
    rows = []
    with Progress(transient=True) as bar:
        task = bar.add_task("ablation", total=len(cases) * len(seeds))
        for name, cluster, net, make in cases:
            for seed in seeds:
                jobs = make(seed)
                floor_p99 = p99_floor(jobs)
                runs: list[tuple[str, str, Scheduler]] = [("consolidate-rack", "none", scheduler("consolidate-rack"))]
                runs += [(label, ann, build_scheduler("delay", **policy_options("delay", list(opts))))
                         for label, opts in ABLATION_VARIANTS for ann in ANNOTATORS]
                for label, ann, sched in runs:
                    res = replay(jobs, scheduler=sched, annotator=ann, cluster=cluster, network=net, seed=seed)
                    s = res.summary
                    rows.append({"case": name, "network": net, "seed": seed, "variant": label, "annotator": ann,
                                 "avg_jct_h": s.avg_jct_s / 3600, "p99_jct_h": s.p99_jct_s / 3600,
                                 "makespan_h": s.makespan_s / 3600, "max_queue_h": res.jobs["queue_s"].max() / 3600,
                                 "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600, "preemptions": s.preemptions,
                                 "migrations": s.migrations, "p99_queue_h": res.jobs["queue_s"].quantile(0.99) / 3600,
                                 "p99_floor_h": floor_p99 / 3600})
                bar.advance(task)
    df = pd.DataFrame(rows)
    df.to_csv(out / "ablation.csv", index=False)
    keys = ["case", "network", "variant", "annotator"]
    cols = ["avg_jct_h", "p99_jct_h", "makespan_h", "max_queue_h", "p99_queue_h", "comm_overhead_gpu_h",
            "preemptions", "migrations", "p99_floor_h"]
    return df.groupby(keys, sort=False)[cols].mean().reset_index()


# ------------------------------------------------------------------------------------------ semantic

SEMANTIC_CASES = (("testbed64", "congested:4"), ("testbed64", "congested:8"),
                  ("distributed-4gpu", "congested:4"), ("distributed-4gpu", "congested:8"))


def semantic_rows(out: Path) -> pd.DataFrame:
    """`delay` driven by the `schedmate` annotator (its static code analysis and log monitor, no LLM:
    sensitivity and duration predicted from each job's code and logs, written by the semantic
    augmentation) next to `none` and `oracle` (`semantic.csv`; seed 0)."""
    import tempfile

    from schedmate.annotators.semantic import SemanticAnnotator

    workloads = {w.name: w for w in WORKLOADS}
    rows = []
    for wname, net in SEMANTIC_CASES:
        w = workloads[wname]
        jobs = w.make(0, False)
        for ann in ("none", "schedmate", "oracle"):
            annotator = SemanticAnnotator(use_llm=False) if ann == "schedmate" else ann
            with tempfile.TemporaryDirectory() as material:
                s = replay(jobs, scheduler=scheduler("delay"), annotator=annotator, cluster=w.cluster, network=net,
                           seed=0, semantic=Path(material) if ann == "schedmate" else None).summary
            rows.append({"workload": wname, "network": net, "annotator": ann, "policy": "delay",
                         "makespan_h": s.makespan_s / 3600, "avg_jct_h": s.avg_jct_s / 3600,
                         "p99_jct_h": s.p99_jct_s / 3600, "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600,
                         "migrations": s.migrations, "preemptions": s.preemptions})
            typer.echo(f"semantic {wname} {net} {ann}: avg JCT {rows[-1]['avg_jct_h']:.2f} h")
    df = pd.DataFrame(rows)
    df.to_csv(out / "semantic.csv", index=False)
    return df

