"""Delay scheduling experiment: delay (fixed / tuned) vs consolidation vs scatter (and random), over seeds.

    .venv/bin/python -m eval.delay.run --out eval/delay/results            # about 8 minutes
    .venv/bin/python -m eval.delay.run --quick --out /tmp/delay            # smoke run, under a minute

Every policy but one uses the same queue order (`fifo-nb`: submission order, non-blocking), so only
the placement (and, for delay, its preemption, migration and tuner) differs. The exception is the
Tiresias-style consolidation baseline `consolidate-fifo`: strict FIFO (the head job waits for a packed
placement in one rack and holds the queue, no backfilling), as the Tiresias simulator's `fifo` schedule
with its per-switch `yarn` placement runs it. The baselines read no annotation, so they run once per
seed (annotator `none`) and stand for both annotators.

Workloads (`WORKLOADS`; each replayed for every seed in `--seeds`: the seed draws the synthetic jobs,
the Philly durations and the catalogue models):

* `philly`: `derived:philly:800:<seed>:0.45` on 256 GPUs (32 x 8-GPU nodes, 16 a rack): real Philly
  arrivals (Gavel's per-VC msr traces) and GPU counts, durations from the real (duration, GPUs) pairs,
  arrivals stretched so that the offered load is about 0.9 (0.91-0.98 for seeds 0-2).
* `philly-cluster`: `derived:philly:3000:<seed>:3.2` on the real Philly machine list (552 machines of 2
  and 8 GPUs, 2,490 GPUs; racks of 16 machines in list order): offered load 0.91-1.24 for seeds 0-2.
* `helios`: `synth:helios:3000:<seed>` with `target_load=0.9, cluster_gpus=256, max_gpus=64` on 256 GPUs.
* `distributed`: `synth:distributed:800:<seed>` (multi-GPU jobs only, 2-32 GPUs, Gavel's durations and
  distributed models; offered load 0.9 on 256 GPUs; `schedmate/traces/distributed.py`).
* `distributed-4gpu`: the same jobs on 64 nodes x 4 GPUs (16 a rack), where 8-GPU jobs span two nodes.
* `testbed64`: `synth:distributed:400:<seed>` at load 0.9 on the published testbeds' size, 16 nodes x 4
  GPUs in two racks of 8 (`nodes=16,gpus=4,rack=8`), where a 32-GPU job takes a whole rack.
* `testbed64-static`: `synth:distributed:200:<seed>` all submitted at time 0 on the same testbed: a
  static trace, Gavel's setting for makespan ("the time to train all jobs").

Networks `ideal`, `congested:4`, `congested:8`; annotators `none` (sensitivity and duration unknown:
every job alike) and `oracle`. For every workload and seed, `makespan_floor_h` is a lower bound on
any scheduler's makespan (the latest arrival + consolidated duration, and the first arrival + all
GPU-time / cluster GPUs) and `jct_floor_h` one on its average JCT (the mean consolidated duration);
`*_floor_vs_<baseline>_pct` is thus the most any scheduler could cut from that baseline.

Outputs in `--out`: `raw.csv` (one row per replay), `results.csv` / `results.md` (means over seeds;
changes vs each consolidation baseline and comm. overhead vs scatter as the mean, min and max of the
per-seed changes), `targets.md` (the issue's targets against each consolidation baseline, with the
floors), `queue_by_size.csv`, `tuner_log.csv`, `<workload>_{none,oracle}.png`, the load sweep
(`load_sweep.csv`, `load_sweep_means.csv`, `sweep_*.png`), the starvation guard's sweep
(`guard_sweep.csv`, `guard_sweep_means.csv`), the ablation of delay's mechanisms (`ablation.csv`,
`ablation_means.csv`), the static trace under uplinks oversubscribed beyond the published setups
(`oversubscription.csv`, `oversubscription_means.csv`) and `semantic.csv` (delay driven by the
`schedmate` annotator).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.progress import Progress

from eval.plotting import save_figure
from schedmate.policies import build_scheduler
from schedmate.policies.base import Scheduler
from schedmate.policies.tuner import TunerConfig
from schedmate.records import Job
from schedmate.replay import replay
from schedmate.traces import load_trace

CLUSTER = "256"
CLUSTER_4GPU = "nodes=64,gpus=4,rack=16"
CLUSTER_TESTBED = "nodes=16,gpus=4,rack=8"
"""64 GPUs on 4-GPU servers, two racks: the size of the published testbeds (Tiresias 15 x 4, Pollux 16 x 4)."""
CLUSTER_PHILLY = "philly"
"""The real Philly machine list (`../shared/traces/philly/cluster_machine_list`)."""
NETWORKS = ("ideal", "congested:4", "congested:8")
CONGESTED = ("congested:4", "congested:8")
ANNOTATORS = ("none", "oracle")
BASELINE_POLICIES = ("consolidate-fifo", "consolidate", "consolidate-rack", "scatter", "random")
"""Policies that read no annotation: replayed once per seed, for both annotators."""
DELAY_POLICIES = ("delay", "delay-tuned")
POLICIES = BASELINE_POLICIES + DELAY_POLICIES
BASELINES = (("consolidate-fifo", "consolidate_fifo"), ("consolidate", "consolidate"),
             ("consolidate-rack", "consolidate_rack"))
"""The consolidation baselines each policy is compared with: (policy, column tag)."""
SEEDS = (0, 1, 2)
TARGET_MAKESPAN_PCT, TARGET_JCT_PCT, TARGET_COMM_PCT, TARGET_TUNER_SHARE = -50.0, -60.0, -90.0, 0.10
"""The issue's targets: under congestion, makespan and average JCT vs consolidation-based scheduling,
comm. overhead vs scatter, and the tuner's share of replay wall time."""


@dataclass(frozen=True)
class Workload:
    name: str
    cluster: str
    gpus: int
    make: Callable[[int, bool], list[Job]]
    """(seed, quick) -> jobs."""


def _static(jobs: list[Job]) -> list[Job]:
    """A static trace: every job submitted at time 0 (its order kept)."""
    return [j.model_copy(update={"submit_time": 0.0}) for j in jobs]


def distributed(n: int, seed: int, gpus: int, load: float = 0.9) -> list[Job]:
    """`synth:distributed:<n>:<seed>` at offered `load` on `gpus` GPUs."""
    return load_trace(f"synth:distributed:{n}:{seed}", target_load=load, cluster_gpus=gpus).jobs


def _dist(n: int, gpus: int) -> Callable[[int, bool], list[Job]]:
    return lambda seed, quick: distributed(n // 3 if quick else n, seed, gpus)


WORKLOADS: tuple[Workload, ...] = (
    Workload("philly", CLUSTER, 256,
             lambda seed, quick: load_trace(f"derived:philly:{300 if quick else 800}:{seed}:0.45").jobs),
    Workload("philly-cluster", CLUSTER_PHILLY, 2490,
             lambda seed, quick: load_trace(f"derived:philly:{1000 if quick else 3000}:{seed}:3.2").jobs),
    Workload("helios", CLUSTER, 256,
             lambda seed, quick: load_trace(f"synth:helios:{1000 if quick else 3000}:{seed}", target_load=0.9,
                                            cluster_gpus=256, max_gpus=64).jobs),
    Workload("distributed", CLUSTER, 256, _dist(800, 256)),
    Workload("distributed-4gpu", CLUSTER_4GPU, 256, _dist(800, 256)),
    Workload("testbed64", CLUSTER_TESTBED, 64, _dist(400, 64)),
    Workload("testbed64-static", CLUSTER_TESTBED, 64, lambda seed, quick: _static(_dist(200, 64)(seed, quick))),
)


def floors(jobs: list[Job], gpus: int) -> tuple[float, float]:
    """(makespan, average JCT) no scheduler can beat on `gpus` GPUs: a job cannot end before its
    arrival plus its consolidated duration, and all GPU-time needs at least GPU-time / GPUs; a job's
    JCT is at least its consolidated duration."""
    start = min(j.submit_time for j in jobs)
    makespan = max(max(j.submit_time + j.duration_s for j in jobs),
                   start + sum(j.num_gpus * j.duration_s for j in jobs) / gpus) - start
    return makespan, statistics.fmean(j.duration_s for j in jobs)


def offered_load(jobs: list, gpus: int) -> float:
    span = max(j.submit_time for j in jobs) - min(j.submit_time for j in jobs)
    return sum(j.num_gpus * j.duration_s for j in jobs) / (gpus * span) if span > 0 else float("inf")


def scheduler(policy: str) -> Scheduler:
    if policy.startswith("delay"):
        return build_scheduler(policy, tuner=TunerConfig())
    if policy == "consolidate-fifo":
        sched = build_scheduler("fifo", "consolidate-rack")
        sched.backfill = False  # strict: nothing passes a head that waits for its packed placement
        sched.name = "consolidate-fifo"
        return sched
    return build_scheduler("fifo-nb", policy)


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
                            "makespan_floor_h": mk_floor / 3600, "jct_floor_h": jct_floor / 3600}
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


def _expand_both(df: pd.DataFrame) -> pd.DataFrame:
    """Baseline rows (annotator `both`) stand for both annotators in comparisons."""
    both = df[df.annotator == "both"]
    return pd.concat([df[df.annotator != "both"], *[both.assign(annotator=a) for a in ANNOTATORS]],
                     ignore_index=True)


def vs_baselines(df: pd.DataFrame, keys: list[str], metrics: list[str],
                 floors: tuple[tuple[str, str], ...] = ()) -> pd.DataFrame:
    """`df` with, for each consolidation baseline (`BASELINES`, its rows in `df` matched on `keys`), the
    change of every metric `<m>_h` as `<m>_vs_<tag>_pct`, and of every (floor column, metric) pair in
    `floors` as `<floor>_vs_<tag>_pct` (the most any scheduler could cut from the baseline), in %."""
    out = df
    for base_policy, tag in BASELINES:
        base = df[df.policy == base_policy][keys + metrics].rename(columns={m: f"{m}_base" for m in metrics})
        out = out.merge(base, on=keys)
        for m in metrics:
            out[f"{m[:-2]}_vs_{tag}_pct"] = 100 * (out[m] / out[f"{m}_base"] - 1)
        for floor, m in floors:
            out[f"{floor[:-2]}_vs_{tag}_pct"] = 100 * (out[floor] / out[f"{m}_base"] - 1)
        out = out.drop(columns=[f"{m}_base" for m in metrics])
    return out


def relative(raw: pd.DataFrame) -> pd.DataFrame:
    """Per seed: each row's change vs each consolidation baseline (makespan, average and p99 JCT) and its
    comm. overhead vs scatter, in %; the floors as the most any scheduler could cut from each baseline."""
    df = _expand_both(raw)
    keys = ["workload", "seed", "network", "annotator"]
    out = vs_baselines(df, keys, ["makespan_h", "avg_jct_h", "p99_jct_h"],
                       (("makespan_floor_h", "makespan_h"), ("jct_floor_h", "avg_jct_h")))
    scat = df[df.policy == "scatter"][keys + ["comm_overhead_gpu_h"]].rename(columns={"comm_overhead_gpu_h": "scat"})
    out = out.merge(scat, on=keys)
    out["comm_vs_scatter_pct"] = 100 * (out["comm_overhead_gpu_h"] / out["scat"].where(out["scat"] > 0) - 1)
    return out.drop(columns=["scat"])


def aggregate(rel: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds; for the % columns also the min and max over seeds; the tuner's share of the
    replay wall time as total tuner time / total replay time over the seeds."""
    keys = ["workload", "cluster", "network", "annotator", "policy"]
    pct = [c for c in rel.columns if c.endswith("_pct")]
    num = [c for c in rel.columns if c not in keys + ["seed"] and pd.api.types.is_numeric_dtype(rel[c])]
    g = rel.groupby(keys, sort=False)
    out = g[num].mean()
    out["seeds"] = g.size()
    for c in pct:
        out[f"{c}_min"] = g[c].min()
        out[f"{c}_max"] = g[c].max()
    out["tuner_share"] = g["tuner_s"].sum() / g["wall_s"].sum()
    out = out.reset_index()
    rank = {
        "workload": {w.name: i for i, w in enumerate(WORKLOADS)}, "network": {n: i for i, n in enumerate(NETWORKS)},
        "policy": {p: i for i, p in enumerate(POLICIES)}, "annotator": {a: i for i, a in enumerate(ANNOTATORS)},
    }
    order = out[list(rank)].apply(lambda col: col.map(rank[col.name]).fillna(len(rank[col.name])))
    return out.loc[order.sort_values(list(rank)).index].reset_index(drop=True)


def _fmt_h(v: float) -> str:
    return f"{v:,.1f}" if v >= 10 else f"{v:.2f}"


def _fmt_pct(row: pd.Series, col: str, spread: bool = False) -> str:
    v = row[col]
    if pd.isna(v):
        return ""
    text = f"{v:+.1f}"
    if spread and row.get("seeds", 1) > 1:
        text += f" [{row[col + '_min']:+.0f}, {row[col + '_max']:+.0f}]"
    return text


def markdown(agg: pd.DataFrame, networks: tuple[str, ...] = NETWORKS) -> str:
    """The results table (means over seeds; [min, max] of the per-seed changes for delay)."""
    cols = ["workload", "network", "annotator", "policy", "makespan h", "avg JCT h", "p99 JCT h", "avg queue h",
            "GPU util", "comm GPU-h", "preempt.", "moves", "makespan % fifo", "avg JCT % fifo", "makespan % cons",
            "avg JCT % cons", "avg JCT % rack", "comm % scatter", "tuner share"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * 4 + "---:|" * (len(cols) - 4)]
    for _, r in agg[agg.network.isin(networks)].iterrows():
        spread = r.policy.startswith("delay")
        if r.annotator == "oracle" and not spread:
            continue  # baselines: one row, annotator "both"
        cells = [r.workload, r.network, "both" if not spread else r.annotator, r.policy, _fmt_h(r.makespan_h),
                 _fmt_h(r.avg_jct_h), _fmt_h(r.p99_jct_h), _fmt_h(r.avg_queue_h), f"{r.gpu_util:.2f}",
                 f"{r.comm_overhead_gpu_h:,.0f}", f"{r.preemptions:.0f}", f"{r.migrations:.0f}",
                 _fmt_pct(r, "makespan_vs_consolidate_fifo_pct", spread), _fmt_pct(r, "avg_jct_vs_consolidate_fifo_pct", spread),
                 _fmt_pct(r, "makespan_vs_consolidate_pct", spread), _fmt_pct(r, "avg_jct_vs_consolidate_pct", spread),
                 _fmt_pct(r, "avg_jct_vs_consolidate_rack_pct", spread), _fmt_pct(r, "comm_vs_scatter_pct"),
                 f"{100 * r.tuner_share:.1f}%" if r.policy == "delay-tuned" else ""]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def headline(agg: pd.DataFrame) -> str:
    """One row per workload x congested network: delay's change (annotator `none` / `oracle`, means over
    seeds) of makespan and average JCT vs each consolidation baseline, with the floor (the most any
    scheduler could cut) in brackets, and its comm. overhead vs scatter."""
    d = agg[(agg.policy == "delay") & agg.network.isin(CONGESTED)].set_index(["workload", "network", "annotator"])
    head = ["workload", "network", "offered load"]
    for _, tag in BASELINES:
        head += [f"makespan % {tag.replace('_', '-')}", f"avg JCT % {tag.replace('_', '-')}"]
    head.append("comm % scatter")
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for (wname, net), _ in d.groupby(level=[0, 1], sort=False):
        none, oracle = d.loc[(wname, net, "none")], d.loc[(wname, net, "oracle")]
        cells = [wname, net, f"{none.offered_load:.2f}"]
        for _, tag in BASELINES:
            for m, floor in (("makespan", "makespan_floor"), ("avg_jct", "jct_floor")):
                cells.append(f"{none[f'{m}_vs_{tag}_pct']:+.1f} / {oracle[f'{m}_vs_{tag}_pct']:+.1f} "
                             f"({none[f'{floor}_vs_{tag}_pct']:+.0f})")
        cells.append(f"{none.comm_vs_scatter_pct:+.1f} / {oracle.comm_vs_scatter_pct:+.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def targets(agg: pd.DataFrame) -> str:
    """The issue's targets under congestion, per workload x network x annotator, against each
    consolidation baseline: delay's (fixed timers) makespan and average-JCT change, the most any
    scheduler could cut (floors), and whether both targets are met on that row."""
    lines = [
        ("Delay (fixed timers) vs each consolidation baseline, `none` / `oracle`, means over seeds; in brackets "
        "the floor: the most any scheduler could cut from that baseline."),
        "",
        headline(agg),
        (f"Targets: makespan <= {TARGET_MAKESPAN_PCT:+.0f} % and average JCT <= {TARGET_JCT_PCT:+.0f} % vs "
        f"consolidation-based scheduling under congestion; comm. overhead <= {TARGET_COMM_PCT:+.0f} % vs scatter; "
        f"tuner share <= {100 * TARGET_TUNER_SHARE:.0f} %. Means over seeds; `floor` = the most any scheduler "
        "could cut from that baseline (makespan / average-JCT lower bounds). Both = both targets met on the row."),
        "",
        ("| workload | network | annotator | baseline | delay makespan % | floor % | delay avg JCT % | floor % "
        "| both | comm % scatter | tuner share |"),
        "|---|---|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    delay = agg[(agg.policy == "delay") & agg.network.isin(CONGESTED)]
    tuned = agg[(agg.policy == "delay-tuned")].set_index(["workload", "network", "annotator"])["tuner_share"]
    for _, r in delay.iterrows():
        share = tuned.get((r.workload, r.network, r.annotator), float("nan"))
        for base, tag in BASELINES:
            mk, jct = r[f"makespan_vs_{tag}_pct"], r[f"avg_jct_vs_{tag}_pct"]
            both = mk <= TARGET_MAKESPAN_PCT and jct <= TARGET_JCT_PCT
            lines.append(
                f"| {r.workload} | {r.network} | {r.annotator} | {base} | {mk:+.1f} | "
                f"{r[f'makespan_floor_vs_{tag}_pct']:+.1f} | {jct:+.1f} | {r[f'jct_floor_vs_{tag}_pct']:+.1f} | "
                f"{'yes' if both else 'no'} | {r.comm_vs_scatter_pct:+.1f} | {100 * share:.1f}% |")
    summary = []
    for base, tag in BASELINES:
        mk_best = delay[f"makespan_vs_{tag}_pct"].min()
        jct_best = delay[f"avg_jct_vs_{tag}_pct"].min()
        floor_best = delay[f"makespan_floor_vs_{tag}_pct"].min()
        met = delay[(delay[f"makespan_vs_{tag}_pct"] <= TARGET_MAKESPAN_PCT)
                    & (delay[f"avg_jct_vs_{tag}_pct"] <= TARGET_JCT_PCT)]
        summary.append(f"* vs `{base}`: best makespan {mk_best:+.1f} % (best floor {floor_best:+.1f} %), best "
                       f"average JCT {jct_best:+.1f} %; rows meeting both: {len(met)} of {len(delay)}.")
    comm_worst = delay["comm_vs_scatter_pct"].max()
    share_worst = agg[agg.policy == "delay-tuned"]["tuner_share"].max()
    summary.append(f"* comm. overhead vs scatter, worst congested row: {comm_worst:+.1f} %; tuner share, worst row: "
                   f"{100 * share_worst:.1f} %.")
    return "\n".join(lines) + "\n\n" + "\n".join(summary) + "\n"


def plots(agg: pd.DataFrame, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    written = []
    metrics = [("makespan_h", "makespan (h)"), ("avg_jct_h", "average JCT (h)"), ("p99_jct_h", "p99 JCT (h)"),
               ("comm_overhead_gpu_h", "comm. overhead (GPU-h)")]
    for (wname, ann), g in agg.groupby(["workload", "annotator"]):
        fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
        x = np.arange(len(NETWORKS))
        width = 0.8 / len(POLICIES)
        for ax, (m, label) in zip(axes, metrics):
            for k, pol in enumerate(POLICIES):
                vals = [g[(g.network == n) & (g.policy == pol)][m].iloc[0] for n in NETWORKS]
                ax.bar(x + (k - (len(POLICIES) - 1) / 2) * width, vals, width, label=pol)
            ax.set_xticks(x, NETWORKS)
            ax.set_title(label)
            ax.set_yscale("symlog" if m == "comm_overhead_gpu_h" else "log")
        axes[0].legend(fontsize=7)
        written.append(save_figure(
            fig, f"{wname} / annotator {ann} / {g.cluster.iloc[0]} / mean of {int(g.seeds.iloc[0])} seeds",
            out / f"{wname}_{ann}.png"))
    return written


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
                for pol in SWEEP_POLICIES:
                    for ann in ANNOTATORS if pol == "delay" else ("none",):
                        s = replay(jobs, scheduler=scheduler(pol), annotator=ann, cluster=cluster, network=net,
                                   seed=seed).summary
                        rows.append({"workload": wname, "network": net, "level": c, "seed": seed,
                                     "offered_load": load, "annotator": ann if pol == "delay" else "both",
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


def sweep_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds per (workload, network, load level, annotator, policy), with delay's change vs
    each consolidation baseline (mean of the per-seed changes)."""
    out = vs_baselines(_expand_both(sweep), ["workload", "network", "level", "seed", "annotator"],
                       ["makespan_h", "avg_jct_h"])
    agg_keys = ["workload", "network", "level", "annotator", "policy"]
    num = [c for c in out.columns if c not in [*agg_keys, "seed"] and pd.api.types.is_numeric_dtype(out[c])]
    return out.groupby(agg_keys, sort=False)[num].mean().reset_index()


def sweep_plots(table: pd.DataFrame, out: Path) -> list[Path]:
    """Per (workload, network): average JCT and makespan against offered load, one line per policy and
    annotator (`sweep_<workload>_<network>.png`); means over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for (wname, net), g in table.groupby(["workload", "network"]):
        if g["offered_load"].nunique() < 2:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
        for (pol, ann), line in g.groupby(["policy", "annotator"]):
            if pol != "delay" and ann == "oracle":
                continue  # the baselines read no annotation: one line each
            line = line.sort_values("offered_load")
            label = f"{pol} ({ann})" if pol == "delay" else pol
            style = "-o" if pol == "delay" else "--."
            axes[0].plot(line["offered_load"], line["avg_jct_h"], style, label=label)
            axes[1].plot(line["offered_load"], line["makespan_h"], style, label=label)
        axes[0].set(xlabel="offered load", ylabel="average JCT (h)", yscale="log")
        axes[1].set(xlabel="offered load", ylabel="makespan (h)")
        axes[0].legend(fontsize=7)
        written.append(save_figure(fig, f"{wname} / {net}: load sweep (mean over seeds)",
                                   out / f"sweep_{wname}_{net.replace(':', '')}.png"))
    return written


# ------------------------------------------------------------------------------------------ starvation guard

GUARD_CAPS_DAYS = (7.0, 14.0, 30.0, None)
GUARD_LOADS = (0.9, 1.5)


def guard_sweep(out: Path, seeds: tuple[int, ...]) -> pd.DataFrame:
    """The starvation guard's age cap (7 / 14 / 30 days / off) and its two ways of getting the holder
    its nodes (claim them by preemption, the default, or let them drain: `preemption.guard_victims=0`)
    on testbed64 under congested:8 at loads 0.9 and 1.5, fixed delay, next to `consolidate-rack` (no
    guard). Means over seeds of average / p99 JCT and the longest queueing (`guard_sweep.csv`)."""
    from schedmate.policies.delay import DelayConfig, NetworkPreemptionConfig

    rows = []
    with Progress(transient=True) as bar:
        task = bar.add_task("guard sweep", total=len(GUARD_LOADS) * len(seeds))
        for load in GUARD_LOADS:
            for seed in seeds:
                jobs = distributed(400, seed, 64, load)
                variants: list[tuple[str, str, float | None, str]] = [("consolidate-rack", "none", None, "-")]
                variants += [("delay", ann, cap, mode) for ann in ANNOTATORS for cap in GUARD_CAPS_DAYS
                             for mode in ("claim", "drain") if cap is not None or mode == "claim"]
                for pol, ann, cap, mode in variants:
                    if pol == "delay":
                        sched = build_scheduler("delay", config=DelayConfig(
                            age_cap_s=cap * 86400.0 if cap is not None else float("inf")),
                            preemption=NetworkPreemptionConfig(guard_victims=8 if mode == "claim" else 0))
                    else:
                        sched = scheduler(pol)
                    res = replay(jobs, scheduler=sched, annotator=ann, cluster=CLUSTER_TESTBED,
                                 network="congested:8", seed=seed)
                    s = res.summary
                    rows.append({"load": load, "seed": seed, "policy": pol, "annotator": ann,
                                 "age_cap_days": cap if cap is not None else float("inf"), "guard": mode,
                                 "avg_jct_h": s.avg_jct_s / 3600, "p99_jct_h": s.p99_jct_s / 3600,
                                 "max_queue_h": res.jobs["queue_s"].max() / 3600, "preemptions": s.preemptions})
                bar.advance(task)
    df = pd.DataFrame(rows)
    df.to_csv(out / "guard_sweep.csv", index=False)
    keys = ["load", "policy", "annotator", "age_cap_days", "guard"]
    return df.groupby(keys, sort=False)[["avg_jct_h", "p99_jct_h", "max_queue_h", "preemptions"]].mean().reset_index()


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
    ("no locality-first", ("locality_first=false",)),
    ("guard drains", ("preemption.guard_victims=0",)),
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
                                 "migrations": s.migrations})
                bar.advance(task)
    df = pd.DataFrame(rows)
    df.to_csv(out / "ablation.csv", index=False)
    keys = ["case", "network", "variant", "annotator"]
    cols = ["avg_jct_h", "p99_jct_h", "makespan_h", "max_queue_h", "comm_overhead_gpu_h", "preemptions", "migrations"]
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


def report(raw: pd.DataFrame, out: Path) -> str:
    """results.csv / results.md / targets.md and the plots from the replays' rows; returns targets.md."""
    agg = aggregate(relative(raw))
    agg.to_csv(out / "results.csv", index=False)
    (out / "results.md").write_text(markdown(agg))
    text = targets(agg)
    (out / "targets.md").write_text(text)
    plots(agg, out)
    return text


def report_sweep(sweep: pd.DataFrame, out: Path) -> None:
    table = sweep_table(sweep)
    table.to_csv(out / "load_sweep_means.csv", index=False)
    sweep_plots(table, out)


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise typer.BadParameter(f"--seeds {text!r}: expected comma-separated integers, e.g. 0,1,2") from None
    if not seeds:
        raise typer.BadParameter("--seeds: give at least one seed")
    return seeds


def main(
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("eval/delay/results"),
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds; tables show means (and per-seed ranges).")]
    = ",".join(map(str, SEEDS)),
    quick: Annotated[bool, typer.Option(help="Small workloads, seed 0 only, no sweep or semantic rows.")] = False,
    report_only: Annotated[bool, typer.Option(
        help="Only re-render the tables and plots from OUT/raw.csv (and OUT/load_sweep.csv).")] = False,
    sweep: Annotated[bool, typer.Option(help="Also run the load sweep (load_sweep.csv, sweep_*.png).")] = True,
    guard: Annotated[bool, typer.Option(
        help="Also sweep the starvation guard's age cap and claim/drain on testbed64 (guard_sweep*.csv) and "
             "turn each delay mechanism off in turn (ablation*.csv) and oversubscribe the uplinks beyond the "
             "published setups (oversubscription*.csv); about 3 minutes.")] = True,
    semantic: Annotated[bool, typer.Option(
        help="Also run delay with the schedmate annotator on testbed64 and distributed-4gpu (semantic.csv; "
             "about 2 minutes).")] = True,
) -> None:
    """Run the delay-scheduling comparison; write raw.csv, results.csv/.md, targets.md, plots, tuner_log.csv."""
    out.mkdir(parents=True, exist_ok=True)
    if report_only:
        report(pd.read_csv(out / "raw.csv"), out)
        if (out / "load_sweep.csv").exists():
            report_sweep(pd.read_csv(out / "load_sweep.csv"), out)
        return
    seed_list = (0,) if quick else _seeds(seeds)
    t0 = time.perf_counter()
    raw, logs, sizes = run_all(seed_list, quick)
    raw.to_csv(out / "raw.csv", index=False)
    sizes.to_csv(out / "queue_by_size.csv", index=False)
    if len(logs):
        logs.to_csv(out / "tuner_log.csv", index=False)
    typer.echo(report(raw, out))
    if sweep and not quick:
        report_sweep(load_sweep(out, seed_list), out)
    if guard and not quick:
        guard_sweep(out, seed_list).to_csv(out / "guard_sweep_means.csv", index=False)
        ablation(out, seed_list).to_csv(out / "ablation_means.csv", index=False)
        oversubscription(out, seed_list).to_csv(out / "oversubscription_means.csv", index=False)
    if semantic and not quick:
        semantic_rows(out)
    typer.echo(f"wrote {out}/raw.csv, results.csv, results.md, targets.md, plots in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    typer.run(main)
