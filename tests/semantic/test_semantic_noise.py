"""Real-cluster noise on top of the semantic augmentation: off by default, scalable, and it does what it says."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from schedmate.semantic import TEMPLATES, augment, load_plan
from schedmate.semantic.augment import EARLY_STOP_SHARE, SemanticNoise
from schedmate.traces import load_trace


def plans(tmp_path, noise, name):
    jobs = load_trace("synth:acme:1500:5").jobs
    out = augment(jobs, tmp_path / name, seed=3, write=False, noise=noise)
    return [load_plan(j) for j in out]


def test_zero_noise_gives_exactly_the_plain_augmentation(tmp_path):
    jobs = load_trace("synth:philly:200:1").jobs
    a = augment(jobs, tmp_path / "a", seed=5, write=False)
    b = augment(jobs, tmp_path / "b", seed=5, write=False, noise=SemanticNoise(0.4, 0.2).scaled(0))
    strip = lambda p: {k: v for k, v in json.loads(p.read_text()).items() if k not in ("workdir", "log_path")}
    for x, y in zip(a, b, strict=True):
        assert strip(tmp_path / "a" / "_plans" / f"{x.id}.json") == strip(tmp_path / "b" / "_plans" / f"{y.id}.json")


def test_iteration_time_noise_widens_the_spread_around_the_template(tmp_path):
    by_name = dict(TEMPLATES)

    def spread(ps):
        return statistics.pstdev(math.log(p.iter_s / by_name[p.template].iter_s) for p in ps if p.template in by_name)

    plain, noisy = spread(plans(tmp_path, None, "a")), spread(plans(tmp_path, SemanticNoise(iter_time_sigma=0.5), "b"))
    assert noisy**2 - plain**2 > 0.5 * 0.5**2  # independent log-normal noise adds its variance


def test_the_stop_early_share_adds_runs_whose_configured_length_overshoots(tmp_path):
    noisy = plans(tmp_path, SemanticNoise(stop_early_share=0.3), "b")
    completed = [p for p in noisy if p.outcome == "completed"]
    share = sum(p.early_stop for p in completed) / len(completed)
    assert abs(share - (EARLY_STOP_SHARE + 0.3)) < 0.05, share
    for p in completed:
        assert (p.planned_s > p.duration_s) == p.early_stop


def test_a_negative_or_infinite_scale_is_refused():
    with pytest.raises(ValueError):
        SemanticNoise(0.3).scaled(-1)
    with pytest.raises(ValueError):
        SemanticNoise(0.3).scaled(float("inf"))
