"""The discrete-event replay engine.

Events sit on a heap keyed by (time, sequence): same-time events run in the order they were
created, so a replay is deterministic for a seed. All events at one instant are applied, then one
scheduling pass runs (then a second one when the placement asks for it, `begin_relaxed_pass`; and,
when the scheduler moves running jobs, another round over the GPUs the moves left). A job's finish
time follows from its remaining work and its speed; when a start or stop changes the speed of jobs
that share links with it, their finish events are re-issued (stale ones are dropped by a version
check).

Jobs come as a `JobTable` (columns) or as `Job` records (put into one). Arrivals are read from the
table in order rather than pushed on the heap up front (an arrival goes before any other event at the
same time, as it would with the smallest sequence numbers); a job's `JobState` exists from its
arrival to its end (`sim.jobs`, `schedmate.sim.jobs.JobStates`).

The engine is split by what each part does, each layer a subclass of the one below (so a call from the
event loop is one method lookup, as in a single class): `sim.core` holds the state and the event heap,
`sim.transitions` what happens to a job, `sim.passes` the scheduling pass, and this module the event
loop and `Simulator`. The public names of those modules stay importable from here.
"""

from __future__ import annotations

import gc
import heapq
import math
from collections.abc import Callable

from schedmate.policies.base import PreemptionPolicy
from schedmate.sim.core import (
    ARRIVAL,
    FINISH,
    KEY_CHANGE,
    MONITOR,
    TICK,
    WAKE,
    ReplayConfig,
    SimulatorCore,
    Timeseries,
)
from schedmate.sim.passes import SchedulingPasses
from schedmate.sim.state import Status
from schedmate.sim.transitions import JobTransitions

GC_EVENTS = 100_000
"""Events between two collections of the young generations while a replay runs (see `Simulator.run`)."""


class Simulator(SchedulingPasses):
    """A replay of a job table on a cluster under a scheduler and an annotator (see the module doc)."""

    def run(self, progress: Callable[[int], None] | None = None, until: float | None = None) -> Simulator:
        """Replay to the end, or stop before the first event after `until` (for forward simulations
        that only need a horizon; the state is then as of the last event applied).

        Python's automatic garbage collection is off while the loop runs: the loop makes no reference
        cycles, and every full collection would walk the state of every job in the system (13 % of a
        300k-job FIFO replay). The young generations are still collected every `GC_EVENTS` events, in
        case a policy or an annotator makes cycles."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._run(progress, until)
        finally:
            if collecting:
                gc.enable()

    def _run(self, progress: Callable[[int], None] | None, until: float | None) -> Simulator:
        sched = self.scheduler
        sched.order.reset()
        sched.placement.reset(self.config.seed)
        self.annotator.reset(self.config.seed)
        self._skip_idle = self.idle_skipping_allowed()
        # with preemption, the shortcut counts on the head searching on every pass (`wants` always yes)
        pre = sched.preemption
        searching = pre is not None and sched.order.preemptive
        self._arrivals_only = (self._skip_idle and not sched.order.blocking
                               and (not searching or type(pre).wants is PreemptionPolicy.wants))
        submit = self.table.submit_time
        total = len(self.jobs)
        if sched.tick_s and total:
            self.push(submit.item(0) + sched.tick_s, TICK)
        heap = self._heap
        jobs = self.jobs
        last = -math.inf  # time of the last event other than a tick
        nxt = self._next_arrival
        arrival_t = submit.item(nxt) if nxt < total else math.inf
        while True:
            if heap and heap[0][0] < arrival_t:
                if until is not None and heap[0][0] > until:
                    break
                t, _, kind, idx, version = heapq.heappop(heap)
            elif nxt < total:  # an arrival goes first among events at its time
                t = arrival_t
                if until is not None and t > until:
                    break
                kind, idx = ARRIVAL, nxt
                nxt += 1
                self._next_arrival = nxt
                arrival_t = submit.item(nxt) if nxt < total else math.inf
            else:
                break
            self.now = t
            self.events += 1
            if not self.events % GC_EVENTS:
                gc.collect(1)
            if kind != TICK:
                last = t
            if kind == FINISH:
                js = jobs.live[idx]
                if js is not None and version == js.version and js.status is Status.running:
                    self._finish(js, t)
                    if progress is not None and self.ended % 1000 == 0:
                        progress(self.ended)
            elif kind == ARRIVAL:
                self._arrive(jobs.make(idx), t)
            elif kind == KEY_CHANGE:
                js = jobs.live[idx]
                if js is not None and version == js.key_version:
                    self._rekey(js, t)
            elif kind == WAKE:
                js = jobs.live[idx]
                if js is not None and js.status is Status.waiting and js.wake_at == t:
                    js.wake_at = None
                    self._dirty = True
            elif kind == MONITOR:
                js = jobs.live[idx]
                if js is not None and js.status is Status.running and version == js.extra.get("_run"):
                    self._advance(js, t)
                    update = self.annotator.on_running(self, js, t)
                    if update is not None and js.status is not Status.done:
                        self.update_annotation(js, update, t)
                    if js.status is Status.running and version == js.extra.get("_run"):
                        self.push(t + self.annotator.monitor_delay(js, t - js.last_start), MONITOR, idx, version)
            elif kind == TICK and self.ended < total and (heap or nxt < total):
                # With nothing else left to happen (no event, no arrival) the ticks stop too.
                # a pass only when the hook changed something (e.g. retuned timers): ticks alone must
                # not make decisions happen at other times than without them
                changed = sched.on_tick is not None and sched.on_tick(self, t) is not False
                self.push(t + (sched.tick_s or 0.0), TICK)
                if changed:
                    self._dirty = True
                elif t > last:
                    # nor may a tick that changed nothing run a pass still owed from earlier (e.g. after
                    # a preemption): that pass waits for the next event, as it would without ticks
                    continue
            if self._dirty and (heap[0][0] if heap else math.inf) > t and arrival_t > t:
                self._dirty = False
                self._schedule(t)
        if progress is not None:
            progress(self.ended)
        return self


__all__ = [
    "ARRIVAL", "FINISH", "GC_EVENTS", "KEY_CHANGE", "MONITOR", "TICK", "WAKE",
    "JobTransitions", "ReplayConfig", "SchedulingPasses", "Simulator", "SimulatorCore", "Timeseries",
]
