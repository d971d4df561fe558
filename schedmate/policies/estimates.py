"""What a policy may know about a job's duration: only what its annotation says."""

from __future__ import annotations

from schedmate.sim.state import JobState, Status


def predicted_duration(js: JobState) -> float | None:
    est = js.annotation.predicted_duration
    return est.p50 if est is not None else None


def predicted_remaining(js: JobState, now: float) -> float | None:
    """Remaining run time at `now`: the latest remaining-time estimate aged by the time run since it
    was made, else the predicted duration minus the time already run."""
    ann = js.annotation
    if ann.predicted_remaining_s is not None:
        ran_since = 0.0
        if js.status is Status.running:
            ran_since = max(0.0, now - max(ann.made_at, js.last_start))
        return max(0.0, ann.predicted_remaining_s - ran_since)
    p50 = predicted_duration(js)
    if p50 is None:
        return None
    return max(0.0, p50 - js.executed_at(now))


def network_sensitivity(js: JobState) -> float | None:
    return js.annotation.network_sensitivity
