"""The columnar job store: replays of columns and of records agree job by job, pinned per-job results of
the engine before the store still come out, and ended jobs keep their outcome after their state goes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import cluster, job, run

from schedmate.jobtable import InvalidRow, JobTable, JobView
from schedmate.policies import policy_options
from schedmate.records import Job
from schedmate.replay import replay
from schedmate.sim.state import Status
from schedmate.traces import load_trace, shared_traces_dir

GOLDEN = Path(__file__).parent / "golden"
HAS_SHARED = (shared_traces_dir() / "philly-derived-gavel").exists()

# (trace, policy, annotator, cluster, network): FIFO, Tiresias with preemption, delay with preemption,
# migration and a congested network, SRTF on the real-Philly-derived workload.
CASES = [
    ("synth:helios:1500:1", "fifo", "none", "64", "congested"),
    ("synth:helios:1500:1", "tiresias", "none", "64", "congested"),
    ("synth:distributed:800:0", "delay", "oracle", "256", "congested:8"),
    pytest.param("derived:philly:1500:0:50", "srtf", "oracle", "256", "congested",
                 marks=pytest.mark.skipif(not HAS_SHARED, reason="needs the shared traces")),
]


@pytest.mark.parametrize("trace,policy,annotator,spec,network", CASES)
def test_a_replay_of_columns_gives_the_same_per_job_results_as_a_replay_of_records(
        trace, policy, annotator, spec, network):
    loaded = load_trace(trace)
    by_columns = replay(loaded.table, policy=policy, annotator=annotator, cluster=spec, network=network)
    records = loaded.jobs
    assert all(isinstance(j, Job) for j in records)
    by_records = replay(records, policy=policy, annotator=annotator, cluster=spec, network=network)
    assert isinstance(by_columns.sim.jobs[0].job, JobView) and isinstance(by_records.sim.jobs[0].job, Job)
    pd.testing.assert_frame_equal(by_columns.jobs, by_records.jobs)
    assert by_columns.summary.events == by_records.summary.events
    assert by_columns.jobs["end_time"].notna().all()


def golden(name: str) -> pd.DataFrame:
    return pd.read_csv(GOLDEN / f"{name}.csv", dtype={"job_id": str})


@pytest.mark.parametrize("name,trace,policy,annotator,spec,network", [
    ("helios_tiresias", "synth:helios:1000:1", "tiresias", "none", "64", "congested"),
    ("philly_srtf", "synth:philly:1000:2", "srtf", "oracle", "64", "congested:8"),
    ("distributed_delay", "synth:distributed:800:0", "delay", "oracle", "256", "congested:8"),
])
def test_every_job_ends_when_the_engine_before_the_columnar_store_ended_it(name, trace, policy, annotator, spec,
                                                                             network):
    """`golden/*.csv`: end times, preemptions, moves and node spans per job, written by the record-based
    engine before the columnar store (main at 3a36fdd, 2026-11-25). End times agree to a few units in the
    last place: the golden files were written on an AVX-512 machine, whose NumPy exp/log kernels round a few
    generated durations differently in the last bit (traces are drawn through libm since)."""
    want = golden(name)
    # the golden delay replay predates the queue-following starvation guard: pin the guard it ran with
    options = policy_options(policy, ["guard=age", "preemption.guard_claims=lower"]) if policy == "delay" else None
    got = replay(trace, policy=policy, annotator=annotator, cluster=spec, network=network,
                 policy_options=options).jobs
    assert list(got["job_id"]) == list(want["job_id"])
    np.testing.assert_allclose(got["end_time"].to_numpy(), want["end_time"].to_numpy(), rtol=1e-12, atol=0)
    for col in ("preemptions", "migrations", "max_nodes"):
        assert got[col].tolist() == want[col].tolist(), col
    assert want["preemptions"].sum() > 0 and (want["max_nodes"] > 1).any()


@pytest.mark.parametrize("spec", ["synth:helios:3000:5", "synth:philly:3000:5", "synth:acme:3000:5",
                                  "synth:distributed:1000:5",
                                  pytest.param("derived:philly:3000:5:20", marks=pytest.mark.skipif(
                                      not HAS_SHARED, reason="needs the shared traces"))])
def test_a_generated_trace_is_the_same_for_the_same_seed_and_differs_for_another(spec):
    a, b = load_trace(spec).table, load_trace(spec).table
    other = load_trace(spec.rsplit(":", 1)[0] + ":6" if spec.count(":") == 3 else spec.replace(":5:", ":6:")).table
    for f in ("id", "submit_time", "num_gpus", "duration_s", "user", "name", "workload", "spread_slowdown",
              "outcome"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert not np.array_equal(a.duration_s, other.duration_s)


def test_a_view_reads_every_field_as_the_record_has_it():
    jobs = load_trace("default").jobs[:50]
    table = JobTable.from_columns(len(jobs), {f: getattr(JobTable.from_jobs(jobs), f) for f in (
        "id", "submit_time", "num_gpus", "duration_s", "user", "name", "job_type", "vc", "gpu_type", "workload",
        "spread_slowdown", "outcome", "num_nodes", "requested_time_s", "hang_onset_s", "failure_category")})
    assert table.records is None and table.to_jobs() == jobs
    for i, j in enumerate(jobs):
        view = table.row(i)
        assert isinstance(view, JobView)
        for f in Job.model_fields:
            assert getattr(view, f) == getattr(j, f), f
        assert view.to_job() == j


def test_a_value_a_job_would_reject_is_named_by_row_and_field():
    with pytest.raises(InvalidRow) as e:
        JobTable.from_columns(3, {"id": ["a", "b", "c"], "submit_time": [0.0, 1.0, 2.0], "num_gpus": [1, 1, 1],
                                  "duration_s": [5.0, -1.0, 5.0]})
    assert (e.value.row, e.value.field) == (1, "duration_s")


def test_an_ended_job_looked_up_after_the_replay_has_the_outcome_it_ended_with():
    sim = run([job("A", 0, 1, 10_000), job("B", 5000, 1, 100), job("C", 6000, 1, 0)], cluster(1, 1),
              "tiresias", "none")
    assert all(js is None for js in sim.jobs.live)  # every state went when its job ended
    a = sim.jobs[0]
    assert (a.status, a.end_time, a.preemptions, a.first_start) == (Status.done, 10_160, 1, 0)
    assert a.work_done == a.work_total == 10_000 and a.executed_s == 5_000 + 5_060
    assert a.job.id == "A" and a.annotation.job_id == "A" and a.annotation.made_at == 0
    assert [js.job.id for js in reversed(sim.jobs)] == ["C", "B", "A"]
    assert sim.jobs[2].end_time == 6000 and math.isclose(sim.jobs[1].end_time, 5100)


def test_a_job_whose_state_holds_a_policy_note_keeps_its_state_object():
    from schedmate.policies import build_scheduler

    sched = build_scheduler("fifo")
    place = sched.placement.place

    def noting_place(js, cluster_state, now, free=None):
        js.extra["noted"] = now
        return place(js, cluster_state, now, free)

    sched.placement.place = noting_place
    sim = run([job("A", 0, 1, 10), job("B", 1, 1, 10)], cluster(1, 1), scheduler=sched)
    kept = sim.jobs.kept()
    assert [js.job.id for js in kept] == ["A", "B"] and kept[1].extra["noted"] == 10
    assert sim.jobs[1] is kept[1]
