"""Every history-based annotator, in real replays: deterministic, and blind to the future."""

import numpy as np
import pytest

from schedmate.annotators import ANNOTATORS
from schedmate.annotators.baselines import _Boosted, _meta
from schedmate.records import Outcome
from schedmate.replay import replay
from schedmate.traces import load_trace

FAST = ["lastk", "requested", "lucid", "helios"]
N, CUT = 600, 420


@pytest.fixture(scope="module")
def trace():
    jobs = load_trace(f"synth:helios:{N}:5").jobs
    # give every third job a requested time (the trace format allows it), so `requested` has something to say
    return [j.model_copy(update={"requested_time_s": 2.0 * j.duration_s + 60}) if i % 3 == 0 else j
            for i, j in enumerate(jobs)]


def predictions(jobs, annotator, ends=None):
    r = replay(jobs, policy="fifo", annotator=annotator, cluster="1024", network="ideal", workloads=False)
    if ends is not None:
        ends.update({js.job.id: js.end_time for js in r.sim.jobs})
    return {js.job.id: js.annotation.predicted_duration for js in r.sim.jobs}


def absurd_future(jobs, scale):
    """Jobs from index CUT on: durations x scale (+ 10 scale s) and outcomes flipped, requested times kept."""
    flip = {"completed": Outcome.failed, "failed": Outcome.completed, "cancelled": Outcome.completed}
    return jobs[:CUT] + [j.model_copy(update={"duration_s": j.duration_s * scale + 10 * scale,
                                              "outcome": flip[j.outcome.value]}) for j in jobs[CUT:]]


def check_blind_and_deterministic(trace, make):
    ends: dict[str, float] = {}
    first, again = predictions(trace, make(), ends), predictions(trace, make())
    assert first == again
    assert sum(p is not None for p in first.values()) > N // 4
    # Two futures, both absurd, differing only in how absurd: none of the changed jobs finishes before the
    # last submission, so an annotator that learns only from finished jobs predicts exactly the same in both.
    ends_a: dict[str, float] = {}
    pa = predictions(absurd_future(trace, 1e4), make(), ends_a)
    pb = predictions(absurd_future(trace, 1e5), make())
    assert min(ends_a[j.id] for j in trace[CUT:]) > trace[-1].submit_time
    assert pa == pb
    # Against the real future: identical until the first changed job finishes (changed jobs included).
    first_end = min(ends[j.id] for j in trace[CUT:])
    same_past = [j.id for j in trace if j.submit_time < first_end]
    assert len(same_past) > CUT
    assert [first[i] for i in same_past] == [pa[i] for i in same_past]
    return first, pa


@pytest.mark.parametrize("name", FAST)
def test_a_baseline_is_deterministic_and_never_sees_unfinished_jobs(trace, name):
    first, changed = check_blind_and_deterministic(trace, lambda: ANNOTATORS.create(name))
    if name != "requested":
        later = [j.id for j in trace[CUT + 60:]]
        assert any(first[i] != changed[i] for i in later)


def test_the_history_annotator_with_hashed_embeddings_is_deterministic_and_blind_to_the_future(trace):
    first, changed = check_blind_and_deterministic(trace, lambda: ANNOTATORS.create("history", embedder="hashed"))
    assert any(first[j.id] != changed[j.id] for j in trace[CUT + 60:])


@pytest.mark.slow
def test_the_history_annotator_with_minilm_is_deterministic_and_blind_to_the_future(trace, minilm):
    check_blind_and_deterministic(trace[:CUT + 40], lambda: ANNOTATORS.create("history", embedder=minilm))


def test_the_requested_annotator_says_nothing_without_a_requested_time(trace):
    p = predictions(trace, "requested")
    assert all((p[j.id] is None) == (j.requested_time_s is None) for j in trace)
    assert all(p[j.id].p50 == j.requested_time_s for j in trace if j.requested_time_s is not None)


def test_lastk_predicts_the_mean_of_the_users_last_five_run_times():
    from schedmate.records import Job

    a = ANNOTATORS.create("lastk")
    a.reset(0)
    for i, d in enumerate([10.0, 20.0, 30.0, 40.0, 50.0, 60.0]):
        a.on_finish(Job(id=f"j{i}", user="u", submit_time=0, num_gpus=1, duration_s=d), now=100.0 + i, runtime_s=d)
    est = a.on_submit(Job(id="new", user="u", submit_time=200, num_gpus=1, duration_s=1e9), 200.0).predicted_duration
    assert (est.p10, est.p50, est.p90) == (20.0, 40.0, 60.0)


def test_the_fast_tree_walk_matches_sklearn_predict():
    jobs = load_trace("synth:helios:700:3").jobs
    b = _Boosted(("num_gpus", "hour"))
    for j in jobs[:450]:
        b.observe(_meta(j), j.duration_s)
    rows = [_meta(j) for j in jobs[450:]] + [_meta(j) | {"user": None, "num_gpus": None} for j in jobs[:40]]
    x = b._matrix(rows)
    assert np.allclose(b.model.predict(x), [b.trees.predict_one(r.tolist()) for r in x], rtol=0, atol=1e-9)
