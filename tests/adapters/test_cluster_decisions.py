"""The decisions every real-cluster adapter shares, on literal annotations and job states."""

import pytest

from adapters.base import AdapterConfig, JobPhase, JobView, Verdict, decide, priority_score
from schedmate.records import Annotation, DurationEstimate, FailureAction, FailureCategory, FailureSignal

CFG = AdapterConfig()


def pending(nodes=1, limit=None):
    return JobView(id="1", phase=JobPhase.pending, raw_state="PENDING", nodes=nodes, time_limit_s=limit)


def running(elapsed, limit=None, nodes=1):
    return JobView(id="1", phase=JobPhase.running, raw_state="RUNNING", elapsed_s=elapsed, time_limit_s=limit,
                   nodes=nodes)


def ann(p50=None, p90=None, remaining=None, sens=None, failure=None):
    d = DurationEstimate(p10=min(p50, p90) / 2, p50=p50, p90=p90) if p50 is not None else None
    return Annotation(job_id="1", predicted_duration=d, predicted_remaining_s=remaining, network_sensitivity=sens,
                      failure=failure)


def signal(confidence=0.9, recoverable=False, action=FailureAction.nothing, category=FailureCategory.hang):
    return FailureSignal(category=category, failed=True, confidence=confidence, recoverable=recoverable,
                         action=action)


@pytest.mark.parametrize("case, a, job, limit", [
    ("a pending job gets p90 x margin rounded up to the minute", ann(300, 600), pending(limit=14400), 780),
    ("an unlimited job gets a limit", ann(300, 600), pending(), 780),
    ("a running job keeps at least the headroom beyond what it used", ann(300, 600), running(500, 3600), 1140),
    ("a running job's remaining time counts when larger than the p90", ann(300, 600, remaining=2000),
     running(500, 7200), 3000),
    ("a limit above the user's request is not planned", ann(3000, 6000), pending(limit=3600), None),
    ("a job past its p90 with no remaining estimate is left alone", ann(300, 600), running(5000, 7200), None),
    ("a limit already in place is not rewritten", ann(300, 600), pending(limit=780), None),
    ("no duration estimate, no limit", ann(sens=0.9), pending(limit=3600), None),
])
def test_time_limits(case, a, job, limit):
    assert decide(a, job, CFG).time_limit_s == limit, case


def test_a_limit_above_the_request_is_planned_with_allow_extend():
    cfg = AdapterConfig(allow_extend=True)
    assert decide(ann(3000, 6000), pending(limit=3600), cfg).time_limit_s == 7500


@pytest.mark.parametrize("case, p50, score", [
    ("at or under short_s is the best priority", 300, 0.0),
    ("at or over long_s is the worst", 200000, 1.0),
    ("in between it is log-scaled", 600 * 12, 0.5),
])
def test_priority_scores(case, p50, score):
    assert priority_score(p50, AdapterConfig(short_s=600, long_s=600 * 144)) == pytest.approx(score, abs=0.001), case


def test_only_pending_jobs_get_a_priority():
    assert decide(ann(300, 600), pending(), CFG).priority_score == 0.0
    assert decide(ann(300, 600), running(10, 3600), CFG).priority_score is None


@pytest.mark.parametrize("case, a, job, wait", [
    ("a sensitive multi-node pending job waits up to the cap", ann(36000, 50000, sens=0.8), pending(nodes=4), 300),
    ("the wait never exceeds what spreading would cost", ann(100, 100, sens=0.8), pending(nodes=4), 300),
    ("a single-node job never waits", ann(36000, 50000, sens=0.8), pending(nodes=1), None),
    ("an insensitive job never waits", ann(36000, 50000, sens=0.2), pending(nodes=4), None),
    ("a running job is already placed", ann(36000, 50000, sens=0.8), running(10, None, nodes=4), None),
    ("a wait under a minute is not worth a constraint", ann(20, 30, sens=0.5), pending(nodes=4), None),
])
def test_topology_waits(case, a, job, wait):
    assert decide(a, job, CFG).topology_wait_s == wait, case


def test_the_topology_wait_is_bounded_by_the_cost_of_spreading():
    """sens 0.5 -> slowdown 2.5: a 100 s job loses 150 s spread, so it waits at most 150 s (3 minutes up)."""
    assert decide(ann(100, 100, sens=0.5), pending(nodes=2), CFG).topology_wait_s == 180


@pytest.mark.parametrize("case, sig, job, verdict", [
    ("a confident unrecoverable failure ends the job", signal(), running(100), Verdict.terminate),
    ("a confident recoverable failure with restart action is requeued",
     signal(recoverable=True, action=FailureAction.restart_from_checkpoint), running(100), Verdict.requeue),
    ("recoverable without a restart action is ended", signal(recoverable=True, action=FailureAction.reduce_memory),
     running(100), Verdict.terminate),
    ("a weak signal changes nothing", signal(confidence=0.5), running(100), None),
    ("a pending job is never ended by a signal", signal(), pending(), None),
])
def test_failure_verdicts(case, sig, job, verdict):
    assert decide(ann(failure=sig), job, CFG).failure is verdict, case


def test_requeue_can_be_turned_off():
    sig = signal(recoverable=True, action=FailureAction.restart_from_checkpoint)
    assert decide(ann(failure=sig), running(10), AdapterConfig(requeue_recoverable=False)).failure is Verdict.terminate


def test_a_job_being_ended_gets_no_new_limit_or_priority():
    d = decide(ann(300, 600, failure=signal()), running(100, 7200), CFG)
    assert (d.failure, d.time_limit_s, d.priority_score) == (Verdict.terminate, None, None)


def test_finished_jobs_get_nothing_and_say_why():
    job = JobView(id="1", phase=JobPhase.finished, raw_state="COMPLETED")
    d = decide(ann(300, 600, failure=signal()), job, CFG)
    assert (d.failure, d.time_limit_s) == (None, None)
    assert d.notes == ["job already ended (COMPLETED)"]


def test_the_summary_never_carries_the_free_text_root_cause():
    sig = signal().model_copy(update={"root_cause": "x' Comment=evil; scancel -u root"})
    d = decide(ann(300, 600, failure=sig), running(10), CFG)
    assert "evil" not in d.summary and all("evil" not in v for v in d.facts.values())
    assert d.summary == "schedmate: p10=150s p50=300s p90=600s failure=hang@0.90"
