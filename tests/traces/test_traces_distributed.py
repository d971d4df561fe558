"""The distributed-training synthetic workload: determinism, spec parsing and its documented marginals."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from schedmate.traces import load_trace
from schedmate.traces.distributed import MODEL_MIX, generate, gpu_mix, mean_duration_s
from schedmate.workloads import CATALOGUE


@pytest.fixture(scope="module")
def big():
    return generate(20_000, seed=11)


def test_the_same_seed_gives_the_same_jobs_and_another_seed_other_jobs():
    a = load_trace("synth:distributed:300:7").jobs
    assert a == load_trace("synth:distributed:300", seed=7).jobs
    assert [j.duration_s for j in a] != [j.duration_s for j in load_trace("synth:distributed:300:8").jobs]


def test_jobs_are_sorted_distributed_and_carry_a_gavel_model_with_its_catalogue_slowdown():
    jobs = load_trace("synth:distributed:500").jobs
    assert [j.submit_time for j in jobs] == sorted(j.submit_time for j in jobs)
    assert len({j.id for j in jobs}) == 500 and all(j.user for j in jobs)
    assert all(2 <= j.num_gpus <= 32 for j in jobs)
    assert all(j.workload in MODEL_MIX and j.spread_slowdown == CATALOGUE[j.workload].spread_slowdown for j in jobs)
    assert all(j.outcome.value == "completed" for j in jobs)


def test_the_gpu_mix_is_the_helios_multi_gpu_mix_capped_at_32():
    mix = gpu_mix(32)
    assert list(mix) == [2, 4, 8, 16, 32] and math.isclose(sum(mix.values()), 1.0)
    assert mix[8] == pytest.approx(0.551, abs=0.001) and mix[32] == pytest.approx(0.097, abs=0.001)
    assert sum(g * p for g, p in mix.items()) == pytest.approx(10.05, abs=0.01)


def test_generated_gpu_counts_follow_the_documented_mix(big):
    counts = Counter(j.num_gpus for j in big)
    for g, p in gpu_mix(32).items():
        assert counts[g] / len(big) == pytest.approx(p, abs=0.01)


def test_durations_follow_gavels_two_band_log_uniform_generator(big):
    minutes = np.array([j.duration_s for j in big]) / 60
    assert minutes.min() >= 10**1.5 - 0.01 and minutes.max() <= 10**4 + 0.01
    assert (minutes < 10**3).mean() == pytest.approx(0.8, abs=0.01)
    assert mean_duration_s() / 3600 == pytest.approx(16.77, abs=0.01)
    assert minutes.mean() * 60 == pytest.approx(mean_duration_s(), rel=0.05)


def test_models_follow_gavels_distributed_job_templates(big):
    shares = Counter(j.workload for j in big)
    for w, p in MODEL_MIX.items():
        assert shares[w] / len(big) == pytest.approx(p, abs=0.01)
    sensitive = sum(1 for j in big if j.spread_slowdown >= 1.5) / len(big)
    assert sensitive == pytest.approx(10 / 19, abs=0.01)


def test_arrivals_are_rescaled_to_the_target_offered_load():
    for load in (0.9, 2.0):
        jobs = generate(800, seed=0, target_load=load, cluster_gpus=256)
        span = jobs[-1].submit_time - jobs[0].submit_time
        assert sum(j.num_gpus * j.duration_s for j in jobs) / (256 * span) == pytest.approx(load, rel=1e-6)


def test_without_a_target_load_arrivals_come_at_the_given_rate():
    jobs = generate(4000, seed=3, target_load=None, rate_per_hour=2.0)
    hours = (jobs[-1].submit_time - jobs[0].submit_time) / 3600
    assert (len(jobs) - 1) / hours == pytest.approx(2.0, rel=0.05)


@pytest.mark.parametrize("spec", ["synth:distributed", "synth:distributed:ten", "synth:distributed:10:1:2"])
def test_a_malformed_distributed_spec_is_refused(spec):
    with pytest.raises(ValueError):
        load_trace(spec)


def test_neither_a_target_load_nor_a_rate_is_refused():
    with pytest.raises(ValueError):
        generate(10, target_load=None)
