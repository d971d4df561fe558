"""Cost and quality of the delay auto-tuner on the eval/delay workloads.

    .venv/bin/python -m eval.delay.bench_tuner [--repeat 3] [--only philly] [--budget none] [--csv out.csv]

Workloads: philly and helios on 256 GPUs, testbed64 (`synth:distributed:400:0`, load 0.9, on 16 x 4-GPU
nodes in two racks). Per (workload, network, annotator) row: `delay-tuned` replay wall time, tuner wall time, their ratio
(the tuner's share of the replay, target <= 10 %), forward runs and tunes, and average JCT / comm
overhead of `delay-tuned` next to the fixed `delay`. `--budget` overrides `TunerConfig.event_budget`
(a number, or `none` for no limit; default: the config's own). Wall times on a shared machine are noisy:
with `--repeat N` each tuned replay runs N times and the row keeps the median share (the simulated
results are deterministic, so they are identical across repeats).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from schedmate.policies import build_scheduler
from schedmate.policies.tuner import TunerConfig
from schedmate.replay import replay
from schedmate.traces import load_trace

NETWORKS = ("ideal", "congested:4", "congested:8")
ANNOTATORS = ("none", "oracle")


def workloads(only: str | None) -> dict[str, tuple[list, str]]:
    """name -> (jobs, cluster spec)."""
    wl = {
        "philly": (lambda: load_trace("derived:philly:800:0:0.45").jobs, "256"),
        "helios": (lambda: load_trace("synth:helios:3000:0", target_load=0.9, cluster_gpus=256,
                                      max_gpus=64).jobs, "256"),
        "testbed64": (lambda: load_trace("synth:distributed:400:0", target_load=0.9, cluster_gpus=64).jobs,
                      "nodes=16,gpus=4,rack=8"),
    }
    return {k: (make(), cluster) for k, (make, cluster) in wl.items() if only in (None, k)}


def bench_row(jobs: list, cluster: str, net: str, ann: str, repeat: int, tuner_cfg: TunerConfig) -> dict:
    fixed = replay(jobs, scheduler=build_scheduler("delay"), annotator=ann, cluster=cluster, network=net,
                   seed=0).summary
    shares, walls, tuner_walls = [], [], []
    for _ in range(repeat):
        sched = build_scheduler("delay-tuned", tuner=tuner_cfg)
        tuner_default = sched.on_tick.timers.config
        res = replay(jobs, scheduler=sched, annotator=ann, cluster=cluster, network=net, seed=0)
        s = res.summary
        tuner = sched.on_tick
        walls.append(s.wall_s)
        tuner_walls.append(tuner.wall_s)
        shares.append(tuner.wall_s / s.wall_s)
    k = shares.index(statistics.median_low(shares))
    return {
        "network": net, "annotator": ann, "wall_s": walls[k], "tuner_s": tuner_walls[k], "share": shares[k],
        "runs": tuner.forward_runs, "tunes": tuner.tuned, "ticks": tuner.ticks,
        # tunes that moved some class off the default factors (one log entry per tuned class)
        "moved": len({e["time"] for e in res.sim.log if e.get("event") == "delay_tuner"
                      and (e["W_node"], e["W_rack"]) != (tuner_default.node_factor, tuner_default.rack_factor)}),
        "jct_tuned_h": s.avg_jct_s / 3600, "jct_fixed_h": fixed.avg_jct_s / 3600,
        "comm_tuned_gpu_h": s.comm_overhead_gpu_s / 3600,
        "comm_fixed_gpu_h": fixed.comm_overhead_gpu_s / 3600,
    }


def main(
    repeat: Annotated[int, typer.Option(help="Tuned replays per row (median share kept).")] = 1,
    only: Annotated[str | None, typer.Option(help="philly, helios or testbed64 only.")] = None,
    csv: Annotated[Path | None, typer.Option(help="Also write the rows here.")] = None,
    budget: Annotated[str | None, typer.Option(help="TunerConfig.event_budget: a number or none.")] = None,
) -> None:
    cfg = TunerConfig()
    if budget is not None:
        cfg = TunerConfig(event_budget=None if budget.lower() == "none" else float(budget))
    rows = []
    for wname, (jobs, cluster) in workloads(only).items():
        for net in NETWORKS:
            for ann in ANNOTATORS:
                r = {"workload": wname, **bench_row(jobs, cluster, net, ann, repeat, cfg)}
                rows.append(r)
                typer.echo(
                    f"{wname:6s} {net:12s} {ann:6s} wall {r['wall_s']:6.2f} s  tuner {r['tuner_s']:6.2f} s  "
                    f"share {100 * r['share']:5.1f}%  runs {r['runs']:4d} ({r['tunes']} tunes, {r['moved']} off the default)  "
                    f"avg JCT {r['jct_tuned_h']:7.2f} h (fixed {r['jct_fixed_h']:7.2f})  "
                    f"comm {r['comm_tuned_gpu_h']:8.0f} GPU-h (fixed {r['comm_fixed_gpu_h']:8.0f})")
    df = pd.DataFrame(rows)
    if csv is not None:
        df.to_csv(csv, index=False)
    typer.echo(f"tuner share: median {100 * df['share'].median():.1f}%, max {100 * df['share'].max():.1f}%")


if __name__ == "__main__":
    typer.run(main)
