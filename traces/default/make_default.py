"""Regenerate traces/default/default_trace.csv, the embedded demo trace (run from the repo root):

    .venv/bin/python traces/default/make_default.py

500 jobs from the calibrated Philly generator (`synth:philly`, seed 2026; no shared data needed),
with two demo-specific changes, both documented in traces/README.md:

* GPU demands capped at 32 and durations at 24 h, so that no single job dominates a 500-job run
  on the 64-GPU default cluster (8 nodes x 8 GPUs);
* arrivals rescaled so that the offered load sum(GPUs x duration) / (64 x arrival span) is 1.05:
  with the daily cycle the peaks are above 1, so a queue builds and scheduling decisions matter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedmate.traces.base import jobs_frame
from schedmate.traces.synth import generate

OUT = Path(__file__).resolve().parent / "default_trace.csv"
N, SEED, CLUSTER_GPUS, LOAD, MAX_GPUS, MAX_DURATION_S = 500, 2026, 64, 1.05, 32, 86_400.0
COLUMNS = ["id", "user", "submit_time", "num_gpus", "duration_s", "outcome", "name", "workload"]


def build():
    jobs = generate("philly", N, SEED, max_gpus=MAX_GPUS)
    df = jobs_frame(jobs)
    df["duration_s"] = np.minimum(df["duration_s"], MAX_DURATION_S).round(0)
    work = float((df["num_gpus"] * df["duration_s"]).sum())
    span = work / (CLUSTER_GPUS * LOAD)
    df["submit_time"] = (df["submit_time"] * span / df["submit_time"].max()).round(1)
    df["id"] = [f"demo-{i:04d}" for i in range(len(df))]
    return df[COLUMNS]


def main() -> None:
    df = build()
    df.to_csv(OUT, index=False)
    span = df["submit_time"].max()
    load = (df["num_gpus"] * df["duration_s"]).sum() / (CLUSTER_GPUS * span)
    print(f"wrote {OUT}: {len(df)} jobs, arrival span {span / 3600:.1f} h, offered load {load:.2f} on {CLUSTER_GPUS} GPUs")


if __name__ == "__main__":
    main()
