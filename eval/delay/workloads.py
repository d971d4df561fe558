"""The delay experiment's workloads, clusters, policies and the floors no scheduler can beat.

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
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from schedmate.policies import build_scheduler
from schedmate.policies.base import Scheduler
from schedmate.policies.tuner import TunerConfig
from schedmate.records import Job
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


def p99_floor(jobs: list[Job]) -> float:
    """The p99 JCT no scheduler can beat: every job's JCT is at least its consolidated duration, so the
    99th percentile of the JCTs (`np.percentile`, as the replay summary takes it) is at least that of
    the durations."""
    return float(np.percentile([j.duration_s for j in jobs], 99))


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
