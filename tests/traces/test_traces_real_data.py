"""Loaders on the real files in ../shared/traces (skipped when that folder is absent)."""

from __future__ import annotations

from collections import Counter

import pytest

from schedmate.records import Outcome
from schedmate.traces import load_trace
from schedmate.workloads import CATALOGUE


def test_the_openb_default_pod_list_loads_with_the_documented_mapping(shared):
    path = shared / "alibaba-gpu-v2023" / "csv" / "openb_pod_list_default.csv"
    t = load_trace(str(path))
    assert t.fmt == "alibaba2023" and t.errors == []
    # MANIFEST: 8,152 pods, 897 Pending (never scheduled: dropped), 1,870 Failed, 192 Succeeded
    assert t.stats["rows"] == 8152 and t.stats["pending_dropped"] == 897 and len(t.jobs) == 8152 - 897
    outcomes = Counter(j.outcome for j in t.jobs)
    assert outcomes[Outcome.failed] == 1870 and outcomes[Outcome.completed] == 5193 + 192
    assert t.stats["fractional_gpu_pods"] == 3078
    shared_pods = [j for j in t.jobs if j.name and "gpu_share=" in j.name]
    assert shared_pods and all(j.num_gpus == 1 for j in shared_pods)
    assert all(j.duration_s >= 0 and j.workload is None and j.spread_slowdown == 1.0 for j in t.jobs)
    assert max(j.num_gpus for j in t.jobs) == 8


def test_running_openb_pods_can_be_read_as_cancelled_and_pending_ones_kept(shared):
    path = shared / "alibaba-gpu-v2023" / "csv" / "openb_pod_list_default.csv"
    t = load_trace(str(path), running_as="cancelled", keep_pending=True)
    outcomes = Counter(j.outcome for j in t.jobs)
    assert len(t.jobs) == 8152 and outcomes[Outcome.cancelled] == 5193 + 897 and outcomes[Outcome.completed] == 192


def test_the_gavel_directory_loads_every_vc_with_catalogue_workloads(shared):
    d = shared / "philly-derived-gavel" / "seed=0"
    t = load_trace(str(d))
    assert t.fmt == "gavel" and len(t.jobs) == 15264 and t.errors == []
    assert len({j.vc for j in t.jobs}) == 15 and {j.vc for j in t.jobs} == {f.stem for f in d.glob("*.trace")}
    assert {j.workload for j in t.jobs} == {"resnet18", "resnet50", "transformer", "lm", "recommendation",
                                           "cyclegan", "a3c"}
    assert all(j.spread_slowdown == CATALOGUE[j.workload].spread_slowdown for j in t.jobs)
    assert all(j.duration_s > 0 for j in t.jobs)
    one = next(j for j in t.jobs if j.id == "0e4a51-1")
    assert one.name == "Transformer (batch size 128)" and one.job_type == "Transformer" and one.submit_time == 0


def test_gavel_durations_land_on_the_philly_scale_they_were_estimated_from(shared):
    import numpy as np
    import pandas as pd

    t = load_trace(str(shared / "philly-derived-gavel" / "seed=0"))
    pairs = pd.read_csv(shared / "philly" / "gavel_philly_job_distribution.derived.csv")
    one_gpu = np.array([j.duration_s for j in t.jobs if j.num_gpus == 1])
    target = pairs[pairs.num_gpus == 1].duration_s.median()
    assert abs(np.median(one_gpu) / target - 1) < 0.15


def test_a_single_gavel_file_is_detected_by_its_extension(shared):
    t = load_trace(str(shared / "philly-derived-gavel" / "seed=0" / "23dbec.trace"))
    assert t.fmt == "gavel" and len(t.jobs) == 9 and {j.vc for j in t.jobs} == {"23dbec"}


@pytest.mark.parametrize("limit", [0, 5, 100])
def test_limit_keeps_the_earliest_jobs(shared, limit):
    path = shared / "alibaba-gpu-v2023" / "csv" / "openb_pod_list_default.csv"
    full = load_trace(str(path))
    t = load_trace(str(path), limit=limit)
    assert [j.id for j in t.jobs] == [j.id for j in full.jobs[:limit]]
