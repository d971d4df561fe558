"""The starvation guard's trade-off (mean vs p99 JCT against `consolidate-rack`) and what the tuner
does with it.

* `guard_sweep`: testbed64 under congested:8 at loads 0.9 and 1.5, fixed delay, the session-4 rule (one
  age cap for every job, claims from lower-priority jobs) at several caps against the `cost` rule at
  several factors, next to `consolidate-rack` (no guard). `guard_sweep.csv` keeps every seed,
  `guard_sweep_means.csv` the means of the per-seed ratios, `guard_tradeoff.png` the curves.
* `tuner_study`: `delay-tuned` asked for the mean or the p99 JCT, with the guard's factor among its
  knobs and no event budget, against fixed `delay`, on testbed64 (where the guard binds) and on the
  256-GPU `distributed` workload (where neither the guard nor the timers bind). `tuner_study.csv`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from rich.progress import Progress

from eval.delay.workloads import ANNOTATORS, CLUSTER, CLUSTER_TESTBED, distributed, scheduler
from eval.plotting import save_figure
from schedmate.policies import build_scheduler, policy_options
from schedmate.replay import replay

GUARD_LOADS = (0.9, 1.5)
SESSION4_RULE = ("guard=age", "preemption.guard_claims=lower")
"""The session-4 guard: only the age cap, claims from jobs lower in the queue order."""
AGE_CAPS_DAYS = (3.0, 7.0, 14.0, 20.0, 30.0, math.inf)
COST_FACTORS = (5.0, 10.0, 20.0, 50.0, 100.0, math.inf)
"""`guard_factor` values of the `cost` rule (inf: only the 14-day backstop)."""
DEFAULTS = {"age": 14.0, "cost": 20.0}
TARGET_MEAN, TARGET_P99 = 1.05, 0.70
"""The issue's bar against `consolidate-rack`: mean JCT at most 1.05x, p99 JCT at least 30 % lower."""


def _variants() -> list[tuple[str, float, tuple[str, ...]]]:
    out = [("age", d, (*SESSION4_RULE, f"age_cap_s={d * 86400.0}")) for d in AGE_CAPS_DAYS]
    out += [("cost", k, (f"guard_factor={k}",)) for k in COST_FACTORS]
    return out


def guard_sweep(out: Path, seeds: tuple[int, ...]) -> pd.DataFrame:
    """Rows per (load, seed, rule, parameter, annotator) with delay's mean / p99 JCT and their ratios to
    `consolidate-rack` on the same jobs; returns the means over seeds (see the module doc)."""
    rows = []
    variants = _variants()
    with Progress(transient=True) as bar:
        task = bar.add_task("guard sweep", total=len(GUARD_LOADS) * len(seeds))
        for load in GUARD_LOADS:
            for seed in seeds:
                jobs = distributed(400, seed, 64, load)
                base = replay(jobs, scheduler=scheduler("consolidate-rack"), annotator="none", cluster=CLUSTER_TESTBED,
                              network="congested:8", seed=seed)
                b = base.summary
                rows.append({"load": load, "seed": seed, "rule": "consolidate-rack", "param": math.nan,
                             "annotator": "both", "avg_jct_h": b.avg_jct_s / 3600, "p99_jct_h": b.p99_jct_s / 3600,
                             "max_queue_h": base.jobs["queue_s"].max() / 3600, "preemptions": 0,
                             "mean_ratio": 1.0, "p99_ratio": 1.0})
                for rule, param, opts in variants:
                    for ann in ANNOTATORS:
                        sched = build_scheduler("delay", **policy_options("delay", list(opts)))
                        res = replay(jobs, scheduler=sched, annotator=ann, cluster=CLUSTER_TESTBED,
                                     network="congested:8", seed=seed)
                        s = res.summary
                        rows.append({"load": load, "seed": seed, "rule": rule, "param": param, "annotator": ann,
                                     "avg_jct_h": s.avg_jct_s / 3600, "p99_jct_h": s.p99_jct_s / 3600,
                                     "max_queue_h": res.jobs["queue_s"].max() / 3600, "preemptions": s.preemptions,
                                     "mean_ratio": s.avg_jct_s / b.avg_jct_s, "p99_ratio": s.p99_jct_s / b.p99_jct_s})
                bar.advance(task)
    df = pd.DataFrame(rows)
    df.to_csv(out / "guard_sweep.csv", index=False)
    return guard_means(df)


def guard_means(df: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds per (load, rule, parameter, annotator); `meets`: both ratios within the bar."""
    keys = ["load", "rule", "param", "annotator"]
    cols = ["avg_jct_h", "p99_jct_h", "max_queue_h", "preemptions", "mean_ratio", "p99_ratio"]
    means = df.groupby(keys, sort=False, dropna=False)[cols].mean().reset_index()
    means["meets"] = (means.mean_ratio <= TARGET_MEAN) & (means.p99_ratio <= TARGET_P99)
    return means


def tradeoff_plot(means: pd.DataFrame, out: Path) -> Path:
    """Mean vs p99 JCT against `consolidate-rack`, one curve per rule and annotator, per load; the
    defaults circled, the issue's bar shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(GUARD_LOADS), figsize=(11, 4.2))
    for ax, load in zip(axes, GUARD_LOADS):
        for (rule, ann), g in means[(means.load == load) & (means.rule != "consolidate-rack")].groupby(
                ["rule", "annotator"], sort=False):
            line = ax.plot(g.mean_ratio, g.p99_ratio, "-o" if rule == "cost" else "--s", ms=4,
                           label=f"{'cost rule' if rule == 'cost' else 'age cap (session 4)'}, {ann}")[0]
            for r in g.itertuples():
                label = ("off" if math.isinf(r.param) else f"{r.param:g}" + ("d" if rule == "age" else ""))
                ax.annotate(label, (r.mean_ratio, r.p99_ratio), fontsize=6, xytext=(3, 2), textcoords="offset points")
                if r.param == DEFAULTS[rule]:
                    ax.plot(r.mean_ratio, r.p99_ratio, "o", ms=10, mfc="none", color=line.get_color())
        ax.plot(1.0, 1.0, "k*", ms=9, label="consolidate-rack")
        (x0, _), (y0, _) = ax.get_xlim(), ax.get_ylim()
        ax.fill_between([x0, TARGET_MEAN], y0, TARGET_P99, color="0.9", zorder=0)  # the bar
        ax.set_xlim(left=x0)
        ax.set_ylim(bottom=y0)
        ax.set(title=f"testbed64, congested:8, load {load}", xlabel="mean JCT / consolidate-rack",
               ylabel="p99 JCT / consolidate-rack")
        ax.legend(fontsize=6)
    return save_figure(fig, "starvation guard: mean vs p99 JCT (circled: defaults; shaded: mean <= 1.05x and p99 <= 0.7x)",
                       out / "guard_tradeoff.png")


TUNER_CASES = (("testbed64 load 0.9", CLUSTER_TESTBED, 64, 400, 0.9), ("testbed64 load 1.5", CLUSTER_TESTBED, 64, 400, 1.5),
               ("distributed load 0.9", CLUSTER, 256, 800, 0.9))
TUNER_OBJECTIVES = ("avg_jct", "p99_jct")


def tuner_study(out: Path, seeds: tuple[int, ...]) -> pd.DataFrame:
    """`delay-tuned` (objective mean or p99 JCT, guard factor tuned, no event budget) against fixed
    `delay`, congested:8; per row the tunes, how many moved a knob off its default, and the tuned
    replay's mean and p99 JCT as a change from fixed delay's (`tuner_study.csv`; means over seeds)."""
    rows = []
    for name, cluster, gpus, n, load in TUNER_CASES:
        for seed in seeds:
            jobs = distributed(n, seed, gpus, load)
            for ann in ANNOTATORS:
                fixed = replay(jobs, scheduler=scheduler("delay"), annotator=ann, cluster=cluster, network="congested:8",
                               seed=seed).summary
                for objective in TUNER_OBJECTIVES:
                    opts = [f"tuner.objective={objective}", "tuner.tune_guard=true", "tuner.event_budget=none"]
                    sched = build_scheduler("delay-tuned", **policy_options("delay-tuned", opts))
                    res = replay(jobs, scheduler=sched, annotator=ann, cluster=cluster, network="congested:8", seed=seed)
                    s, tuner = res.summary, sched.on_tick
                    log = [e for e in res.sim.log if e.get("event") == "delay_tuner"]
                    moved = len({e["time"] for e in log if _moved(e, sched)})
                    rows.append({"case": name, "seed": seed, "annotator": ann, "objective": objective,
                                 "tunes": tuner.tuned, "tunes_off_default": moved,
                                 "avg_jct_pct": 100 * (s.avg_jct_s / fixed.avg_jct_s - 1),
                                 "p99_jct_pct": 100 * (s.p99_jct_s / fixed.p99_jct_s - 1),
                                 "tuner_share": tuner.wall_s / max(s.wall_s, 1e-9)})
    df = pd.DataFrame(rows)
    df.to_csv(out / "tuner_study.csv", index=False)
    keys = ["case", "annotator", "objective"]
    return df.groupby(keys, sort=False)[["tunes", "tunes_off_default", "avg_jct_pct", "p99_jct_pct",
                                        "tuner_share"]].mean().reset_index()


def _moved(entry: dict, sched: object) -> bool:
    """Did this logged choice move a knob off its configured default?"""
    cfg = sched.placement.timers.config  # type: ignore[attr-defined]
    if entry["class"] == "guard":
        return entry["guard_factor"] != cfg.guard_factor
    return (entry["W_node"], entry["W_rack"]) != (cfg.node_factor, cfg.rack_factor)


__all__ = ["guard_means", "guard_sweep", "tradeoff_plot", "tuner_study"]
