"""Auto-tuner for the delay scheduler's timers: simulation in the loop.

Every `period_s` of simulated time (the `Scheduler.on_tick` hook) the tuner

1. **snapshots what the scheduler may know** into a list of jobs for a fresh `Simulator` on the same
   cluster: the running jobs, pinned to their current placements (so the forward run starts with the
   current occupancy) with their *predicted* remaining time; the first `max_waiting` waiting jobs in
   queue order, with the time they have already waited credited to their timers; and the last
   `max_recent` jobs that arrived within `recent_window_s`, re-timed forward by one window (the near
   future is assumed to look like the recent past). Durations are annotation estimates; without
   one, the median runtime of the jobs that have finished so far (observable history; 1 h before
   any finished). Slowdowns are the annotation's belief (`spread_slowdown`, else from the
   sensitivity, else from the default sensitivity). Truth fields of the trace are never read.
2. **searches** the per-class timers (`DelayTimers.per_class`: the W_node and W_rack factors)
   by coordinate descent over the sensitivity classes present in the snapshot (`low` never waits, so
   it is not tuned), one sweep, classes in a fixed order. For each class it tries every multiplier in
   `multipliers` of the configured default factors (W_rack keeps its ratio to W_node), holding the others
   fixed, and keeps a candidate only if it is strictly better. The search starts from the fixed
   default for every class, so the choice is never worse than the default on the snapshot.
3. **objective**: the forward run stops at `horizon_s`; `avg_jct` is the mean over the snapshot's jobs
   of their completion time (unfinished ones: the horizon plus the remaining work at their current
   speed), counted from their arrival including time already waited; `makespan` the latest of those.
4. **logs** one dict per tuned class into `sim.log`: time, event `delay_tuner`, class, W_node, W_rack
   (the chosen factors: a job's timer is factor x (slowdown(s) - 1) x predicted duration, see
   `schedmate.policies.delay`), objective, default_objective.

Cost control, deterministic (no wall clock in decisions): the tuner skips a tick when no waiting job
(among the first `max_waiting`) is held back by a timer (nothing to tune), and when `event_budget` is set, when its forward runs have already processed more than
`event_budget` times the events of the replay so far. `wall_s` (perf counter) is only reported.
"""

from __future__ import annotations

import copy
import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from schedmate.annotators.base import Annotator
from schedmate.policies.base import Decision, PlacementPolicy, QueueOrder, Scheduler
from schedmate.policies.delay import (
    CLASSES,
    CREDIT_KEY,
    DelayPlacement,
    DelayTimers,
    NetworkPreemption,
)
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.records import Annotation, Job, slowdown_from_sensitivity
from schedmate.sim.state import ClusterState, JobState, Placement, Status

if TYPE_CHECKING:
    from schedmate.sim.engine import Simulator

PIN_KEY = "tuner:pin"


@dataclass
class TunerConfig:
    period_s: float = 4 * 3600.0
    objective: str = "avg_jct"
    """`avg_jct` or `makespan`."""
    multipliers: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
    horizon_s: float = 24 * 3600.0
    max_waiting: int = 64
    max_recent: int = 48
    recent_window_s: float = 4 * 3600.0
    event_budget: float | None = None
    """Skip ticks once forward events exceed this multiple of the replay's own events (None: never)."""

    def __post_init__(self) -> None:
        if self.objective not in ("avg_jct", "makespan"):
            raise ValueError(f"tuner objective must be avg_jct or makespan, got {self.objective!r}")
        if 1.0 not in self.multipliers:
            raise ValueError("the multipliers must include 1.0 (the fixed default)")
        if self.period_s <= 0 or self.horizon_s <= 0:
            raise ValueError("tuner period and horizon must be > 0")


@dataclass
class Snapshot:
    """A forward-simulation input: jobs, their annotations, pins and wait credits."""

    jobs: list[Job]
    annotations: dict[str, Annotation]
    pins: dict[str, Placement]
    credit: dict[str, float]
    classes: list[str]


class _Known(Annotator):
    """Hands the forward run the annotations the scheduler already had."""

    name = "snapshot"

    def __init__(self, annotations: dict[str, Annotation]) -> None:
        self.annotations = annotations

    def on_submit(self, job: Job, now: float) -> Annotation:
        return self.annotations[job.id]


class _PinnedFirst(QueueOrder):
    """Pinned (already running) jobs first, then the scheduler's own order."""

    def __init__(self, inner: QueueOrder) -> None:
        self.inner = inner
        self.name = inner.name
        self.blocking = inner.blocking
        self.preemptive = inner.preemptive

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        return (0.0 if PIN_KEY in js.extra else 1.0, *self.inner.key(js, now))

    def preemption_class(self, js: JobState, now: float) -> float:
        return self.inner.preemption_class(js, now)

    def next_key_change(self, js: JobState, now: float) -> float | None:
        return self.inner.next_key_change(js, now)

    def reset(self) -> None:
        self.inner.reset()


class _Pinned(PlacementPolicy):
    """Puts pinned jobs back where they run now; everything else goes to the delay placement."""

    tracks_unplaced = True

    def __init__(self, inner: DelayPlacement) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def monotone(self) -> bool:  # type: ignore[override]
        return self.inner.monotone

    def reset(self, seed: int) -> None:
        self.inner.reset(seed)

    def note_unplaced(self, js: JobState, cluster: ClusterState, now: float) -> None:
        self.inner.note_unplaced(js, cluster, now)

    def place(self, js: JobState, cluster: ClusterState, now: float, free: list[int] | None = None) -> Decision:
        pin = js.extra.pop(PIN_KEY, None) if free is None else None
        if pin is not None:
            return pin
        return self.inner.place(js, cluster, now, free)


def _belief_slowdown(ann: Annotation, timers: DelayTimers) -> float:
    if ann.spread_slowdown is not None:
        return ann.spread_slowdown
    s = ann.network_sensitivity if ann.network_sensitivity is not None else timers.config.default_sensitivity
    return slowdown_from_sensitivity(s)


def snapshot(sim: Simulator, now: float, timers: DelayTimers, cfg: TunerConfig) -> Snapshot:
    """What the scheduler knows at `now`, as jobs for a forward run starting at 0 (see module doc)."""
    finished = [js.executed_s for js in sim.jobs if js.status is Status.done and js.executed_s > 0]
    fallback = statistics.median(finished) if finished else 3600.0
    jobs: list[Job] = []
    anns: dict[str, Annotation] = {}
    pins: dict[str, Placement] = {}
    credit: dict[str, float] = {}
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
        credit[f"wait:{js.job.id}"] = timers.waited(js, now)
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
    tuned = [c for c in CLASSES if c in classes and c != "low"]
    return Snapshot(jobs=jobs, annotations=anns, pins=pins, credit=credit, classes=tuned)


def evaluate(sim: Simulator, snap: Snapshot, timers: DelayTimers, cfg: TunerConfig) -> tuple[float, int]:
    """Objective of one forward run with `timers` (and the number of events it took)."""
    from schedmate.sim.engine import ReplayConfig, Simulator

    main = sim.scheduler
    inner_place = DelayPlacement(timers=timers)
    pre = None
    if isinstance(main.preemption, NetworkPreemption):
        pre = NetworkPreemption(timers, main.preemption.config)
    sched = Scheduler(order=_PinnedFirst(copy.deepcopy(main.order)), placement=_Pinned(inner_place),
                      preemption=pre, backfill=main.backfill, backfill_depth=main.backfill_depth)
    fwd = Simulator(snap.jobs, sim.spec, sched, _Known(snap.annotations),
                    ReplayConfig(seed=sim.config.seed, restart_cost_s=sim.config.restart_cost_s,
                                 record_timeseries=False))
    for js in fwd.jobs:
        jid = js.job.id
        if jid in snap.pins:
            js.extra[PIN_KEY] = snap.pins[jid]
        if jid in snap.credit:
            js.extra[CREDIT_KEY] = snap.credit[jid]
    fwd.run(until=cfg.horizon_s)
    h = cfg.horizon_s  # only unfinished jobs use it, and those exist only if the run stopped there
    ends = []
    for js in fwd.jobs:
        c = snap.credit.get(js.job.id, 0.0)
        if js.status is Status.done:
            end = js.end_time
        elif js.status is Status.running:
            done = js.work_done + js.speed * (h - js.last_update)
            end = h + max(0.0, js.work_total - done) / js.speed
        else:
            end = max(h, js.job.submit_time) + max(0.0, js.work_total - js.work_done)
        ends.append((end - js.job.submit_time + c, end))
    if not ends:
        return 0.0, fwd.events
    if cfg.objective == "makespan":
        return max(e for _, e in ends), fwd.events
    return sum(j for j, _ in ends) / len(ends), fwd.events


@dataclass
class DelayTuner:
    """`on_tick` callable that retunes a `DelayTimers` in place (see the module doc)."""

    timers: DelayTimers
    config: TunerConfig = field(default_factory=TunerConfig)
    wall_s: float = 0.0
    forward_runs: int = 0
    forward_events: int = 0
    ticks: int = 0
    tuned: int = 0
    last: dict = field(default_factory=dict)

    def __call__(self, sim: Simulator, now: float) -> None:
        self.ticks += 1
        if not self._held(sim, now):
            return
        budget = self.config.event_budget
        if budget is not None and self.forward_events > budget * sim.events:
            return
        t0 = time.perf_counter()
        try:
            self.tune(sim, now)
        finally:
            self.wall_s += time.perf_counter() - t0

    def _held(self, sim: Simulator, now: float) -> bool:
        """Is any of the first `max_waiting` waiting jobs held back by a delay timer now?"""
        for n, (_, idx) in enumerate(sim.waiting):
            if n >= self.config.max_waiting:
                break
            js = sim.jobs[idx]
            if self.timers.klass(js) != "low" and self.timers.waited(js, now) < self.timers.timers(js)[1]:
                return True
        return False

    def tune(self, sim: Simulator, now: float) -> dict[str, tuple[float, float]]:
        cfg = self.config
        snap = snapshot(sim, now, self.timers, cfg)
        if not snap.classes:
            return dict(self.timers.per_class)
        base = self.timers.config
        default = DelayTimers(base)
        default_obj = self._eval(sim, snap, default)
        best = default.copy()
        best_obj = default_obj
        for c in snap.classes:
            for m in cfg.multipliers:
                if m == 1.0:
                    continue
                cand = best.copy()
                cand.per_class[c] = (base.node_factor * m, base.rack_factor * m)
                obj = self._eval(sim, snap, cand)
                if obj < best_obj:
                    best, best_obj = cand, obj
        self.timers.per_class = {c: best.scales(c) for c in snap.classes}
        self.tuned += 1
        self.last = {"time": now, "objective": best_obj, "default_objective": default_obj}
        for c in snap.classes:
            node_f, rack_f = best.scales(c)
            sim.log.append({"time": now, "event": "delay_tuner", "class": c, "W_node": node_f, "W_rack": rack_f,
                            "objective": best_obj, "default_objective": default_obj,
                            "objective_kind": cfg.objective})
        return dict(self.timers.per_class)

    def _eval(self, sim: Simulator, snap: Snapshot, timers: DelayTimers) -> float:
        obj, events = evaluate(sim, snap, timers, self.config)
        self.forward_runs += 1
        self.forward_events += events
        return obj


__all__ = ["DelayTuner", "Snapshot", "TunerConfig", "evaluate", "snapshot"]
