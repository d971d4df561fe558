"""Synthetic workloads calibrated to published figures: `synth:philly|helios|acme:N[:seed]`.

Targets live in `traces/calibration/<kind>.yaml` (each figure with its source; produced by
`traces/calibration/make_calibration.py`). Marginals are drawn independently:

* arrivals: a Poisson process whose rate follows the hourly daily cycle of the Helios Venus
  submit series (`arrivals.hourly_shape`, mean 1) at `arrivals.rate_per_hour` (or a rate chosen to
  reach `target_load` on `cluster_gpus`);
* GPUs: the categorical `gpus.mix`;
* durations: the empirical quantile function (Philly, interpolated in log(1+s)) or a log-normal
  with the published median, truncated at the published maximum (Helios, Acme);
* outcome: completed/cancelled/failed at the published rates;
* users: Zipf over `users.count` users; job types (Acme) from `job_types.mix`;
* workload class: `schedmate.workloads.sample_workload` (so `spread_slowdown` is set), with the
  kind's `workload_mix` when given.

Everything is drawn from one seeded generator: the same (kind, N, seed, options) gives the same jobs.
`calibration_report(kind, jobs)` compares the generated marginals with the targets.
"""

from __future__ import annotations

import math
import random
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from schedmate.jobtable import JobTable
from schedmate.records import Job, Outcome
from schedmate.traces.base import TRACES_DIR
from schedmate.workloads import sample_workload

KINDS = ("philly", "helios", "acme")

# Tolerances of the calibration checks (used by calibration_report and the tests).
TOLERANCES = {
    "median_duration_s": ("rel", 0.15),
    "p90_duration_s": ("rel", 0.20),
    "p10_duration_s": ("rel", 0.20),
    "mean_duration_s": ("rel", 0.25),
    "fail_rate": ("abs", 0.03),
    "cancel_rate": ("abs", 0.03),
    "gpu1_share": ("abs", 0.05),
    "mean_gpus": ("rel", 0.20),
    "hourly_shape_corr": ("min", 0.90),
}


@cache
def calibration(kind: str, path: str | None = None) -> dict[str, Any]:
    if kind not in KINDS:
        raise ValueError(f"unknown synthetic kind {kind!r}: expected one of {', '.join(KINDS)}")
    p = Path(path) if path else TRACES_DIR / "calibration" / f"{kind}.yaml"
    return yaml.safe_load(p.read_text())


# --------------------------------------------------------------------------- samplers


def _libm(fn: Any, x: np.ndarray) -> np.ndarray:
    """`fn` (a `math` function) element by element. NumPy's own exp/log kernels differ in the last bit
    between CPUs (AVX-512 machines take a SIMD path), so a trace drawn through them is not the same trace on
    every machine; libm's scalar functions are."""
    return np.fromiter((fn(v) for v in np.asarray(x, dtype=float).ravel()), dtype=float,
                       count=np.size(x)).reshape(np.shape(x))


def _durations(cal: dict[str, Any], n: int, rng: np.random.Generator) -> np.ndarray:
    d = cal["duration"]
    if d["model"] == "empirical_quantiles":
        u = rng.random(n)
        return _libm(math.expm1, np.interp(u, d["probs"], _libm(math.log1p, np.asarray(d["seconds"]))))
    if d["model"] == "lognormal":
        mu, s, cap = math.log(d["median_s"]), d["sigma"], d["cap_s"]
        out = _libm(math.exp, mu + s * rng.standard_normal(n))
        over = out > cap
        while over.any():  # truncation by rejection (the tail beyond the cap is tiny)
            out[over] = _libm(math.exp, mu + s * rng.standard_normal(int(over.sum())))
            over = out > cap
        return np.round(out, 1)
    raise ValueError(f"unknown duration model {d['model']!r}")


def _categorical(mix: dict[Any, float], n: int, rng: np.random.Generator) -> np.ndarray:
    keys = list(mix)
    p = np.array([mix[k] for k in keys], dtype=float)
    return np.array(keys, dtype=object)[rng.choice(len(keys), size=n, p=p / p.sum())]


def _arrivals(shape: list[float], n: int, rate_per_hour: float, rng: np.random.Generator) -> np.ndarray:
    """n arrival times (s) of a Poisson process with hourly rate rate_per_hour * shape[hour of day]."""
    w = np.asarray(shape, dtype=float)
    w = w / w.mean()
    ops = np.cumsum(rng.exponential(1.0 / rate_per_hour, size=n))  # operational time in hours
    days = int(ops[-1] / 24) + 2 if n else 1
    hourly = np.tile(w, days)
    cum = np.concatenate([[0.0], np.cumsum(hourly)])  # expected arrivals (in units of rate*1h) by hour
    hours = np.interp(ops, cum, np.arange(len(cum)))
    return hours * 3600.0 - (hours[0] * 3600.0 if n else 0.0)


def _users(count: int, s: float, n: int, rng: np.random.Generator) -> np.ndarray:
    ranks = np.arange(1, count + 1)
    p = ranks ** (-float(s))
    names = np.array([f"u{r:04d}" for r in ranks.tolist()])
    return names[rng.choice(ranks, size=n, p=p / p.sum()) - 1]


def generate(kind: str, n: int, seed: int = 0, **options: Any) -> list[Job]:
    """N synthetic jobs of `kind` as `Job` records, sorted by submit time (see `generate_table`)."""
    return generate_table(kind, n, seed, **options).to_jobs()


def generate_table(kind: str, n: int, seed: int = 0, *, rate_per_hour: float | None = None,
                   target_load: float | None = None, cluster_gpus: int | None = None, max_gpus: int | None = None,
                   calibration_file: str | None = None) -> JobTable:
    """N synthetic jobs of `kind` as columns, sorted by submit time. See the module docstring.

    `max_gpus` caps GPU demands (e.g. at the cluster size). `target_load` with `cluster_gpus`
    rescales the arrivals so that sum(GPUs x duration) / (cluster_gpus x arrival span) equals it.
    """
    if n < 0:
        raise ValueError("N must be >= 0")
    cal = calibration(kind, calibration_file)
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    gpus = _categorical({int(k): v for k, v in cal["gpus"]["mix"].items()}, n, rng).astype(int)
    if max_gpus is not None:
        gpus = np.minimum(gpus, max_gpus)
    dur = _durations(cal, n, rng)
    out = cal["outcomes"]
    outcome = _categorical({Outcome.completed: out["completed"], Outcome.cancelled: out["cancelled"],
                            Outcome.failed: out["failed"]}, n, rng)
    users = _users(cal["users"]["count"], cal["users"]["zipf_s"], n, rng)
    types = _categorical(cal["job_types"]["mix"], n, rng) if "job_types" in cal else np.array([None] * n, dtype=object)
    arr = cal["arrivals"]
    submit = _arrivals(arr["hourly_shape"], n, rate_per_hour or arr["rate_per_hour"], rng)
    if target_load is not None and n > 1:
        if not cluster_gpus:
            raise ValueError("target_load needs cluster_gpus")
        span = float((gpus * dur).sum()) / (cluster_gpus * target_load)
        submit = submit * (span / submit[-1]) if submit[-1] > 0 else submit
    wrng = random.Random(f"{kind}:{seed}:workload")
    mix = cal.get("workload_mix", {}).get("mix")
    drawn = [sample_workload(wrng, g, mix) for g in gpus.tolist()]
    names = [w.name for w in drawn]
    job_names = [f"{jt.lower()}-{w}-{i:06d}" if jt else f"{w}-{i:06d}" for i, (jt, w) in enumerate(zip(types.tolist(), names))]
    return JobTable.from_columns(n, {
        "id": [f"{kind}-{seed}-{i:06d}" for i in range(n)], "user": users,
        "submit_time": [round(t, 3) for t in submit.tolist()], "num_gpus": gpus, "duration_s": dur,
        "outcome": outcome, "name": job_names, "job_type": types, "workload": names,
        "spread_slowdown": [w.spread_slowdown for w in drawn]})


# --------------------------------------------------------------------------- calibration report


def _targets(cal: dict[str, Any]) -> dict[str, float]:
    t: dict[str, float] = {}
    d = cal["duration"]
    if d["model"] == "empirical_quantiles":
        for q in (0.1, 0.5, 0.9):
            key = {0.1: "p10", 0.5: "median", 0.9: "p90"}[q] + "_duration_s"
            t[key] = math.expm1(float(np.interp(q, d["probs"], _libm(math.log1p, np.asarray(d["seconds"])))))
    else:
        t["median_duration_s"] = float(d["median_s"])
        t["mean_duration_s"] = float(d["target_mean_s"])
    mix = {int(k): v for k, v in cal["gpus"]["mix"].items()}
    tot = sum(mix.values())
    t["gpu1_share"] = mix.get(1, 0.0) / tot
    t["mean_gpus"] = sum(k * v for k, v in mix.items()) / tot
    t["fail_rate"] = float(cal["outcomes"]["failed"])
    t["cancel_rate"] = float(cal["outcomes"]["cancelled"])
    t["hourly_shape_corr"] = 1.0
    return t


def calibration_report(kind: str, jobs: list[Job], calibration_file: str | None = None) -> pd.DataFrame:
    """One row per calibrated marginal: target, generated value, error, tolerance and `ok`.

    Relative tolerances compare |generated - target| / target, absolute ones the difference, and
    `hourly_shape_corr` is the correlation between the generated arrivals per hour of day and the
    target shape (it must reach the minimum; it needs a few days of arrivals to be meaningful).
    """
    cal = calibration(kind, calibration_file)
    targets = _targets(cal)
    dur = np.array([j.duration_s for j in jobs], dtype=float)
    gpus = np.array([j.num_gpus for j in jobs], dtype=float)
    outc = np.array([j.outcome.value for j in jobs])
    sub = np.array([j.submit_time for j in jobs], dtype=float)
    gen: dict[str, float] = {
        "p10_duration_s": float(np.quantile(dur, 0.1)) if len(dur) else math.nan,
        "median_duration_s": float(np.median(dur)) if len(dur) else math.nan,
        "p90_duration_s": float(np.quantile(dur, 0.9)) if len(dur) else math.nan,
        "mean_duration_s": float(dur.mean()) if len(dur) else math.nan,
        "gpu1_share": float((gpus == 1).mean()) if len(gpus) else math.nan,
        "mean_gpus": float(gpus.mean()) if len(gpus) else math.nan,
        "fail_rate": float((outc == "failed").mean()) if len(outc) else math.nan,
        "cancel_rate": float((outc == "cancelled").mean()) if len(outc) else math.nan,
    }
    counts = np.bincount(((sub // 3600) % 24).astype(int), minlength=24)[:24] if len(sub) else np.zeros(24)
    shape = np.asarray(cal["arrivals"]["hourly_shape"], dtype=float)
    gen["hourly_shape_corr"] = float(np.corrcoef(counts, shape)[0, 1]) if counts.std() > 0 else math.nan
    rows = []
    for metric, target in targets.items():
        kind_t, tol = TOLERANCES[metric]
        g = gen[metric]
        if kind_t == "rel":
            err = abs(g - target) / target if target else math.inf
            ok = err <= tol
        elif kind_t == "abs":
            err = abs(g - target)
            ok = err <= tol
        else:
            err = g
            ok = g >= tol
        rows.append({"metric": metric, "target": target, "generated": g, "error": err, "tolerance": tol,
                     "tolerance_kind": kind_t, "ok": bool(ok)})
    return pd.DataFrame(rows)
