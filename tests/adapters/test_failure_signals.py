"""The simulated adapter turns failure signals into decisions, the same way for every policy."""

import pytest
from helpers import cluster, ends, job
from pytest import approx

from adapters.simulated import FailureSignalAdapter
from schedmate.annotators.builtin import NoAnnotator
from schedmate.policies import build_scheduler
from schedmate.records import FailureAction, FailureCategory, FailureSignal
from schedmate.sim.engine import ReplayConfig, Simulator


class SaysItFailed(NoAnnotator):
    """From `at` seconds of run time on, reports the given failure for job `target`."""

    monitor_interval_s = 100.0

    def __init__(self, target: str, at: float, signal: FailureSignal) -> None:
        self.target, self.at, self.signal = target, at, signal

    def on_running(self, sim, js, now):
        if js.job.id == self.target and js.executed_at(now) >= self.at:
            return js.annotation.model_copy(update={"failure": self.signal, "made_at": now})
        return None


HUNG = FailureSignal(category=FailureCategory.hang, failed=True, confidence=0.9,
                     action=FailureAction.restart_from_checkpoint, recoverable=True)
WEAK = HUNG.model_copy(update={"confidence": 0.3})


def replay(policy, annotator, adapter):
    jobs = [job("sick", 0, 4, 5000), job("waiting", 10, 4, 100)]
    sim = Simulator(jobs, cluster(1, 4), build_scheduler(policy), annotator, ReplayConfig(audit=True),
                    on_annotation=adapter)
    return sim.run()


@pytest.mark.parametrize("policy", ["fifo", "sjf", "srtf", "qssf", "tiresias", "delay"])
def test_a_confident_failure_signal_ends_the_job_at_detection_for_every_policy(policy):
    """The signal appears at the look at 300 s: the sick job ends then, and the waiting job runs next."""
    adapter = FailureSignalAdapter()
    sim = replay(policy, SaysItFailed("sick", 250, HUNG), adapter)
    assert ends(sim) == {"sick": approx(300), "waiting": approx(400)}
    assert adapter.decisions[0]["verdict"] == "terminate"
    assert sim.jobs[0].ended_by == "signal"
    assert sim.ended == 2  # a job ended by a signal counts once, like a finished one


def test_a_low_confidence_signal_changes_nothing():
    sim = replay("fifo", SaysItFailed("sick", 250, WEAK), FailureSignalAdapter())
    assert ends(sim) == {"sick": approx(5000), "waiting": approx(5100)}


def test_a_recoverable_failure_is_requeued_once_when_asked_then_ended():
    """Requeue at 300 s (losing 60 s of progress); FIFO puts the sick job (submitted first) straight back
    on the GPUs; still reporting the failure, it is ended at its next look, 100 s later; then the
    waiting job runs 400-500."""
    adapter = FailureSignalAdapter(requeue=True, max_requeues=1)
    sim = replay("fifo", SaysItFailed("sick", 250, HUNG), adapter)
    assert [d["verdict"] for d in adapter.decisions] == ["requeue", "terminate"]
    assert ends(sim) == {"sick": approx(400), "waiting": approx(500)}
    assert sim.jobs[0].preemptions == 1


def test_without_an_adapter_failure_signals_are_only_annotations():
    sim = replay("fifo", SaysItFailed("sick", 250, HUNG), None)
    assert ends(sim)["sick"] == approx(5000)
    assert sim.jobs[0].annotation.failure == HUNG
