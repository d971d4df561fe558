"""Forward simulations of a snapshot under candidate timers, and their objective.

A forward run replays the snapshot on a fresh `Simulator` of the same cluster: the running jobs are put
back where they run (`_Pinned`, first in the queue order), the others go to a delay placement with the
candidate timers, under the scheduler's own preemption and migration configs.

The **metrics** the objective is made of (`schedmate.policies.tuner.config`): the forward run stops at
`horizon_s`; each snapshot job's JCT is its completion time (unfinished ones: the horizon plus the
remaining work at their current speed) counted from its arrival, including the time it had already
waited; `avg_jct` is their mean, `p99_jct` their 99th percentile (nearest rank: on a window of a few
dozen jobs, about the worst one) and `makespan` the latest completion.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING

from schedmate.annotators.base import Annotator
from schedmate.policies.base import Decision, PlacementPolicy, QueueOrder, Scheduler
from schedmate.policies.delay import (
    CLOCK_CREDIT_KEY,
    CREDIT_KEY,
    DelayPlacement,
    DelayTimers,
    NetworkMigration,
    NetworkPreemption,
)
from schedmate.policies.tuner.config import GUARD, METRICS, TunerConfig, objective_value
from schedmate.policies.tuner.snapshot import Snapshot
from schedmate.records import Annotation, Job
from schedmate.sim.state import ClusterState, JobState, Status

if TYPE_CHECKING:
    from schedmate.sim.view import SchedulerView

PIN_KEY = "tuner:pin"


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
        # a forward run starts from the run times the scheduler has observed so far, not from none
        observed = list(self.inner.timers.finished_runs)
        self.inner.reset(seed)
        self.inner.timers.set_runs(observed)

    def note_unplaced(self, js: JobState, cluster: ClusterState, now: float) -> None:
        self.inner.note_unplaced(js, cluster, now)

    def begin_relaxed_pass(self) -> bool:
        return self.inner.begin_relaxed_pass()

    def end_relaxed_pass(self) -> None:
        self.inner.end_relaxed_pass()

    def note_finished(self, js: JobState, now: float) -> None:
        self.inner.note_finished(js, now)

    def note_started(self, js: JobState, now: float) -> None:
        self.inner.note_started(js, now)

    def note_stopped(self, js: JobState, now: float) -> None:
        self.inner.note_stopped(js, now)

    def place(self, js: JobState, cluster: ClusterState, now: float, free: list[int] | None = None) -> Decision:
        pin = js.extra.pop(PIN_KEY, None) if free is None else None
        if pin is not None:
            return pin
        return self.inner.place(js, cluster, now, free)

class _Recording(DelayTimers):
    """Timers that note which classes' factors a forward run read: the factors of the other classes
    cannot have changed anything in that run (the run is deterministic), so candidates that differ
    from it only there have the same objective without running."""

    def __init__(self, timers: DelayTimers) -> None:
        super().__init__(timers.config)
        self.per_class = dict(timers.per_class)
        self.set_runs(timers.finished_runs)
        self.guard_scale = timers.guard_scale
        self.read: set[str] = set()

    def scales(self, klass: str) -> tuple[float, float]:
        self.read.add(klass)
        return super().scales(klass)

    def guard_factor(self) -> float:
        self.read.add(GUARD)
        return super().guard_factor()


class _Forward:
    """Forward runs on one snapshot: the parts that do not depend on the timers are built once."""

    def __init__(self, sim: SchedulerView, snap: Snapshot, cfg: TunerConfig) -> None:
        from schedmate.sim.engine import ReplayConfig

        self.sim, self.snap, self.cfg = sim, snap, cfg
        main = sim.scheduler
        self.pre_cfg = main.preemption.config if isinstance(main.preemption, NetworkPreemption) else None
        self.mig_cfg = main.migration.config if isinstance(main.migration, NetworkMigration) else None
        self.known = _Known(snap.annotations)
        self.replay_cfg = ReplayConfig(seed=sim.config.seed, restart_cost_s=sim.config.restart_cost_s,
                                       record_timeseries=False)
        self.jobs = sorted(snap.jobs, key=lambda j: (j.submit_time, j.id))  # the Simulator's own order

    def run(self, timers: DelayTimers) -> tuple[dict[str, float], int, set[str]]:
        """(metrics, events, knobs the run read) of one forward run with `timers`: the metrics are
        `METRICS` over the snapshot's jobs (see the module doc), the knobs the classes whose timer
        factors it read and `GUARD` if it asked the guard's factor."""
        from schedmate.sim.engine import Simulator

        cfg, snap, main = self.cfg, self.snap, self.sim.scheduler
        rec = _Recording(timers)
        inner = DelayPlacement(timers=rec)
        pre = NetworkPreemption(rec, self.pre_cfg, inner) if self.pre_cfg is not None else None
        mig = NetworkMigration(rec, self.mig_cfg, inner) if self.mig_cfg is not None else None
        # a fresh copy of the order per run: an order's state need not be fully cleared by its reset
        sched = Scheduler(order=_PinnedFirst(copy.deepcopy(main.order)),
                          placement=_Pinned(inner), preemption=pre, migration=mig,
                          backfill=main.backfill, backfill_depth=main.backfill_depth)
        fwd = Simulator(self.jobs, self.sim.spec, sched, self.known, self.replay_cfg)
        for js in fwd.jobs:
            jid = js.job.id
            if jid in snap.pins:
                js.extra[PIN_KEY] = snap.pins[jid]
            if jid in snap.credit:
                js.extra[CREDIT_KEY] = snap.credit[jid]
            if jid in snap.clock:
                js.extra[CLOCK_CREDIT_KEY] = snap.clock[jid]
        fwd.run(until=cfg.horizon_s)
        h = cfg.horizon_s  # only unfinished jobs use it, and those exist only if the run stopped there
        jcts, latest = [], 0.0
        for js in fwd.jobs:
            if js.status is Status.done:
                end = js.end_time
            elif js.status is Status.running:
                done = js.work_done + js.speed * (h - js.last_update)
                end = h + max(0.0, js.work_total - done) / js.speed
            else:
                end = max(h, js.job.submit_time) + max(0.0, js.work_total - js.work_done)
            jcts.append(end - js.job.submit_time + snap.credit.get(js.job.id, 0.0))
            latest = max(latest, end)
        if not jcts:
            return dict.fromkeys(METRICS, 0.0), fwd.events, rec.read
        jcts.sort()
        p99 = jcts[max(0, math.ceil(0.99 * len(jcts)) - 1)]  # nearest rank
        return {"avg_jct": sum(jcts) / len(jcts), "p99_jct": p99, "makespan": latest}, fwd.events, rec.read


def default_knobs(timers: DelayTimers) -> DelayTimers:
    """`timers` with the tuner's choices undone (the configured factors for every class and the guard)."""
    t = timers.copy()
    t.per_class = {}
    t.guard_scale = 1.0
    return t


def evaluate(sim: SchedulerView, snap: Snapshot, timers: DelayTimers, cfg: TunerConfig) -> tuple[float, int]:
    """Objective of one forward run with `timers` (and the number of events it took; a mixed objective
    also runs the default knobs, its reference)."""
    fwd = _Forward(sim, snap, cfg)
    metrics, events, _ = fwd.run(timers)
    default = metrics
    if len(cfg.terms) > 1:
        default, more, _ = fwd.run(default_knobs(timers))
        events += more
    return objective_value(cfg.terms, metrics, default), events


__all__ = ["PIN_KEY", "default_knobs", "evaluate"]
