"""`synth:distributed:N[:seed]`: a distributed-training-heavy workload built from published setups.

The philly/helios workloads are dominated by jobs that fit in one node, so placement policies rarely
differ there. This one keeps only distributed (multi-GPU) jobs, with each marginal taken from a
published evaluation setup; marginals are drawn independently from one seeded generator:

* **GPUs**: the Helios Venus GPU-size mix (`traces/calibration/helios.yaml`, `gpus.mix`) restricted
  to jobs with >= 2 GPUs and capped at `max_gpus` (32: the 0.8 % of 64/128-GPU jobs become 32):
  2: 9.7 %, 4: 14.6 %, 8: 55.1 %, 16: 10.9 %, 32: 9.7 % (mean 10.1 GPUs).
* **Durations**: Gavel's Philly-derived generator (`scheduler/utils.py`, `_generate_duration`):
  with probability 0.8, 60 x 10^U(1.5, 3) s (32 min to 16.7 h), else 60 x 10^U(3, 4) s
  (16.7 h to 6.9 days); mean 16.8 h.
* **Models**: Gavel's job table (`scheduler/job_table.py`), where a multi-GPU job draws uniformly
  from the 19 distributed templates: ResNet-18 x5 batch sizes, ResNet-50 x4, Transformer x5, LM x5,
  i.e. `resnet18` 5/19, `resnet50` 4/19, `transformer` 5/19, `lm` 5/19. Their catalogue slowdowns
  are Gavel's own unconsolidated throughputs (1.33, 1.05, 2.0, 4.0), so 52.6 % of the jobs are
  sensitive (>= 1.5) and 47.4 % are not.
* **Arrivals**: a Poisson process at a constant rate (Gavel's simulator draws exponential
  inter-arrival times), rescaled so that sum(GPUs x duration) / (cluster_gpus x arrival span)
  equals `target_load` (default 0.9 on 256 GPUs); `target_load=None` uses `rate_per_hour`.
* **Outcome**: completed; users Zipf as in the Helios calibration.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from schedmate.jobtable import JobTable
from schedmate.records import Job
from schedmate.traces.synth import _categorical, _users, calibration
from schedmate.workloads import CATALOGUE

KIND = "distributed"

MODEL_MIX: dict[str, float] = {"resnet18": 5 / 19, "resnet50": 4 / 19, "transformer": 5 / 19, "lm": 5 / 19}
"""Gavel's distributed job templates per catalogue class (uniform over templates)."""

SHORT_SHARE = 0.8
SHORT_LOG10_MIN = (1.5, 3.0)
LONG_LOG10_MIN = (3.0, 4.0)


def gpu_mix(max_gpus: int = 32) -> dict[int, float]:
    """Helios Venus GPU sizes >= 2, sizes above `max_gpus` folded into `max_gpus`; sums to 1."""
    raw = {int(k): float(v) for k, v in calibration("helios")["gpus"]["mix"].items() if int(k) >= 2}
    mix: dict[int, float] = {}
    for g, p in raw.items():
        key = min(g, max_gpus)
        mix[key] = mix.get(key, 0.0) + p
    tot = sum(mix.values())
    return {g: p / tot for g, p in sorted(mix.items())}


def mean_duration_s() -> float:
    """Expected duration of Gavel's generator: E[60 x 10^U(a, b)] = 60 (10^b - 10^a) / ((b - a) ln 10)."""
    def m(a: float, b: float) -> float:
        return 60 * (10**b - 10**a) / ((b - a) * math.log(10))

    return SHORT_SHARE * m(*SHORT_LOG10_MIN) + (1 - SHORT_SHARE) * m(*LONG_LOG10_MIN)


def _durations(n: int, rng: np.random.Generator) -> np.ndarray:
    short = rng.random(n) < SHORT_SHARE
    lo = np.where(short, SHORT_LOG10_MIN[0], LONG_LOG10_MIN[0])
    hi = np.where(short, SHORT_LOG10_MIN[1], LONG_LOG10_MIN[1])
    return np.round(60.0 * 10 ** rng.uniform(lo, hi), 1)


def generate(n: int, seed: int = 0, **options: Any) -> list[Job]:
    """N distributed-training jobs as `Job` records, sorted by submit time (see `generate_table`)."""
    return generate_table(n, seed, **options).to_jobs()


def generate_table(n: int, seed: int = 0, *, target_load: float | None = 0.9, cluster_gpus: int = 256,
                   max_gpus: int = 32, rate_per_hour: float | None = None) -> JobTable:
    """N distributed-training jobs as columns, sorted by submit time; see the module docstring."""
    if n < 0:
        raise ValueError("N must be >= 0")
    if target_load is None and not rate_per_hour:
        raise ValueError("give target_load (with cluster_gpus) or rate_per_hour")
    rng = np.random.default_rng([seed, 7_001])  # 7001: a stream of its own, apart from synth's kinds
    mix = gpu_mix(max_gpus)
    gpus = _categorical(mix, n, rng).astype(int)
    dur = _durations(n, rng)
    users = _users(200, 1.2, n, rng)
    if target_load is not None:
        # the expected rate for the target, then an exact rescale on the realised work (as synth does)
        rate_per_hour = target_load * cluster_gpus * 3600.0 / (sum(g * p for g, p in mix.items()) * mean_duration_s())
    assert rate_per_hour is not None
    submit = np.cumsum(rng.exponential(3600.0 / rate_per_hour, size=n))
    submit = submit - submit[0] if n else submit
    if target_load is not None and n > 1 and submit[-1] > 0:
        span = float((gpus * dur).sum()) / (cluster_gpus * target_load)
        submit = submit * (span / submit[-1])
    wrng = random.Random(f"{KIND}:{seed}:workload")
    names, weights = list(MODEL_MIX), list(MODEL_MIX.values())
    drawn = [CATALOGUE[wrng.choices(names, weights=weights, k=1)[0]] for _ in range(n)]
    return JobTable.from_columns(n, {
        "id": [f"{KIND}-{seed}-{i:06d}" for i in range(n)], "user": users,
        "submit_time": [round(t, 3) for t in submit.tolist()], "num_gpus": gpus, "duration_s": dur,
        "name": [f"{w.name}-{i:06d}" for i, w in enumerate(drawn)], "workload": [w.name for w in drawn],
        "spread_slowdown": [w.spread_slowdown for w in drawn]})


__all__ = ["KIND", "MODEL_MIX", "generate", "generate_table", "gpu_mix", "mean_duration_s"]
