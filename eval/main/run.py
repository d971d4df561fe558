"""The main table: each policy with each annotator, on real-derived and synthetic traces.

    .venv/bin/python -m eval.main.run --out eval/main/results [--jobs 600] [--no-llm] [--semantic-noise 1]

For every trace the jobs get their semantic material once (`schedmate.semantic.augment`, seeded),
and every (policy, annotator) pair replays the same augmented jobs on the same cluster, so the only
difference is what the scheduler knows. Annotators: `none` (metadata only), `lastk`, `helios`,
`lucid`, `history` (published-style predictors), `schedmate` (code analyzer + history + log monitor,
through the local LLM when one is served; `--no-llm` for the static and rule paths alone) and
`oracle` (perfect knowledge). Writes results.csv, results.md and one plot per trace (main_<trace>.png:
average JCT, p99 JCT, queueing delay, failed GPU-hours); prints the ratios to `none`.

Traces (each loaded to roughly the cluster's capacity so that scheduling matters):
* philly: `derived:philly` (real Philly arrivals, GPU counts and durations), arrivals compressed.
* alibaba2023: the real openb pod list (real failures), a window of consecutive pods, arrivals compressed.
* helios: `synth:helios` (calibrated synthetic, Helios Venus-like).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import pandas as pd

from schedmate.replay import replay
from schedmate.traces import load_trace, shared_traces_dir

POLICIES = ("fifo", "sjf", "qssf", "tiresias", "delay")
ANNOTATORS = ("none", "lastk", "helios", "lucid", "history", "schedmate", "oracle")


def rebase(jobs, compress: float):
    t0 = jobs[0].submit_time
    return [j.model_copy(update={"submit_time": (j.submit_time - t0) / compress}) for j in jobs]


def traces(n: int):
    out = {"philly": (load_trace(f"derived:philly:{n}:0:0.6").jobs, "256")}
    pods = shared_traces_dir() / "alibaba-gpu-v2023" / "csv" / "openb_pod_list_default.csv"
    if pods.exists():
        jobs = [j for j in load_trace(str(pods)).jobs if j.num_gpus >= 1]
        window = jobs[3000:3000 + n]
        out["alibaba2023"] = (rebase(window, 40.0), "32")
    out["helios"] = (rebase(load_trace(f"synth:helios:{n}:3").jobs, 1.2), "256")
    return out


def markdown(df: pd.DataFrame) -> str:
    def cell(v) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("eval/main/results"))
    ap.add_argument("--jobs", type=int, default=600)
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--policies", nargs="*", default=list(POLICIES))
    ap.add_argument("--annotators", nargs="*", default=list(ANNOTATORS))
    ap.add_argument("--traces", nargs="*", default=None)
    ap.add_argument("--semantic-noise", type=float, default=0.0,
                    help="scale of the real-cluster noise in the semantic augmentation (0 none, 1 calibrated)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, (jobs, cluster) in traces(a.jobs).items():
        if a.traces and name not in a.traces:
            continue
        sem = a.out / "semantic" / name
        # look at logs every ~1/20 of the median job, and not more often than every 5 minutes
        durations = sorted(j.duration_s for j in jobs)
        interval = max(300.0, durations[len(durations) // 2] / 20)
        for policy in a.policies:
            for annotator in a.annotators:
                ann = annotator
                if annotator == "schedmate":
                    from schedmate.annotators.semantic import SemanticAnnotator

                    ann = SemanticAnnotator(use_llm=False) if a.no_llm else SemanticAnnotator()
                t0 = time.perf_counter()
                s = replay(jobs, policy=policy, annotator=ann, cluster=cluster, network="congested",
                           semantic=sem, seed=0, monitor_interval_s=interval,
                           semantic_noise=a.semantic_noise).summary
                cost = s.annotation or {}
                rows.append({"trace": name, "policy": policy, "annotator": annotator, "jobs": s.jobs,
                             "avg_jct_h": s.avg_jct_s / 3600, "p99_jct_h": s.p99_jct_s / 3600,
                             "avg_queue_h": s.avg_queue_s / 3600, "failed_gpu_h": s.failed_gpu_hours,
                             "makespan_h": s.makespan_s / 3600,
                             "llm_calls_per_job": cost.get("llm_calls_per_job"),
                             "tokens_per_job": cost.get("tokens_per_job"),
                             "annotate_s_per_job": cost.get("annotate_s_per_job"),
                             "wall_s": time.perf_counter() - t0})
                print(f"{name:12s} {policy:9s} {annotator:10s} avg JCT {s.avg_jct_s / 3600:8.2f} h  "
                      f"queue {s.avg_queue_s / 3600:7.2f} h  failed GPU-h {s.failed_gpu_hours:8.1f}", flush=True)
    df = pd.DataFrame(rows)
    base = df[df.annotator == "none"].set_index(["trace", "policy"])["avg_jct_h"]
    df["speedup_vs_none"] = [base[(r.trace, r.policy)] / r.avg_jct_h for r in df.itertuples()]
    orc = df[df.annotator == "oracle"].set_index(["trace", "policy"])["avg_jct_h"]
    df["vs_oracle"] = [r.avg_jct_h / orc[(r.trace, r.policy)] for r in df.itertuples()]
    df.to_csv(a.out / "results.csv", index=False)
    show = df[["trace", "policy", "annotator", "avg_jct_h", "p99_jct_h", "avg_queue_h", "failed_gpu_h",
               "speedup_vs_none", "vs_oracle", "llm_calls_per_job", "tokens_per_job",
               "annotate_s_per_job"]]
    (a.out / "results.md").write_text(
        f"Produced by `python -m eval.main.run --out {a.out} --jobs {a.jobs}{' --no-llm' if a.no_llm else ''}"
        f"{f' --semantic-noise {a.semantic_noise:g}' if a.semantic_noise else ''}` "
        f"on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; LLM server: "
        f"{os.environ.get('SCHEDMATE_LLM_BASE_URL', 'recorded serve state')}\n\n"
        + markdown(show) + "\n")
    print(show.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    from eval.main.plots import plot_table

    for path in plot_table(a.out / "results.csv"):
        print(f"plot: {path}")


if __name__ == "__main__":
    main()
