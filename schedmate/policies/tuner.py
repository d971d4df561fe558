"""Auto-tuner for the delay scheduler's timers: simulation in the loop.

Every `period_s` of simulated time (the `Scheduler.on_tick` hook) the tuner

1. **snapshots what the scheduler may know** into a list of jobs for a fresh `Simulator` on the same
   cluster: the running jobs, pinned to their current placements (so the forward run starts with the
   current occupancy) with their *predicted* remaining time; the first `max_waiting` waiting jobs in
   queue order, with the time they have already queued (and their locality wait so far, for jobs
   whose delay clock has started) credited to them; and the last
   `max_recent` jobs that arrived within `recent_window_s`, re-timed forward by one window (the near
   future is assumed to look like the recent past). Durations are annotation estimates; without
   one, the median runtime of the jobs that have finished so far (observable history; 1 h before
   any finished). Slowdowns are the annotation's belief (`spread_slowdown`, else from the
   sensitivity, else from the default sensitivity). Truth fields of the trace are never read.
2. **searches** the per-class timers (`DelayTimers.per_class`: the W_node and W_rack factors, as
   multiples in `multipliers` of the configured default factors; W_rack keeps its ratio to W_node)
   over the sensitivity classes present in the snapshot (`low` never waits, so it is not tuned;
   `unknown` only with `tune_unknown`, since its forward runs would simulate a guess),
   classes in a fixed order. It evaluates the default and the previous choice (the incumbent) and
   starts from the better; `search="local"` then tries, per class, both grid neighbours of the
   current multiplier and moves on in a direction while it keeps improving (a few runs per tune);
   `search="grid"` tries every multiplier for every class (one sweep of coordinate descent). A
   candidate is kept only if strictly better, so the choice is never worse than the default on the
   snapshot. Runs are memoised per candidate, and a candidate that differs from an evaluated one only
   in classes whose factors that run never read (no job of the class consulted its timer) has the
   same objective without a run (the run is deterministic).
3. **objective**: the forward run stops at `horizon_s`; `avg_jct` is the mean over the snapshot's jobs
   of their completion time (unfinished ones: the horizon plus the remaining work at their current
   speed), counted from their arrival including time already waited; `makespan` the latest of those.
4. **logs** one dict per tuned class into `sim.log`: time, event `delay_tuner`, class, W_node, W_rack
   (the chosen factors: a job's timer is factor x (slowdown(s) - 1) x predicted duration, see
   `schedmate.policies.delay`), objective, default_objective.

Cost control, deterministic (no wall clock in decisions): a tick tunes only when some of the first
`max_waiting` waiting jobs is held back by a timer and that set of held jobs differs from the last
tune's; after a tune that kept the previous choice the next one waits 2, 4, ... periods (up to
`max_backoff`); and forward runs may use at most `event_budget` times the replay's own events so far.
A forward event costs about what a replay event does (building the forward `Simulator` is a few
percent of a run), so the budget, not a faster run, is what bounds the tuner's share of the wall
time: on a small replay (about 2,000 events) even one tune of 100-200-event runs does not fit, and
the timers stay at the default.
`wall_s` (perf counter, the whole tick hook) is only reported. A tick that leaves the timers as they
were asks for no scheduling pass, so `delay-tuned` replays exactly as `delay` until the tuner changes a
timer (ticks alone would otherwise let time-based conditions, such as the minimum intervals of
migration and preemption, fire at tick times).
"""

from __future__ import annotations

import copy
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from schedmate.annotators.base import Annotator
from schedmate.policies.base import Decision, PlacementPolicy, QueueOrder, Scheduler
from schedmate.policies.delay import (
    CLASSES,
    CLOCK_CREDIT_KEY,
    CREDIT_KEY,
    DelayPlacement,
    DelayTimers,
    NetworkMigration,
    NetworkPreemption,
)
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.records import Annotation, Job, slowdown_from_sensitivity
from schedmate.sim.state import ClusterState, JobState, Placement, Status

if TYPE_CHECKING:
    from schedmate.sim.view import SchedulerView

PIN_KEY = "tuner:pin"


@dataclass
class TunerConfig:
    period_s: float = 4 * 3600.0
    """Simulated time between ticks; a tick tunes at most once (see `max_backoff` for skipped ticks)."""
    objective: str = "avg_jct"
    """`avg_jct` or `makespan`."""
    multipliers: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
    """The grid of multiples of the default factors that the search picks from (must include 1.0)."""
    horizon_s: float = 12 * 3600.0
    """Length of a forward run; unfinished jobs are counted as ending after their remaining work."""
    max_waiting: int = 32
    """Waiting jobs in the snapshot (and looked at for held ones), in queue order."""
    max_recent: int = 16
    """Recent arrivals replayed one window forward as the near future."""
    recent_window_s: float = 4 * 3600.0
    search: str = "local"
    """`local`: from the better of the default and the previous choice, per class try both grid
    neighbours and move on in a direction while it improves; `grid`: every multiplier for every class."""
    max_backoff: int = 8
    """After a tune that kept the previous choice, the next waits twice as many periods as the last,
    up to this many (1: every period)."""
    tune_unknown: bool = False
    """Also tune the `unknown` class (no sensitivity from the annotator). Off by default: its forward
    runs would simulate every such job with the assumed default sensitivity, and tuning to that guess
    made philly's average JCT 9-10 % worse than the fixed timers over whole replays (`bench_tuner
    --budget none`, annotator `none`)."""
    event_budget: float | None = 0.05
    """Forward runs may use at most this multiple of the replay's own events so far (None: no limit).
    A forward event costs about what a replay event does, so this bounds the tuner's share of the
    replay's wall time deterministically (0.05 leaves room for the snapshots and the per-tick check
    of held jobs within a 10 % share); a tune starts only when the default and one candidate fit."""

    def __post_init__(self) -> None:
        if self.objective not in ("avg_jct", "makespan"):
            raise ValueError(f"tuner objective must be avg_jct or makespan, got {self.objective!r}")
        if self.search not in ("local", "grid"):
            raise ValueError(f"tuner search must be local or grid, got {self.search!r}")
        if 1.0 not in self.multipliers:
            raise ValueError("the multipliers must include 1.0 (the fixed default)")
        if self.period_s <= 0 or self.horizon_s <= 0:
            raise ValueError("tuner period and horizon must be > 0")
        if self.max_backoff < 1:
            raise ValueError("max_backoff must be >= 1")


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
        self.inner.timers.finished_runs[:] = observed

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
    return Snapshot(jobs=jobs, annotations=anns, pins=pins, credit=credit, clock=clock, classes=tuned)


class _Recording(DelayTimers):
    """Timers that note which classes' factors a forward run read: the factors of the other classes
    cannot have changed anything in that run (the run is deterministic), so candidates that differ
    from it only there have the same objective without running."""

    def __init__(self, timers: DelayTimers) -> None:
        super().__init__(timers.config)
        self.per_class = dict(timers.per_class)
        self.finished_runs = list(timers.finished_runs)
        self.read: set[str] = set()

    def scales(self, klass: str) -> tuple[float, float]:
        self.read.add(klass)
        return super().scales(klass)


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

    def run(self, timers: DelayTimers) -> tuple[float, int, set[str]]:
        """(objective, events, classes whose factors the run read) of one forward run with `timers`."""
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
        total, latest = 0.0, 0.0
        for js in fwd.jobs:
            if js.status is Status.done:
                end = js.end_time
            elif js.status is Status.running:
                done = js.work_done + js.speed * (h - js.last_update)
                end = h + max(0.0, js.work_total - done) / js.speed
            else:
                end = max(h, js.job.submit_time) + max(0.0, js.work_total - js.work_done)
            total += end - js.job.submit_time + snap.credit.get(js.job.id, 0.0)
            latest = max(latest, end)
        if not fwd.jobs:
            return 0.0, fwd.events, rec.read
        obj = latest if cfg.objective == "makespan" else total / len(fwd.jobs)
        return obj, fwd.events, rec.read


def evaluate(sim: SchedulerView, snap: Snapshot, timers: DelayTimers, cfg: TunerConfig) -> tuple[float, int]:
    """Objective of one forward run with `timers` (and the number of events it took)."""
    obj, events, _ = _Forward(sim, snap, cfg).run(timers)
    return obj, events


Key = tuple[float, ...]
"""A candidate: one multiplier of the default factors per tuned class (in `Snapshot.classes` order)."""


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
    choice: dict[str, float] = field(default_factory=dict)
    """The multipliers chosen at the last tune (the incumbent the local search starts from)."""
    _skip: int = 0
    _streak: int = 0
    _last_held: tuple[int, ...] = ()
    _until: dict[int, tuple[Annotation, float | None, float]] = field(default_factory=dict)
    """Job index -> (annotation, start of its locality wait, end of its rack timer) for the held check; cleared
    whenever the factors change."""
    _run_events: float = 0.0
    _per_job: float = 2.0
    _need: float = 0.0
    """Events of the last default forward run, and per snapshot job: the budget's cost estimates."""

    def __call__(self, sim: SchedulerView, now: float) -> bool:
        """One tick; True when the timers changed (the engine then runs a scheduling pass)."""
        self.ticks += 1
        if self._skip > 0:  # backing off after tunes that kept their choice
            self._skip -= 1
            return False
        t0 = time.perf_counter()
        try:
            # a tune needs at least the default and one candidate: first at the last run's size (or the
            # last refused snapshot's, so a refusal does not repeat the snapshot every tick), then at
            # this snapshot's size
            if not self._affordable(sim, max(2 * self._run_events, self._need)):
                return False
            held = self._held(sim, now)
            # none held, or the same held jobs as at the last tune: nothing (new) to tune on
            if not held or held == self._last_held:
                return False
            snap = snapshot(sim, now, self.timers, self.config)
            self._need = 2 * self._per_job * len(snap.jobs)
            if snap.classes and not self._affordable(sim, self._need):
                return False
            self._need = 0.0
            self._last_held = held
            before = self.timers.scales_by_class()
            self.tune(sim, now, snap)
            return self.timers.scales_by_class() != before
        finally:
            self.wall_s += time.perf_counter() - t0

    def _held(self, sim: SchedulerView, now: float) -> tuple[int, ...]:
        """The first `max_waiting` waiting jobs held back by a delay timer now (job indices)."""
        until = self._until
        held = []
        for n, (_, idx) in enumerate(sim.waiting):
            if n >= self.config.max_waiting:
                break
            js = sim.jobs[idx]
            got = until.get(idx)
            origin = self.timers.origin(js)
            if got is None or got[0] is not js.annotation or got[1] != origin:
                got = until[idx] = (js.annotation, origin, self._held_until(js))
            if now < got[2]:
                held.append(idx)
        return tuple(held)

    def _held_until(self, js: JobState) -> float:
        """When the job's rack timer runs out (it is held before that); -inf for `low` jobs and for
        jobs whose locality wait has not started (they wait for GPUs, not for a timer)."""
        t = self.timers
        origin = t.origin(js)
        klass = t.klass(js)
        if origin is None or klass == "low" or (klass == "unknown" and not self.config.tune_unknown):
            return -math.inf
        return origin + t.timers(js)[1]

    def _affordable(self, sim: SchedulerView, events: float) -> bool:
        """Do `events` more forward events fit in the event budget?"""
        budget = self.config.event_budget
        return budget is None or self.forward_events + events <= budget * sim.events

    def tune(self, sim: SchedulerView, now: float, snap: Snapshot | None = None
             ) -> dict[str, tuple[float, float]]:
        """Search the factors on a snapshot of `now` (taken here unless given), adopt and log them."""
        cfg = self.config
        if snap is None:
            snap = snapshot(sim, now, self.timers, cfg)
        classes = snap.classes
        if not classes:
            return dict(self.timers.per_class)
        base = self.timers.config
        fwd = _Forward(sim, snap, cfg)
        memo: dict[Key, tuple[float, set[str]]] = {}

        def objective(key: Key) -> float | None:
            """The key's objective: memoised, or equal to an earlier run's, or from a forward run if
            the budget allows it (None if not)."""
            got = memo.get(key)
            if got is None:
                for k0, (o0, read0) in memo.items():  # same run as an earlier one (see _Recording)
                    if all(a == b or c not in read0 for a, b, c in zip(key, k0, classes)):
                        got = memo[key] = (o0, read0)
                        break
            if got is None:
                if memo and not self._affordable(sim, self._run_events):
                    return None
                cand = self.timers.copy()  # the observed run times too, for jobs without an estimate
                cand.per_class = {c: (base.node_factor * m, base.rack_factor * m)
                                  for c, m in zip(classes, key)}
                obj, events, read = fwd.run(cand)
                self.forward_runs += 1
                self.forward_events += events
                if not memo:  # the default run: the size estimate for the budget
                    self._run_events = events
                    self._per_job = events / max(1, len(snap.jobs))
                got = memo[key] = (obj, read)
            return got[0]

        default: Key = tuple(1.0 for _ in classes)
        default_obj = objective(default)
        assert default_obj is not None
        best, best_obj = default, default_obj

        def better(key: Key) -> bool:
            nonlocal best, best_obj
            obj = objective(key)
            if obj is not None and obj < best_obj:
                best, best_obj = key, obj
                return True
            return False

        incumbent = tuple(self.choice.get(c, 1.0) for c in classes)
        better(incumbent)
        if cfg.search == "grid":
            for k in range(len(classes)):
                for m in cfg.multipliers:
                    better(best[:k] + (m,) + best[k + 1:])
        else:
            grid = sorted(set(cfg.multipliers))
            for k in range(len(classes)):
                # both neighbours of the current multiplier, then on in the direction that improved
                i = grid.index(best[k])
                step = 0
                for d in (-1, 1):
                    if 0 <= i + d < len(grid) and better(best[:k] + (grid[i + d],) + best[k + 1:]):
                        step = d
                        break
                i += step
                while step and 0 <= i + step < len(grid) and better(
                        best[:k] + (grid[i + step],) + best[k + 1:]):
                    i += step
        return self._adopt(sim, now, classes, best, best_obj, default_obj)

    def _adopt(self, sim: SchedulerView, now: float, classes: list[str], best: Key, best_obj: float,
               default_obj: float) -> dict[str, tuple[float, float]]:
        cfg, base = self.config, self.timers.config
        choice = dict(zip(classes, best))
        kept = choice == {c: self.choice.get(c, 1.0) for c in classes}
        self._streak = self._streak + 1 if kept else 0
        self._skip = min(2 ** self._streak, max(1, cfg.max_backoff)) - 1
        self.choice = choice
        self._until.clear()
        self.timers.per_class = {c: (base.node_factor * m, base.rack_factor * m) for c, m in choice.items()}
        self.tuned += 1
        self.last = {"time": now, "objective": best_obj, "default_objective": default_obj}
        for c in classes:
            node_f, rack_f = self.timers.scales(c)
            sim.log.append({"time": now, "event": "delay_tuner", "class": c, "W_node": node_f,
                            "W_rack": rack_f, "objective": best_obj, "default_objective": default_obj,
                            "objective_kind": cfg.objective})
        return dict(self.timers.per_class)


__all__ = ["DelayTuner", "Snapshot", "TunerConfig", "evaluate", "snapshot"]
