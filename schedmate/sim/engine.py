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
"""

from __future__ import annotations

import gc
import heapq
import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sortedcontainers import SortedList

from schedmate.jobtable import JobTable
from schedmate.policies.base import Scheduler, Wait
from schedmate.policies.estimates import predicted_remaining
from schedmate.records import Annotation, ClusterSpec, Job
from schedmate.sim.jobs import JobStates
from schedmate.sim.network import NetworkModel
from schedmate.sim.queue import QueueScan
from schedmate.sim.state import ClusterState, JobState, Placement, Status

if TYPE_CHECKING:
    from schedmate.annotators.base import Annotator

ARRIVAL, FINISH, KEY_CHANGE, WAKE, TICK, MONITOR = 0, 1, 2, 3, 4, 5
GC_EVENTS = 100_000
"""Events between two collections of the young generations while a replay runs (see `Simulator.run`)."""


@dataclass
class ReplayConfig:
    seed: int = 0
    restart_cost_s: float = 60.0
    """Consolidated-seconds of progress a preempted job loses (checkpoint restore and lost steps)."""
    record_timeseries: bool = True
    audit: bool = False
    """Keep every start/stop with its placement in `Simulator.audit` (tests check invariants on it)."""


@dataclass
class Timeseries:
    t: array = field(default_factory=lambda: array("d"))
    queued: array = field(default_factory=lambda: array("l"))
    busy_gpus: array = field(default_factory=lambda: array("l"))


class Simulator:
    def __init__(
        self,
        jobs: Iterable[Job] | JobTable,
        cluster: ClusterSpec,
        scheduler: Scheduler,
        annotator: Annotator,
        config: ReplayConfig | None = None,
        on_annotation: Callable[[Simulator, JobState, Any, float], None] | None = None,
    ) -> None:
        self.config = config or ReplayConfig()
        self.on_annotation = on_annotation
        """Adapter hook called after every annotation update (see `adapters/`)."""
        self.spec = cluster
        self.cluster = ClusterState(cluster)
        self.network = NetworkModel(self.cluster, cluster.network)
        self.scheduler = scheduler
        self.annotator = annotator
        table = (jobs if isinstance(jobs, JobTable) else JobTable.from_jobs(jobs)).sorted()
        too_big = np.flatnonzero(table.num_gpus > self.cluster.total_gpus)
        if len(too_big):
            raise ValueError(
                f"{len(too_big)} job(s) ask for more GPUs than the cluster has ({self.cluster.total_gpus}), "
                f"e.g. {[str(table.id[i]) for i in too_big[:3]]}: use a bigger --cluster or filter the trace"
            )
        self.table = table
        self.jobs = JobStates(table, Annotation(job_id=""))
        self.now = 0.0
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._next_arrival = 0
        """Index of the next job to arrive (arrivals are read from the table, not the heap)."""
        self._seq = 0
        self.waiting: SortedList = SortedList()
        self.running: set[JobState] = set()
        self.running_by_class: SortedList = SortedList()
        self.waiting_by_gpus: dict[int, SortedList] = {}
        """The waiting queue split by GPU demand, same keys: a pass skips a whole demand at once."""
        self.running_by_end: SortedList = SortedList()
        """(predicted end, idx) of running jobs; a running job's predicted end does not move. Kept only
        for blocking orders with backfilling, the only passes that read it."""
        self._track_ends = scheduler.order.blocking and scheduler.backfill
        self.events = 0
        self.passes = 0
        self.timeseries = Timeseries()
        self.log: list[dict] = []
        """Policy decisions worth keeping (e.g. tuned timers over time)."""
        self._dirty = False
        self.ended = 0
        """Jobs that have ended, however (finish, failure signal, zero length)."""
        self.audit: list[tuple[float, str, int, Placement]] = []

    # ------------------------------------------------------------------ event plumbing
    def push(self, t: float, kind: int, idx: int = -1, version: int = 0) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, idx, version))

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

    # ------------------------------------------------------------------ job transitions
    def _arrive(self, js: JobState, t: float) -> None:
        js.annotation = self.annotator.on_submit(js.job, t)
        js.status = Status.waiting
        js.eligible_since = t
        if js.work_total <= 0:  # zero-length jobs end on arrival without using GPUs
            js.status = Status.done
            js.end_time = t
            js.first_start = t
            self.ended += 1
            self.annotator.on_finish(js.job, t, 0.0)
            self.jobs.retire(js)
            return
        self._enqueue(js, t)
        self._dirty = True

    def _enqueue(self, js: JobState, t: float) -> None:
        key = self.scheduler.order.key(js, t)
        entry = (key, js.idx)
        js.queue_entry = entry
        self.waiting.add(entry)
        g = js.num_gpus
        self.cluster.queued_gpus += g
        lst = self.waiting_by_gpus.get(g)
        if lst is None:
            lst = self.waiting_by_gpus[g] = SortedList()
        lst.add(entry)
        self._announce_key_change(js, t)

    def _announce_key_change(self, js: JobState, t: float) -> None:
        js.key_version += 1
        nxt = self.scheduler.order.next_key_change(js, t)
        if nxt is not None and nxt > t and math.isfinite(nxt):
            self.push(nxt, KEY_CHANGE, js.idx, js.key_version)

    def _dequeue(self, js: JobState) -> None:
        entry = js.queue_entry
        js.queue_entry = None
        self.waiting.remove(entry)
        g = js.num_gpus
        self.cluster.queued_gpus -= g
        lst = self.waiting_by_gpus[g]
        lst.remove(entry)
        if not lst:
            del self.waiting_by_gpus[g]

    def _rekey(self, js: JobState, t: float) -> None:
        if js.status is Status.waiting:
            self._dequeue(js)
            self._enqueue(js, t)
        elif js.status is Status.running:
            if js.class_entry is not None:
                self.running_by_class.remove(js.class_entry)
                js.class_entry = None
            self._add_running_class(js, t)
            if js.end_entry is not None:
                self.running_by_end.remove(js.end_entry)
                self._add_running_end(js, t)
            self._announce_key_change(js, t)
        self._dirty = True

    def update_annotation(self, js: JobState, annotation, t: float) -> None:
        """Replace a job's annotation (e.g. a log-monitor update), re-sort it, and let the adapter act
        on it (e.g. end a job whose log shows it failed)."""
        js.annotation = annotation
        self._rekey(js, t)
        if self.on_annotation is not None:
            self.on_annotation(self, js, annotation, t)

    def _add_running_class(self, js: JobState, t: float) -> None:
        if not self.scheduler.order.preemptive:
            return
        entry = (self.scheduler.order.preemption_class(js, t), js.last_start, js.idx)
        js.class_entry = entry
        self.running_by_class.add(entry)

    def _advance(self, js: JobState, t: float) -> None:
        dt = t - js.last_update
        if dt > 0:
            js.work_done += js.speed * dt
            js.comm_lost_gpu_s += js.num_gpus * (1.0 - js.speed) * dt
            js.last_update = t

    def _reschedule_finish(self, js: JobState, t: float) -> None:
        js.version += 1
        remaining = max(0.0, js.work_total - js.work_done)
        self.push(t + remaining / js.speed, FINISH, js.idx, js.version)

    def _respeed(self, affected: set[JobState], t: float) -> None:
        if not affected:
            return
        for other in sorted(affected, key=lambda j: j.idx):
            if other.status is not Status.running:
                continue
            self._advance(other, t)
            new = self.network.speed(other)
            if new != other.speed:
                other.speed = new
                self._reschedule_finish(other, t)

    def start(self, js: JobState, placement: Placement, t: float) -> None:
        self.cluster.allocate(placement)
        if self.config.audit:
            self.audit.append((t, "start", js.idx, placement))
        self._dequeue(js)
        js.placement = placement
        js.nodes_spanned, js.racks_spanned = self.cluster.span(placement)
        js.max_nodes = max(js.max_nodes, js.nodes_spanned)
        js.max_racks = max(js.max_racks, js.racks_spanned)
        js.status = Status.running
        js.queued_s += t - js.eligible_since
        if js.first_start is None:
            js.first_start = t
        js.last_start = t
        js.last_update = t
        js.speed = 1.0
        self.running.add(js)
        self.scheduler.placement.note_started(js, t)
        if js.nodes_spanned > 1:
            affected = self.network.attach(js)
            js.speed = self.network.speed(js)
            self._reschedule_finish(js, t)
            self._respeed(affected - {js}, t)
        else:  # on one node: no traffic on any link, full speed (what attach and speed would say)
            self._reschedule_finish(js, t)
        self._add_running_class(js, t)
        if self._track_ends:
            self._add_running_end(js, t)
        self._announce_key_change(js, t)
        interval = self.annotator.monitor_interval_s
        if interval:
            run = js.extra["_run"] = js.extra.get("_run", 0) + 1  # identifies this attempt
            self.push(t + self.annotator.monitor_delay(js, 0.0), MONITOR, js.idx, run)

    def _add_running_end(self, js: JobState, t: float) -> None:
        r = predicted_remaining(js, t)
        entry = (math.inf if r is None else t + r, js.idx)
        js.end_entry = entry
        self.running_by_end.add(entry)

    def _stop(self, js: JobState, t: float) -> None:
        self._advance(js, t)
        js.executed_s += t - js.last_start
        self.scheduler.placement.note_stopped(js, t)
        self.cluster.release(js.placement)
        if self.config.audit:
            self.audit.append((t, "stop", js.idx, js.placement))
        self.running.discard(js)
        if js.class_entry is not None:
            self.running_by_class.remove(js.class_entry)
            js.class_entry = None
        if js.end_entry is not None:
            self.running_by_end.remove(js.end_entry)
            js.end_entry = None
        affected = self.network.detach(js) if js.nodes_spanned > 1 else None  # one node: no links held
        js.placement = ()
        js.version += 1
        js.key_version += 1
        if affected:
            self._respeed(affected, t)

    def preempt(self, js: JobState, t: float) -> None:
        self._stop(js, t)
        js.work_done = max(0.0, js.work_done - self.config.restart_cost_s)
        js.status = Status.waiting
        js.eligible_since = t
        js.preemptions += 1
        js.last_preempted = t
        self._enqueue(js, t)
        self._dirty = True

    def migrate(self, js: JobState, placement: Placement, t: float) -> None:
        """Move a running job onto `placement` (free GPUs) at once; it loses the restart cost of
        progress, as a preempted job does, but does not queue."""
        self._stop(js, t)
        js.work_done = max(0.0, js.work_done - self.config.restart_cost_s)
        js.migrations += 1
        js.status = Status.waiting
        js.eligible_since = t
        self._enqueue(js, t)  # start() takes it straight out again: no queueing, no pass in between
        self.start(js, placement, t)

    def _finish(self, js: JobState, t: float) -> None:
        self._stop(js, t)
        js.work_done = js.work_total
        js.status = Status.done
        js.end_time = t
        self.ended += 1
        self.annotator.on_finish(js.job, t, js.executed_s)
        self.scheduler.placement.note_finished(js, t)
        self.jobs.retire(js)
        self._dirty = True

    def terminate(self, js: JobState, t: float, reason: str = "signal") -> None:
        """End a running or waiting job now (e.g. a failure signal said it is dead)."""
        if js.status is Status.running:
            self._stop(js, t)
        elif js.status is Status.waiting:
            self._dequeue(js)
            js.queued_s += t - js.eligible_since
        else:
            return
        js.status = Status.done
        js.end_time = t
        js.ended_by = reason
        self.ended += 1
        if js.first_start is None:
            js.first_start = t
        self.annotator.on_finish(js.job, t, js.executed_s)
        self.scheduler.placement.note_finished(js, t)
        self.jobs.retire(js)
        self._dirty = True

    # ------------------------------------------------------------------ the scheduling pass
    def _schedule(self, t: float) -> None:
        self._pass(t)
        self._relaxed_pass(t)
        migration = self.scheduler.migration
        if migration is None:
            return
        # moves free the spread placements they leave: the queue gets another pass on them at once
        for _ in range(len(self.running)):
            running = sorted(self.running, key=lambda j: j.idx)
            moves = migration.moves(running, self.cluster, self.scheduler.order, t, self.config.restart_cost_s)
            if not moves:
                break
            for js, where in moves:
                self.migrate(js, where, t)
            self._pass(t)
            self._relaxed_pass(t)

    def _relaxed_pass(self, t: float) -> None:
        """A second pass for placements the policy makes only on GPUs the first pass left (see
        `PlacementPolicy.begin_relaxed_pass`)."""
        placement = self.scheduler.placement
        if placement.begin_relaxed_pass():
            try:
                self._pass(t)
            finally:
                placement.end_relaxed_pass()

    def _pass(self, t: float) -> None:
        self.passes += 1
        order = self.scheduler.order
        placement = self.scheduler.placement
        preemption = self.scheduler.preemption
        if preemption is not None and not (order.preemptive or preemption.any_order):
            preemption = None
        upgrade = preemption is not None and preemption.any_order
        note_unplaced = placement.note_unplaced if placement.tracks_unplaced else None
        cluster = self.cluster
        jobs = self.jobs
        reservation: tuple[float, int] | None = None  # (shadow time, spare GPUs) for EASY backfill
        may_preempt = preemption is not None
        smallest_misfit = 1 << 30  # GPUs of the smallest job that found no room in this pass
        monotone = placement.monotone
        backfill_budget = self.scheduler.backfill_depth
        scan = QueueScan(self.waiting_by_gpus, self.waiting)
        # a job too big for what is left is only skipped (with its whole demand) when no preemption, no
        # blocking head and no placement note is at stake: the scan can then skip such demands itself
        skip_hopeless = not order.blocking and note_unplaced is None
        while True:
            if cluster.total_free == 0 and not may_preempt:
                break
            if skip_hopeless and not may_preempt:
                free = cluster.total_free
                scan.limit = smallest_misfit - 1 if monotone and smallest_misfit <= free else free
            entry = scan.next()
            if entry is None:
                break
            js = jobs.live[entry[1]]
            g = js.num_gpus
            hopeless = g > cluster.total_free or (monotone and g >= smallest_misfit)
            if hopeless and not may_preempt:
                # GPUs only get scarcer during a pass: no job of this size can start any more.
                scan.drop(g)
                if not order.blocking or reservation is not None:
                    if note_unplaced is not None:  # its first job still counts as unplaced (e.g. to age a reservation)
                        note_unplaced(js, cluster, t)
                    continue
            if reservation is not None:
                backfill_budget -= 1
                if backfill_budget < 0:
                    break
                if hopeless or not self._backfill_ok(js, t, reservation):
                    continue
            if hopeless:
                decision = None
            else:
                decision = placement.place(js, cluster, t)
                if decision is None and g < smallest_misfit:
                    smallest_misfit = g
            if decision is None and note_unplaced is not None:
                note_unplaced(js, cluster, t)
            if isinstance(decision, tuple):
                if upgrade and may_preempt and preemption.wants(js, t):
                    found = preemption.upgrade(js, decision, self._running_for(preemption), cluster, placement, order, t)
                    if found is not None:
                        victims, decision = found
                        for v in victims:
                            self.preempt(v, t)
                        self.start(js, decision, t)
                        if reservation is not None:
                            reservation = self._consume_reservation(js, t, reservation)
                        smallest_misfit = 1 << 30
                        scan.restart(None)  # victims re-entered the queue: rescan from the top
                        continue
                self.start(js, decision, t)
                if reservation is not None:
                    reservation = self._consume_reservation(js, t, reservation)
                continue
            if isinstance(decision, Wait):
                if js.wake_at != decision.until and decision.until > t:
                    js.wake_at = decision.until
                    self.push(decision.until, WAKE, js.idx)
                # a job told to wait may still preempt (e.g. a delay timer that ran out at one level
                # while the next level's has not): its own priority and the victims' bound it
                if not (may_preempt and preemption.any_order and preemption.wants(js, t)):
                    continue
            if may_preempt and preemption.wants(js, t):
                running = self._running_for(preemption)
                found = preemption.victims(js, running, cluster, placement, order, t)
                if found is not None:
                    victims, where = found
                    for v in victims:
                        self.preempt(v, t)
                    self.start(js, where, t)
                    smallest_misfit = 1 << 30  # preemption freed GPUs
                    # Victims are of a worse class, so they re-entered the queue behind this entry
                    # (orders keep keys consistent with classes): carry on from here.
                    scan.restart(entry)
                    continue
                may_preempt = False  # worse jobs behind this one cannot preempt either
            if order.blocking and reservation is None:
                if not self.scheduler.backfill:
                    break
                reservation = self._reserve(js, t)
                if reservation is None:
                    break
        if self.config.record_timeseries:
            ts = self.timeseries
            ts.t.append(t)
            ts.queued.append(len(self.waiting))
            ts.busy_gpus.append(cluster.total_gpus - cluster.total_free)

    def _running_for(self, preemption) -> Iterable[JobState]:
        if preemption.any_order:  # the policy ranks victims itself; index order keeps it deterministic
            return sorted(self.running, key=lambda j: j.idx)
        return self._running_worst_first()

    def _running_worst_first(self) -> Iterator[JobState]:
        # running_by_class is ascending (best class first); lazy, since victims are usually few
        live = self.jobs.live
        return (live[e[2]] for e in reversed(self.running_by_class))

    def _reserve(self, head: JobState, t: float) -> tuple[float, int] | None:
        """EASY: when will the blocked head fit, and how many GPUs are spare then?"""
        free = self.cluster.total_free
        need = head.num_gpus
        live = self.jobs.live
        for end, idx in self.running_by_end:
            if end == math.inf:
                return None  # without estimates there is no safe backfill
            free += live[idx].num_gpus
            if free >= need:
                return max(end, t), free - need
        return None

    def _backfill_ok(self, js: JobState, t: float, reservation: tuple[float, int]) -> bool:
        shadow, spare = reservation
        r = predicted_remaining(js, t)
        return (r is not None and t + r <= shadow) or js.num_gpus <= spare

    def _consume_reservation(self, js: JobState, t: float, reservation: tuple[float, int]) -> tuple[float, int]:
        shadow, spare = reservation
        r = predicted_remaining(js, t)
        if r is not None and t + r <= shadow:
            return reservation
        return shadow, spare - js.num_gpus
