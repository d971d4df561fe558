"""The delay auto-tuner: a tick hook that searches the per-class timers on forward simulations.

Every `period_s` of simulated time (the `Scheduler.on_tick` hook) the tuner takes a snapshot
(`schedmate.policies.tuner.snapshot`) and **searches** the per-class timers (`DelayTimers.per_class`:
the W_node and W_rack factors, as multiples in `multipliers` of the configured default factors; W_rack
keeps its ratio to W_node) over the sensitivity classes present in the snapshot (`low` never waits, so
it is not tuned; `unknown` only with `tune_unknown`, since its forward runs would simulate a guess),
classes in a fixed order, and with `tune_guard` the starvation guard's `guard_factor` (as a multiple in
`guard_multipliers`, `DelayTimers.guard_scale`), on forward runs (`schedmate.policies.tuner.forward`)
scored by the operator's objective (`TunerConfig.objective`: mean or p99 JCT, makespan or a weighted
mix). `tune_guard` is off by default: on the 64-GPU testbed a 12-hour window judged the guard
myopically (with the event budget lifted, tuning it toward the mean made the whole replay's mean worse,
`eval/delay/README.md`). It evaluates the
default and the previous choice (the incumbent) and starts from the better; `search="local"` then
tries, per class, both grid neighbours of the current multiplier and moves on in a direction while it
keeps improving (a few runs per tune); `search="grid"` tries every multiplier for every class (one
sweep of coordinate descent). A candidate is kept only if strictly better, so the choice is never worse
than the default on the snapshot. Runs are memoised per candidate, and a candidate that differs from an
evaluated one only in classes whose factors that run never read (no job of the class consulted its
timer) has the same objective without a run (the run is deterministic).

It **logs** one dict per tuned class into `sim.log`: time, event `delay_tuner`, class, W_node, W_rack
(the chosen factors: a job's timer is factor x (slowdown(s) - 1) x predicted duration, see
`schedmate.policies.delay.timers`), objective, default_objective.

Cost control, deterministic (no wall clock in decisions): a tick tunes only when some of the first
`max_waiting` waiting jobs is held back by a timer (or, with `tune_guard`, a job holds the guard's
reservation) and that set differs from the last tune's; after a tune that kept the previous choice the next one waits 2, 4, ... periods (up to
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

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from schedmate.policies.delay import DelayTimers, StarvationGuard
from schedmate.policies.tuner.config import GUARD, TunerConfig, objective_value
from schedmate.policies.tuner.forward import _Forward
from schedmate.policies.tuner.snapshot import Snapshot, snapshot
from schedmate.records import Annotation
from schedmate.sim.state import JobState

if TYPE_CHECKING:
    from schedmate.sim.view import SchedulerView

Key = tuple[float, ...]
"""A candidate: one multiplier of the default factors per knob (in `Snapshot.classes` order)."""


@dataclass
class DelayTuner:
    """`on_tick` callable that retunes a `DelayTimers` in place (see the module doc)."""

    timers: DelayTimers
    config: TunerConfig = field(default_factory=TunerConfig)
    guard: StarvationGuard | None = None
    """The replay's starvation guard: a new holder is new to tune on, like newly held jobs."""
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
            before = self._knobs()
            self.tune(sim, now, snap)
            return self._knobs() != before
        finally:
            self.wall_s += time.perf_counter() - t0

    def _knobs(self) -> tuple[dict[str, tuple[float, float]], float]:
        return self.timers.scales_by_class(), self.timers.guard_scale

    def _held(self, sim: SchedulerView, now: float) -> tuple[int, ...]:
        """The first `max_waiting` waiting jobs held back by a delay timer now, and the starvation
        guard's holder when its factor is tuned (job indices)."""
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
        holder = self.guard.holder if self.guard is not None and self.config.tune_guard else None
        if holder is not None:
            held.append(-1 - holder.idx)  # told apart from the timer-held jobs
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
        fwd = _Forward(sim, snap, cfg)
        memo: dict[Key, tuple[float, set[str]]] = {}
        reference: dict[str, float] = {}
        """The default knobs' metrics on this window (what a mixed objective is relative to)."""

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
                self._set(cand, classes, key)
                metrics, events, read = fwd.run(cand)
                self.forward_runs += 1
                self.forward_events += events
                if not memo:  # the default run: the size estimate for the budget, the reference
                    self._run_events = events
                    self._per_job = events / max(1, len(snap.jobs))
                    reference.update(metrics)
                got = memo[key] = (objective_value(cfg.terms, metrics, reference), read)
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
        grids = [sorted(set(cfg.guard_multipliers if c == GUARD else cfg.multipliers)) for c in classes]
        if cfg.search == "grid":
            for k in range(len(classes)):
                for m in grids[k]:
                    better(best[:k] + (m,) + best[k + 1:])
        else:
            for k, grid in enumerate(grids):
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

    @staticmethod
    def _set(timers: DelayTimers, classes: list[str], key: Key) -> None:
        """Give `timers` the knobs of `key`: multiples of the configured factors."""
        base = timers.config
        timers.per_class = {c: (base.node_factor * m, base.rack_factor * m)
                            for c, m in zip(classes, key) if c != GUARD}
        timers.guard_scale = dict(zip(classes, key)).get(GUARD, 1.0)

    def _adopt(self, sim: SchedulerView, now: float, classes: list[str], best: Key, best_obj: float,
               default_obj: float) -> dict[str, tuple[float, float]]:
        cfg = self.config
        choice = dict(zip(classes, best))
        kept = choice == {c: self.choice.get(c, 1.0) for c in classes}
        self._streak = self._streak + 1 if kept else 0
        self._skip = min(2 ** self._streak, max(1, cfg.max_backoff)) - 1
        self.choice = choice
        self._until.clear()
        self._set(self.timers, classes, best)
        self.tuned += 1
        self.last = {"time": now, "objective": best_obj, "default_objective": default_obj}
        for c in classes:
            entry = {"time": now, "event": "delay_tuner", "class": c}
            if c == GUARD:
                entry["guard_factor"] = self.timers.guard_factor()
            else:
                entry["W_node"], entry["W_rack"] = self.timers.scales(c)
            sim.log.append({**entry, "objective": best_obj, "default_objective": default_obj,
                            "objective_kind": cfg.objective})
        return dict(self.timers.per_class)


__all__ = ["DelayTuner"]
