"""What the scheduler knows at a tick, as jobs for a forward simulation.

The tuner **snapshots what the scheduler may know** into a list of jobs for a fresh `Simulator` on the
same cluster: the running jobs, pinned to their current placements (so the forward run starts with the
current occupancy) with their *predicted* remaining time; the first `max_waiting` waiting jobs in queue
order, with the time they have already queued (and their locality wait so far, for jobs whose delay
clock has started) credited to them; and the last `max_recent` jobs that arrived within
`recent_window_s`, re-timed forward by one window (the near future is assumed to look like the recent
past). Durations are annotation estimates; without one, the median runtime of the jobs that have
finished so far (observable history; 1 h before any finished). Slowdowns are the annotation's belief
(`spread_slowdown`, else from the sensitivity, else from the default sensitivity). Truth fields of the
trace are never read.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schedmate.policies.delay import CLASSES, DelayTimers
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.policies.tuner.config import GUARD, TunerConfig
from schedmate.records import Annotation, Job, slowdown_from_sensitivity
from schedmate.sim.state import JobState, Placement, Status

if TYPE_CHECKING:
    from schedmate.sim.view import SchedulerView


@dataclass
class Snapshot:
    """A forward-simulation input: jobs, their annotations, pins and wait credits."""

    jobs: list[Job]
    annotations: dict[str, Annotation]
    pins: dict[str, Placement]
    credit: dict[str, float]
    clock: dict[str, float]
    """Locality wait already run, for waiting jobs whose delay clock has started."""
    classes: list[str]
    """The knobs to tune: sensitivity classes (in `CLASSES` order), then `GUARD` (the starvation guard's
    factor) when it is tuned and jobs wait."""


def _belief_slowdown(ann: Annotation, timers: DelayTimers) -> float:
    if ann.spread_slowdown is not None:
        return ann.spread_slowdown
    s = ann.network_sensitivity if ann.network_sensitivity is not None else timers.config.default_sensitivity
    return slowdown_from_sensitivity(s)


def snapshot(sim: SchedulerView, now: float, timers: DelayTimers, cfg: TunerConfig) -> Snapshot:
    """What the scheduler knows at `now`, as jobs for a forward run starting at 0 (see module doc)."""
    finished = [js.executed_s for js in sim.jobs if js.status is Status.done and js.executed_s > 0]
    fallback = statistics.median(finished) if finished else 3600.0
    jobs: list[Job] = []
    anns: dict[str, Annotation] = {}
    pins: dict[str, Placement] = {}
    credit: dict[str, float] = {}
    clock: dict[str, float] = {}
    classes: set[str] = set()

    def add(jid: str, submit: float, js: JobState, dur: float) -> None:
        ann = js.annotation
        jobs.append(Job.model_construct(
            id=jid, user=js.job.user, submit_time=submit, num_gpus=js.job.num_gpus, num_nodes=None, name=None,
            job_type=None, vc=None, gpu_type=None, outcome=js.job.outcome, duration_s=max(1.0, dur),
            requested_time_s=None, workload=None, spread_slowdown=_belief_slowdown(ann, timers),
            failure_category=None, hang_onset_s=None, semantic=None,
        ))
        anns[jid] = ann

    for js in sorted(sim.running, key=lambda j: j.idx):
        r = predicted_remaining(js, now)
        if r is None:
            r = max(fallback - js.executed_at(now), 0.25 * fallback)
        jid = f"run:{js.job.id}"
        add(jid, 0.0, js, r)
        pins[jid] = js.placement
    for n, (_, idx) in enumerate(sim.waiting):
        if n >= cfg.max_waiting:
            break
        js = sim.jobs[idx]
        r = predicted_remaining(js, now)
        add(f"wait:{js.job.id}", 0.0, js, fallback if r is None else r)
        credit[f"wait:{js.job.id}"] = timers.queued(js, now)
        if timers.origin(js) is not None:
            clock[f"wait:{js.job.id}"] = timers.waited(js, now)
        classes.add(timers.klass(js))
    start = now - cfg.recent_window_s
    recent = []
    for js in reversed(sim.jobs):  # jobs are in submission order
        t = js.job.submit_time
        if t > now:
            continue
        if t <= start or len(recent) >= cfg.max_recent:
            break
        recent.append(js)
    for js in reversed(recent):
        d = predicted_duration(js)
        add(f"next:{js.job.id}", js.job.submit_time - start, js, fallback if d is None else d)
        classes.add(timers.klass(js))
    skip = {"low"} if cfg.tune_unknown else {"low", "unknown"}
    tuned = [c for c in CLASSES if c in classes and c not in skip]
    if cfg.tune_guard and timers.config.guard != "age" and credit:
        tuned.append(GUARD)  # a waiting job may come to hold the reservation
    return Snapshot(jobs=jobs, annotations=anns, pins=pins, credit=credit, clock=clock, classes=tuned)


__all__ = ["Snapshot", "snapshot"]
