"""The adapter between annotations and the simulated schedulers: one interface for every policy.

Ordering and placement already read the annotation (predicted duration or remaining time for the
queue orders, network sensitivity for the delay placement and its timers); the engine re-sorts a job
whenever its annotation changes. What remains is acting on failure signals, which this adapter does:

* a failure the log monitor is confident about ends the job at detection time instead of at the time
  the trace says it exited (a hung or dead job stops holding its GPUs);
* a failure marked recoverable whose action is `restart_from_checkpoint` is requeued instead (the job
  pays the checkpoint/restart cost and runs again from its last checkpoint) at most `max_requeues`
  times, since a replay cannot know whether the restart would succeed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedmate.records import Annotation, FailureAction
from schedmate.sim.state import JobState, Status
from schedmate.sim.view import SchedulerView


@dataclass
class FailureSignalAdapter:
    min_confidence: float = 0.6
    """Signals below this confidence are kept in the annotation but not acted on."""
    requeue: bool = False
    """Requeue recoverable failures (restart from checkpoint) instead of ending them. Off by default
    in replays: the trace's job did fail, and a replay cannot tell whether a restart would succeed."""
    max_requeues: int = 1
    decisions: list[dict] = field(default_factory=list)

    def __call__(self, sim: SchedulerView, js: JobState, annotation: Annotation, now: float) -> None:
        signal = annotation.failure
        if signal is None or not signal.failed or signal.confidence < self.min_confidence:
            return
        if js.status is not Status.running:
            return
        requeues = js.extra.get("adapter_requeues", 0)
        if (self.requeue and signal.recoverable and signal.action is FailureAction.restart_from_checkpoint
                and requeues < self.max_requeues):
            js.extra["adapter_requeues"] = requeues + 1
            sim.preempt(js, now)
            verdict = "requeue"
        else:
            sim.terminate(js, now, reason="signal")
            verdict = "terminate"
        self.decisions.append({"time": now, "job": js.job.id, "category": signal.category.value,
                               "action": signal.action.value, "verdict": verdict})
        sim.log.append({"time": now, "event": "failure_signal", "job": js.job.id,
                        "category": signal.category.value, "verdict": verdict})
