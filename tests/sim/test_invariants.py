"""Invariants that must hold for every policy, placement and network."""

import random

import pytest
from helpers import cluster, ends, job, run

from schedmate.records import Outcome
from schedmate.sim.metrics import job_table
from schedmate.sim.state import Status
from schedmate.workloads import sample_workload


def random_jobs(n: int, seed: int):
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(n):
        t += rng.expovariate(1 / 30)
        g = rng.choice([1, 1, 1, 2, 4, 8, 12, 16])
        w = sample_workload(rng, g)
        outcome = rng.choice([Outcome.completed, Outcome.completed, Outcome.failed, Outcome.cancelled])
        jobs.append(job(f"j{i}", round(t, 3), g, round(rng.lognormvariate(6, 1.2), 3), w.spread_slowdown,
                        outcome=outcome, user=f"u{rng.randint(0, 5)}"))
    return jobs


POLICIES = [
    ("fifo", None, "none"), ("fifo", None, "oracle"), ("sjf", None, "oracle"), ("srtf", None, "oracle"),
    ("qssf", "scatter", "oracle"), ("tiresias", None, "none"), ("tiresias", "scatter", "none"),
    ("fifo", "random", "none"), ("srtf", "random", "oracle"),
]


def replay_audit_never_oversubscribes(sim) -> None:
    free = list(sim.cluster.capacity)
    holding: dict[int, tuple] = {}
    for t, what, idx, placement in sim.audit:
        if what == "start":
            assert idx not in holding, f"job {idx} started twice without stopping"
            holding[idx] = placement
            for node, gpus in placement:
                free[node] -= gpus
                assert free[node] >= 0, f"node {node} over-allocated at t={t}"
        else:
            assert holding.pop(idx) == placement
            for node, gpus in placement:
                free[node] += gpus
    assert not holding and free == sim.cluster.capacity


@pytest.mark.parametrize("policy,placement,annotator", POLICIES)
@pytest.mark.parametrize("network", ["ideal", "congested:8"])
def test_no_gpu_is_ever_double_allocated_and_every_job_ends_exactly_once(policy, placement, annotator, network):
    jobs = random_jobs(150, seed=3)
    sim = run(jobs, cluster(6, 8, per_rack=2, network=network), policy, annotator, placement)
    replay_audit_never_oversubscribes(sim)
    assert all(js.status is Status.done for js in sim.jobs)
    assert sim.ended == len(jobs)
    stops = [idx for _, what, idx, _ in sim.audit if what == "stop"]
    starts = [idx for _, what, idx, _ in sim.audit if what == "start"]
    assert len(stops) == len(starts)
    finals = {}
    for js in sim.jobs:  # the final stop of each job is its end
        finals[js.idx] = js.end_time
    assert len(finals) == len(jobs)
    for js in sim.jobs:
        assert js.end_time >= js.job.submit_time + js.job.duration_s - 1e-6, "a job finished faster than its runtime"
        assert js.queued_s >= -1e-9
    assert sim.cluster.total_free == sim.cluster.total_gpus


@pytest.mark.parametrize("policy,placement,annotator", POLICIES)
def test_the_same_seed_gives_identical_results(policy, placement, annotator):
    jobs = random_jobs(120, seed=5)
    a = job_table(run(jobs, cluster(4, 8, 2, "congested"), policy, annotator, placement, seed=7))
    b = job_table(run(list(reversed(jobs)), cluster(4, 8, 2, "congested"), policy, annotator, placement, seed=7))
    assert a.equals(b)


def test_different_seeds_change_random_placement():
    jobs = random_jobs(120, seed=5)
    a = job_table(run(jobs, cluster(4, 8, 2, "congested"), "fifo", "none", "random", seed=1))
    b = job_table(run(jobs, cluster(4, 8, 2, "congested"), "fifo", "none", "random", seed=2))
    assert not a["end_time"].equals(b["end_time"])


def test_a_job_bigger_than_the_cluster_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="more GPUs than the cluster has"):
        run([job("huge", 0, 64, 10)], cluster(2, 8))


def test_a_zero_length_job_ends_on_arrival_without_taking_gpus():
    sim = run([job("z", 5, 4, 0), job("a", 5, 8, 10)], cluster(1, 8))
    assert ends(sim) == {"z": 5, "a": 15}
