"""Regenerate the calibration targets in this folder from ../shared/traces (run from the repo root):

    .venv/bin/python traces/calibration/make_calibration.py

Writes philly.yaml, helios.yaml, acme.yaml (targets for the synthetic generators) and
gavel_steps_per_second.yaml (the rate the gavel loader divides total_steps by). Only summary
figures (quantiles, shares, rates) are written, with their source; no trace rows are copied.
Values marked `assumed` are ours, not published, and are set here.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("SCHEDMATE_SHARED_TRACES", HERE.parents[1].parent / "shared" / "traces"))
PROBS = [0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75,
         0.8, 0.85, 0.9, 0.925, 0.95, 0.975, 0.99, 0.995, 0.999, 1.0]
SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


def r(x: float, nd: int = 4) -> float:
    return float(round(float(x), nd))


def venus_hourly_shape() -> tuple[list[float], float]:
    df = pd.read_csv(SHARED / "helios" / "Venus_cluster_throughput.lucid.csv", parse_dates=["time"])
    by_hour = df.groupby(df["time"].dt.hour)["submit_gpu_job"].mean()
    shape = by_hour / by_hour.mean()
    span_h = (df["time"].max() - df["time"].min()).total_seconds() / 3600 + 1 / 6
    rate = df["submit_gpu_job"].sum() / span_h
    return [r(x, 3) for x in shape.tolist()], r(rate, 2)


def venus_gpu_mix() -> dict[int, float]:
    """Sizes of GPU jobs from the 10-min intervals in which exactly one GPU job was submitted."""
    df = pd.read_csv(SHARED / "helios" / "Venus_cluster_throughput.lucid.csv")
    one = df[df["submit_gpu_job"] == 1]["submit_gpu_num"]
    snapped = one.map(lambda n: min(SIZES, key=lambda s: abs(math.log2(max(n, 1)) - math.log2(s))))
    share = snapped.value_counts(normalize=True).sort_index()
    return {int(k): r(v) for k, v in share.items()}


def lognormal_for(median: float, mean: float, cap: float) -> dict[str, float]:
    """sigma of a log-normal with this median whose mean, truncated at `cap`, matches `mean`."""
    from math import erf, exp, log, sqrt

    mu = log(median)

    def tmean(s: float) -> float:
        phi = lambda z: 0.5 * (1 + erf(z / sqrt(2)))
        return exp(mu + s * s / 2) * phi((log(cap) - mu - s * s) / s) / phi((log(cap) - mu) / s)

    lo, hi = 0.1, 6.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tmean(mid) < mean else (lo, mid)
    return {"median_s": median, "sigma": r(lo), "cap_s": cap}


def tail_mix(p1: float, mean: float, max_gpus: int) -> dict[int, float]:
    """P(1) = p1 (assumed); sizes 2..max_gpus (powers of two) with weights q^k fitted to the mean."""
    sizes = [s for s in SIZES if 1 < s <= max_gpus]

    def mix(q: float) -> dict[int, float]:
        w = np.array([q ** k for k in range(len(sizes))])
        w = (1 - p1) * w / w.sum()
        return {1: p1} | {s: float(x) for s, x in zip(sizes, w)}

    lo, hi = 1e-3, 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        m = sum(s * p for s, p in mix(mid).items())
        lo, hi = (mid, hi) if m < mean else (lo, mid)
    return {k: r(v, 5) for k, v in mix(lo).items()}


def main() -> None:
    shape, venus_rate = venus_hourly_shape()
    acme = pd.read_csv(SHARED / "acme" / "cluster_summary.csv").set_index("id")
    helios = pd.read_csv(SHARED / "helios" / "helios_cluster_summary.csv").set_index("id")

    # ---------------------------------------------------------------- philly
    runtime = pd.read_csv(SHARED / "philly" / "philly_runtime.csv")["runtime"]
    gavel = pd.concat(
        pd.read_csv(f, sep="\t", header=None, usecols=[5, 6], names=["arrival", "gpus"])
        for f in sorted((SHARED / "philly-derived-gavel" / "seed=0").glob("*.trace"))
    )
    gmix = gavel["gpus"].map(lambda n: min(SIZES, key=lambda s: abs(math.log2(n) - math.log2(s))))
    gshare = gmix.value_counts(normalize=True).sort_index()
    span_h = 125 * 24.0
    ph = acme.loc["Philly"]
    philly = {
        "kind": "philly",
        "duration": {
            "model": "empirical_quantiles",
            "probs": PROBS,
            "seconds": [r(runtime.quantile(p), 1) for p in PROBS],
            "source": "philly/philly_runtime.csv (83,154 Philly runtimes, via alibaba/clusterdata v2020 analysis)",
        },
        "gpus": {
            "mix": {int(k): r(v, 5) for k, v in gshare.items()},
            "source": "scale_factor of the 15 Gavel msr per-VC traces (real Philly VC GPU counts), "
                      "snapped to powers of two",
        },
        "outcomes": {
            "completed": float(ph["complete_rate_gpu"]), "cancelled": float(ph["cancel_rate_gpu"]),
            "failed": float(ph["fail_rate_gpu"]),
            "source": "acme/cluster_summary.csv row Philly (complete/cancel/fail_rate_gpu)",
        },
        "arrivals": {
            "rate_per_hour": r(len(gavel) / span_h, 2),
            "hourly_shape": shape,
            "source": "rate: 15,264 jobs over 125 days in the Gavel msr traces (a lower bound: at most "
                      "2,000 jobs per VC); daily shape: Helios Venus submit_gpu_job by hour "
                      "(helios/Venus_cluster_throughput.lucid.csv), no Philly series exists here",
        },
        "users": {"count": 300, "zipf_s": 1.1, "source": "assumed"},
        "published": {"acme_philly_median_run_s": float(ph["med_run_time_gpu"]),
                      "acme_philly_avg_gpu": float(ph["avg_gpu_num"])},
    }

    # ---------------------------------------------------------------- helios (Venus)
    v = helios.loc["Venus"]
    hel = {
        "kind": "helios",
        "duration": {"model": "lognormal", **lognormal_for(float(v["med_run_time_gpu"]), float(v["avg_run_time_gpu"]),
                                                           float(acme.loc["Helios", "max_run_time_gpu"])),
                     "target_mean_s": float(v["avg_run_time_gpu"]),
                     "source": "helios/helios_cluster_summary.csv row Venus (med/avg_run_time_gpu); cap = Helios "
                               "max_run_time_gpu in acme/cluster_summary.csv; sigma fitted to the mean"},
        "gpus": {"mix": venus_gpu_mix(), "target_mean": float(v["avg_gpu_num"]),
                 "source": "sizes of the GPU jobs submitted alone in a 10-min interval of "
                           "helios/Venus_cluster_throughput.lucid.csv (snapped to powers of two); "
                           "target_mean is the published Venus avg_gpu_num (not matched by this sample)"},
        "outcomes": {"completed": float(v["complete_rate_gpu"]), "cancelled": float(v["cancel_rate_gpu"]),
                     "failed": float(v["fail_rate_gpu"]),
                     "source": "helios/helios_cluster_summary.csv row Venus (*_rate_gpu)"},
        "arrivals": {"rate_per_hour": venus_rate, "hourly_shape": shape,
                     "source": "helios/Venus_cluster_throughput.lucid.csv submit_gpu_job (mean per hour; shape by hour of day)"},
        "users": {"count": 200, "zipf_s": 1.2, "source": "assumed"},
    }

    # ---------------------------------------------------------------- acme (Seren)
    s = acme.loc["Seren"]
    span_days = 181  # Seren trace: March-August 2023 (AcmeTrace README), about six months
    ac = {
        "kind": "acme",
        "duration": {"model": "lognormal", **lognormal_for(float(s["med_run_time_gpu"]), float(s["avg_run_time_gpu"]),
                                                           float(s["max_run_time_gpu"])),
                     "target_mean_s": float(s["avg_run_time_gpu"]),
                     "source": "acme/cluster_summary.csv row Seren (med/avg/max_run_time_gpu); sigma fitted to the mean"},
        "gpus": {"mix": tail_mix(0.6, float(s["avg_gpu_num"]), int(s["max_gpu"])), "target_mean": float(s["avg_gpu_num"]),
                 "source": "P(1 GPU)=0.6 assumed (published median is 1); powers of two up to max_gpu with a "
                           "geometric tail fitted to the published Seren avg_gpu_num"},
        "outcomes": {"completed": float(s["complete_rate_gpu"]), "cancelled": float(s["cancel_rate_gpu"]),
                     "failed": float(s["fail_rate_gpu"]),
                     "source": "acme/cluster_summary.csv row Seren (*_rate_gpu)"},
        "arrivals": {"rate_per_hour": r(float(s["gpu_job_num"]) / (span_days * 24), 2), "hourly_shape": shape,
                     "source": "Seren gpu_job_num over about 181 days (span assumed); daily shape from Helios Venus"},
        "job_types": {"mix": {"Eval": 0.45, "Debug": 0.2, "SFT": 0.12, "Other": 0.12, "MLLM": 0.07, "Pretrain": 0.04},
                      "source": "assumed (evaluation jobs dominate job counts in the Acme paper; shares are ours)"},
        "workload_mix": {"mix": {"gpt": 0.55, "lm": 0.1, "transformer": 0.15, "bert": 0.1, "resnet50": 0.05,
                                 "imagenet-small-batch": 0.05},
                         "source": "assumed: an LLM lab; passed to schedmate.workloads.sample_workload"},
        "users": {"count": 400, "zipf_s": 1.1, "source": "assumed"},
    }

    # ---------------------------------------------------------------- gavel rates
    pairs = pd.read_csv(SHARED / "philly" / "gavel_philly_job_distribution.derived.csv")
    med_by_class = pairs.groupby("num_gpus")["duration_s"].median()
    tr = pd.concat(
        pd.read_csv(f, sep="\t", header=None, usecols=[0, 4, 6], names=["job_type", "steps", "gpus"])
        for f in sorted((SHARED / "philly-derived-gavel" / "seed=0").glob("*.trace"))
    )
    rates: dict[str, dict[int, float]] = {}
    for jt, g in tr.groupby("job_type"):
        rates[jt] = {}
        for cls in (1, 2, 4, 8):
            sub = g[g["gpus"] == cls]["steps"]
            if len(sub) >= 20:
                rates[jt][cls] = r(sub.median() / med_by_class[cls], 6)
        if 1 not in rates[jt]:
            raise SystemExit(f"no 1-GPU rows for {jt}")
    gv = {"steps_per_second": rates,
          "method": "median(total_steps | job_type, GPUs) / median(duration_s | GPUs) over "
                    "philly-derived-gavel/seed=0/*.trace and philly/gavel_philly_job_distribution.derived.csv; "
                    "classes with fewer than 20 rows are left out (the loader scales the nearest class)",
          "note": "an ESTIMATE of Gavel's reference-GPU throughput, not Gavel's measured table"}

    for name, data in (("philly", philly), ("helios", hel), ("acme", ac), ("gavel_steps_per_second", gv)):
        with open(HERE / f"{name}.yaml", "w") as fh:
            fh.write("# generated by traces/calibration/make_calibration.py from ../shared/traces; do not edit by hand\n")
            yaml.safe_dump(data, fh, sort_keys=False, width=110)
        print("wrote", HERE / f"{name}.yaml")


if __name__ == "__main__":
    main()
