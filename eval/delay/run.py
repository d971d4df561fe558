"""Delay scheduling experiment: delay (fixed / tuned) vs consolidate vs scatter (and random).

    .venv/bin/python -m eval.delay.run --out eval/delay/results

Every policy but one uses the same queue order (`fifo-nb`: submission order, non-blocking), so only
the placement (and, for delay, its preemption and tuner) differs. The exception is the Tiresias-style
consolidation baseline `consolidate-fifo`: strict FIFO (the head job waits for a packed placement in
one rack and holds the queue, no backfilling), as the Tiresias simulator's `fifo` schedule with its
per-switch `yarn` placement runs it. Workloads, on a 256-GPU cluster unless said
(32 nodes x 8 GPUs, 16 nodes a rack):

* `philly`: `derived:philly:800:0:0.45` (real Philly arrivals, GPU counts and durations; arrivals
  stretched x 1/0.45 so the offered load sum(GPUs x duration) / (256 x arrival span) is about 0.9).
* `helios`: `synth:helios:3000:0` with `target_load=0.9, cluster_gpus=256, max_gpus=64`.
* `distributed`: `synth:distributed:800:0` (multi-GPU jobs only, 2-32 GPUs, Gavel's durations and
  distributed models; offered load 0.9 on 256 GPUs; `schedmate/traces/distributed.py`).
* `distributed-4gpu`: the same jobs on 64 nodes x 4 GPUs (16 nodes a rack), the server size of
  the published testbeds (Tiresias, Pollux), where 8-GPU jobs span two nodes.
* `testbed64`: `synth:distributed:400:0` at load 0.9 on the published testbeds' size, 16 nodes x 4
  GPUs in two racks of 8 (`nodes=16,gpus=4,rack=8`), where a 32-GPU job takes a whole rack.

Philly/helios jobs get catalogue workload classes (`replay.assign_workloads`, seeded), i.e. the
catalogue's mix of sensitive and insensitive models; distributed jobs carry Gavel's model mix. Networks `ideal`, `congested:4`, `congested:8`; annotators `none`
(sensitivity unknown: every job alike) and `oracle`. Outputs: results.csv, results.md, one PNG per
workload x annotator (makespan, average JCT, p99 JCT, communication overhead per network),
queue_by_size.csv (queueing, stretch and spreading per GPU count) and tuner_log.csv (the tuned timers
over time).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from eval.plotting import save_figure
from schedmate.policies import build_scheduler
from schedmate.policies.base import Scheduler
from schedmate.policies.tuner import TunerConfig
from schedmate.replay import replay
from schedmate.traces import load_trace

CLUSTER = "256"
CLUSTER_4GPU = "nodes=64,gpus=4,rack=16"
CLUSTER_TESTBED = "nodes=16,gpus=4,rack=8"
"""64 GPUs on 4-GPU servers, two racks: the size of the published testbeds (Tiresias 15 x 4, Pollux 16 x 4)."""
NETWORKS = ("ideal", "congested:4", "congested:8")
ANNOTATORS = ("none", "oracle")
POLICIES = ("consolidate-fifo", "consolidate", "consolidate-rack", "scatter", "random", "delay", "delay-tuned")
BASELINES = (("consolidate-fifo", "consolidate_fifo"), ("consolidate", "consolidate"),
             ("consolidate-rack", "consolidate_rack"))
"""The consolidation baselines each policy is compared with: (policy, column tag)."""


def workloads(quick: bool) -> dict[str, tuple[list, str]]:
    """name -> (jobs, cluster spec); every cluster has 256 GPUs but the 64-GPU testbed's."""
    n_philly, n_helios, n_dist = (300, 1000, 300) if quick else (800, 3000, 800)
    dist = load_trace(f"synth:distributed:{n_dist}:0", target_load=0.9, cluster_gpus=256).jobs
    testbed = load_trace(f"synth:distributed:{n_dist // 2}:0", target_load=0.9, cluster_gpus=64).jobs
    return {
        "philly": (load_trace(f"derived:philly:{n_philly}:0:0.45").jobs, CLUSTER),
        "helios": (load_trace(f"synth:helios:{n_helios}:0", target_load=0.9, cluster_gpus=256, max_gpus=64).jobs,
                   CLUSTER),
        "distributed": (dist, CLUSTER),
        "distributed-4gpu": (dist, CLUSTER_4GPU),
        "testbed64": (testbed, CLUSTER_TESTBED),
    }


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


def cluster_gpus(cluster: str) -> int:
    return 64 if cluster == CLUSTER_TESTBED else 256


def offered_load(jobs: list, gpus: int = 256) -> float:
    span = max(j.submit_time for j in jobs) - min(j.submit_time for j in jobs)
    return sum(j.num_gpus * j.duration_s for j in jobs) / (gpus * span) if span > 0 else float("nan")


def scheduler(policy: str) -> Scheduler:
    if policy.startswith("delay"):
        return build_scheduler(policy, tuner=TunerConfig())
    if policy == "consolidate-fifo":
        sched = build_scheduler("fifo", "consolidate-rack")
        sched.backfill = False  # strict: nothing passes a head that waits for its packed placement
        sched.name = "consolidate-fifo"
        return sched
    return build_scheduler("fifo-nb", policy)


TUNER_REPEATS = 5


def _tuner_share(policy: str, jobs: list, annotator: str, cluster: str, network: str) -> float:
    sched = scheduler(policy)
    s = replay(jobs, scheduler=sched, annotator=annotator, cluster=cluster, network=network, seed=0).summary
    return sched.on_tick.wall_s / s.wall_s  # type: ignore[union-attr]


def run_all(quick: bool, out: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rows, logs, sizes = [], [], []
    wl = workloads(quick)
    for wname, (jobs, cluster) in wl.items():
        for net in NETWORKS:
            for ann in ANNOTATORS:
                for pol in POLICIES:
                    sched = scheduler(pol)
                    t0 = time.perf_counter()
                    res = replay(jobs, scheduler=sched, annotator=ann, cluster=cluster, network=net, seed=0)
                    s = res.summary
                    tuner = sched.on_tick
                    if tuner is not None:
                        # a replay takes 0.03-0.15 s, so one wall-time share is noisy: keep the median of
                        # TUNER_REPEATS runs (the simulated results are identical, decisions never read clocks)
                        share = statistics.median(
                            [tuner.wall_s / s.wall_s] + [_tuner_share(pol, jobs, ann, cluster, net)
                                                         for _ in range(TUNER_REPEATS - 1)])
                    row = {
                        "workload": wname, "cluster": cluster, "network": net, "annotator": ann, "policy": pol, "jobs": s.jobs,
                        "offered_load": round(offered_load(jobs, cluster_gpus(cluster)), 3),
                        "makespan_h": s.makespan_s / 3600, "avg_jct_h": s.avg_jct_s / 3600,
                        "p99_jct_h": s.p99_jct_s / 3600, "avg_queue_h": s.avg_queue_s / 3600,
                        "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600, "gpu_util": s.gpu_utilization,
                        "preemptions": s.preemptions, "migrations": s.migrations, "unfinished": s.unfinished,
                        "spread_jobs": int((res.jobs["max_nodes"] > 1).sum()),
                        "wall_s": s.wall_s,
                        "tuner_s": getattr(tuner, "wall_s", 0.0),
                        "tuner_share": share if tuner else 0.0,
                        "tuner_runs": getattr(tuner, "forward_runs", 0),
                    }
                    if pol.startswith("delay"):
                        lv = sched.placement.levels
                        row.update(placed_L0=lv[0], placed_L1=lv[1], placed_L2=lv[2])
                    rows.append(row)
                    sizes += by_size(res, {"workload": wname, "network": net, "annotator": ann, "policy": pol})
                    for e in res.sim.log:
                        if e.get("event") == "delay_tuner":
                            logs.append({"workload": wname, "network": net, "annotator": ann, **e})
                    typer.echo(f"{wname:16s} {net:12s} {ann:6s} {pol:12s} makespan {row['makespan_h']:8.1f} h  "
                               f"avg JCT {row['avg_jct_h']:7.2f} h  comm {row['comm_overhead_gpu_h']:9.0f} GPU-h  "
                               f"wall {time.perf_counter() - t0:5.2f} s")
    return pd.DataFrame(rows), pd.DataFrame(logs), pd.DataFrame(sizes)


def relative(df: pd.DataFrame) -> pd.DataFrame:
    """Per (workload, network, annotator): each policy's change vs the consolidation baselines
    (`BASELINES`) and its communication overhead vs scatter."""
    keys = ["workload", "network", "annotator"]
    ms = ["makespan_h", "avg_jct_h", "p99_jct_h"]
    out = df
    for base_policy, tag in BASELINES:
        base = df[df.policy == base_policy][keys + ms].rename(columns={m: f"{m}_base" for m in ms})
        out = out.merge(base, on=keys)
        for m in ms:
            out[f"{m[:-2]}_vs_{tag}_pct"] = 100 * (out[m] / out[f"{m}_base"] - 1)
        out = out.drop(columns=[f"{m}_base" for m in ms])
    scat = df[df.policy == "scatter"][keys + ["comm_overhead_gpu_h"]].rename(
        columns={"comm_overhead_gpu_h": "comm_scatter"})
    out = out.merge(scat, on=keys)
    out["comm_vs_scatter_pct"] = 100 * (out["comm_overhead_gpu_h"] / out["comm_scatter"] - 1)
    return out.drop(columns=["comm_scatter"])


def plots(df: pd.DataFrame, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    written = []
    metrics = [("makespan_h", "makespan (h)"), ("avg_jct_h", "average JCT (h)"), ("p99_jct_h", "p99 JCT (h)"),
               ("comm_overhead_gpu_h", "comm. overhead (GPU-h)")]
    for (wname, ann), g in df.groupby(["workload", "annotator"]):
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
            fig, f"{wname} / annotator {ann} / {g.cluster.iloc[0]} / order fifo-nb (consolidate-fifo: fifo)",
            out / f"{wname}_{ann}.png"))
    return written


def markdown(rel: pd.DataFrame) -> str:
    cols = ["workload", "network", "annotator", "policy", "makespan_h", "avg_jct_h", "p99_jct_h", "avg_queue_h",
            "gpu_util", "comm_overhead_gpu_h", "preemptions", "migrations", "spread_jobs", "makespan_vs_consolidate_fifo_pct",
            "avg_jct_vs_consolidate_fifo_pct", "makespan_vs_consolidate_pct", "avg_jct_vs_consolidate_pct",
            "makespan_vs_consolidate_rack_pct", "avg_jct_vs_consolidate_rack_pct", "comm_vs_scatter_pct",
            "tuner_share"]
    t = rel[cols].copy()
    for c in ("makespan_h", "avg_jct_h", "p99_jct_h", "avg_queue_h"):
        t[c] = t[c].map(lambda v: f"{v:.1f}" if v >= 10 else f"{v:.2f}")
    t["gpu_util"] = t["gpu_util"].map(lambda v: f"{v:.2f}")
    t["comm_overhead_gpu_h"] = t["comm_overhead_gpu_h"].map(lambda v: f"{v:,.0f}")
    for c in ("makespan_vs_consolidate_fifo_pct", "avg_jct_vs_consolidate_fifo_pct", "makespan_vs_consolidate_pct",
              "avg_jct_vs_consolidate_pct", "makespan_vs_consolidate_rack_pct", "avg_jct_vs_consolidate_rack_pct",
              "comm_vs_scatter_pct"):
        t[c] = t[c].map(lambda v: f"{v:+.1f}")
    t["tuner_share"] = t["tuner_share"].map(lambda v: f"{100 * v:.0f}%" if v else "")
    header = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
    return header + "\n".join("| " + " | ".join(str(v) for v in r) + " |" for r in t.itertuples(index=False)) + "\n"


SWEEP_COMPRESS = (0.45, 1.0, 2.0, 5.0)
SWEEP_LOADS = (0.9, 1.5, 3.0)
SWEEP_LOADS_4GPU_C8 = (0.9, 1.2, 1.5, 2.0)
SWEEP_LOADS_TESTBED = (1.2, 1.5, 2.0)


SEMANTIC_CASES = (("testbed64", "congested:4"), ("testbed64", "congested:8"),
                  ("distributed-4gpu", "congested:4"), ("distributed-4gpu", "congested:8"))


def semantic_rows(out: Path) -> pd.DataFrame:
    """`delay` driven by the `schedmate` annotator (its static code analysis and log monitor, no LLM:
    sensitivity and duration predicted from each job's code and logs, written by the semantic
    augmentation) next to `none` and `oracle` (`semantic.csv`)."""
    import tempfile

    from schedmate.annotators.semantic import SemanticAnnotator

    wl = workloads(False)
    rows = []
    for wname, net in SEMANTIC_CASES:
        jobs, cluster = wl[wname]
        for ann in ("none", "schedmate", "oracle"):
            annotator = SemanticAnnotator(use_llm=False) if ann == "schedmate" else ann
            with tempfile.TemporaryDirectory() as material:
                s = replay(jobs, scheduler=scheduler("delay"), annotator=annotator, cluster=cluster, network=net,
                           seed=0, semantic=Path(material) if ann == "schedmate" else None).summary
            rows.append({"workload": wname, "network": net, "annotator": ann, "policy": "delay",
                         "makespan_h": s.makespan_s / 3600, "avg_jct_h": s.avg_jct_s / 3600,
                         "p99_jct_h": s.p99_jct_s / 3600, "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600,
                         "migrations": s.migrations, "preemptions": s.preemptions})
            typer.echo(f"semantic {wname} {net} {ann}: avg JCT {rows[-1]['avg_jct_h']:.2f} h")
    df = pd.DataFrame(rows)
    df.to_csv(out / "semantic.csv", index=False)
    return df


def sweep_plots(sweep: pd.DataFrame, out: Path) -> list[Path]:
    """Per (workload, network): average JCT and makespan against offered load, one line per policy and
    annotator (`sweep_<workload>_<network>.png`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for (wname, net), g in sweep.groupby(["workload", "network"]):
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
        written.append(save_figure(fig, f"{wname} / {net}: load sweep",
                                   out / f"sweep_{wname}_{net.replace(':', '')}.png"))
    return written


def load_sweep(out: Path) -> pd.DataFrame:
    """Philly-derived workload at several load levels (arrivals compressed more) and the distributed
    workload at several offered loads on both node sizes, congested:4; and distributed-4gpu under
    congested:8 as well (where classic consolidation crosses the 1:8 uplinks); fixed delay."""
    cases: list[tuple[str, str, str, float, list]] = [
        ("philly", CLUSTER, "congested:4", c, load_trace(f"derived:philly:800:0:{c}").jobs) for c in SWEEP_COMPRESS]
    loads = sorted(set(SWEEP_LOADS) | set(SWEEP_LOADS_4GPU_C8))
    for load in loads:
        dist = load_trace("synth:distributed:800:0", target_load=load, cluster_gpus=256).jobs
        if load in SWEEP_LOADS:
            cases += [("distributed", CLUSTER, "congested:4", float("nan"), dist),
                      ("distributed-4gpu", CLUSTER_4GPU, "congested:4", float("nan"), dist)]
        if load in SWEEP_LOADS_4GPU_C8:
            cases.append(("distributed-4gpu", CLUSTER_4GPU, "congested:8", float("nan"), dist))
    for load in SWEEP_LOADS_TESTBED:
        testbed = load_trace("synth:distributed:400:0", target_load=load, cluster_gpus=64).jobs
        cases += [("testbed64", CLUSTER_TESTBED, net, float("nan"), testbed) for net in ("congested:4", "congested:8")]
    rows = []
    for wname, cluster, net, c, jobs in cases:
        for ann in ANNOTATORS:
            for pol in ("consolidate-fifo", "consolidate", "consolidate-rack", "scatter", "delay"):
                s = replay(jobs, scheduler=scheduler(pol), annotator=ann, cluster=cluster, network=net).summary
                rows.append({"workload": wname, "network": net, "compress": c,
                             "offered_load": round(offered_load(jobs, cluster_gpus(cluster)), 2), "annotator": ann,
                             "policy": pol, "makespan_h": s.makespan_s / 3600, "avg_jct_h": s.avg_jct_s / 3600,
                             "p99_jct_h": s.p99_jct_s / 3600, "avg_queue_h": s.avg_queue_s / 3600,
                             "comm_overhead_gpu_h": s.comm_overhead_gpu_s / 3600, "gpu_util": s.gpu_utilization,
                             "preemptions": s.preemptions, "migrations": s.migrations})
                typer.echo(f"sweep {wname} {net} load {rows[-1]['offered_load']} {ann} {pol}: "
                           f"avg JCT {rows[-1]['avg_jct_h']:.2f} h")
    df = pd.DataFrame(rows)
    df.to_csv(out / "load_sweep.csv", index=False)
    return df


def main(
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("eval/delay/results"),
    quick: Annotated[bool, typer.Option(help="Small workloads (smoke run).")] = False,
    sweep: Annotated[bool, typer.Option(help="Also run the load sweep (load_sweep.csv, sweep_*.png).")] = True,
    semantic: Annotated[bool, typer.Option(
        help="Also run delay with the schedmate annotator on testbed64 and distributed-4gpu (semantic.csv; "
             "about 2 minutes).")] = True,
) -> None:
    """Run the delay-scheduling comparison and write results.csv, results.md, plots and tuner_log.csv."""
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if sweep and not quick:
        sweep_plots(load_sweep(out), out)
    if semantic and not quick:
        semantic_rows(out)
    df, logs, sizes = run_all(quick, out)
    df.to_csv(out / "raw.csv", index=False)
    sizes.to_csv(out / "queue_by_size.csv", index=False)
    rel = relative(df)
    rel.to_csv(out / "results.csv", index=False)
    (out / "results.md").write_text(markdown(rel))
    if len(logs):
        logs.to_csv(out / "tuner_log.csv", index=False)
    plots(df, out)
    typer.echo(f"wrote {out}/results.csv, results.md, queue_by_size.csv, plots, tuner_log.csv "
               f"in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    typer.run(main)
