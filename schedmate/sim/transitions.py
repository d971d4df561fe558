"""What happens to a job: arrival, queueing and re-keying, start, stop, preemption, migration, finish and
termination, with the bookkeeping each one owes (the waiting queue and its per-demand lists, the
running indexes, the cluster's GPUs, the network's links and the speeds and finish events of the jobs
sharing them). `JobTransitions` adds these to `SimulatorCore`; the scheduling pass (`sim.passes`) and
the event loop (`sim.engine`) call them.
"""

from __future__ import annotations

import math
from typing import Any

from sortedcontainers import SortedList

from schedmate.policies.estimates import predicted_remaining
from schedmate.sim.core import FINISH, KEY_CHANGE, MONITOR, SimulatorCore
from schedmate.sim.state import JobState, Placement, Status


class JobTransitions(SimulatorCore):
    """Job transitions on the replay state (see the module doc)."""

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
        if self._arrivals_only:
            self._queued_since.append(entry)
        g = js.num_gpus
        if g < self._arrived_min:
            self._arrived_min = g
        self.cluster.queued_gpus += g
        by_gpus = self.waiting_by_gpus
        if by_gpus is not None:
            lst = by_gpus.get(g)
            if lst is None:
                lst = by_gpus[g] = SortedList()
            lst.add(entry)
        self._announce_key_change(js, t)

    def _announce_key_change(self, js: JobState, t: float) -> None:
        js.key_version += 1
        if not self._keys_move:  # the order keeps the base class's answer: keys never change on their own
            return
        nxt = self.scheduler.order.next_key_change(js, t)
        if nxt is not None and nxt > t and math.isfinite(nxt):
            self.push(nxt, KEY_CHANGE, js.idx, js.key_version)
        if js.class_entry is not None:
            # The class just computed holds until the announced change (the order's contract; the re-key
            # at that time runs before any pass at it). Trust it only up to a margin before then, far wider
            # than the rounding of the order's own arithmetic (Tiresias: service in GPU-seconds against a
            # threshold, errors of nanoseconds), so that reading it and computing it never differ.
            if nxt is None or nxt == math.inf:
                js.class_until = math.inf
            elif nxt > t:
                js.class_until = nxt - 1e-6 * (1.0 + abs(nxt))
            else:
                js.class_until = -math.inf

    def queue_by_gpus(self) -> dict[int, SortedList]:
        """`waiting_by_gpus`, built from the queue the first time it is asked for."""
        by_gpus = self.waiting_by_gpus
        if by_gpus is None:
            live = self.jobs.live
            split: dict[int, list] = {}
            for entry in self.waiting:
                split.setdefault(live[entry[1]].num_gpus, []).append(entry)
            by_gpus = self.waiting_by_gpus = {g: SortedList(lst) for g, lst in split.items()}
        return by_gpus

    def _dequeue(self, js: JobState) -> None:
        entry = js.queue_entry
        js.queue_entry = None
        self._changes += 1
        self.waiting.remove(entry)
        g = js.num_gpus
        self.cluster.queued_gpus -= g
        by_gpus = self.waiting_by_gpus
        if by_gpus is not None:
            lst = by_gpus[g]
            lst.remove(entry)
            if not lst:
                del by_gpus[g]

    def _rekey(self, js: JobState, t: float) -> None:
        if js.status is Status.waiting:
            self._dequeue(js)
            self._enqueue(js, t)
        elif js.status is Status.running:
            old = js.class_entry
            if old is not None:
                self.running_by_class.remove(old)
                js.class_entry = None
            self._add_running_class(js, t)
            if self._track_ends:
                if js.end_entry is not None:
                    self.running_by_end.remove(js.end_entry)
                    js.end_entry = None
                self._add_running_end(js, t)
            self._announce_key_change(js, t)
            self._running_rekeyed(js, old, t)
        self._dirty = True

    def _running_rekeyed(self, js: JobState, old: tuple | None, t: float) -> None:
        """A running job's class (or annotation) changed: does the last idle pass's proof still hold
        (`sim.passes`)? A pass reads running jobs only through the head's preemption search (and EASY
        reservations, whose predicted ends this may have moved: then no). The search visits exactly the
        running jobs of a worse class than the head's and skips those it finds ineligible: a job of no
        worse class before and after changes nothing, nor does one the policy cannot choose yet (until
        then). Otherwise the proof goes."""
        idle = self._idle
        if idle is None:
            return
        sched = self.scheduler
        pre = sched.preemption
        if pre is not None and not (sched.order.preemptive or pre.any_order):
            pre = None
        if self._track_ends:
            self._changes += 1
            return
        if pre is None:
            return
        changes, head, floor, until, head_class = idle
        new = js.class_entry
        if old is not None and new is not None and old[0] <= head_class and new[0] <= head_class:
            return
        ready = pre.ineligible_until(js, t)
        if ready > t:
            if ready < until:
                self._idle = (changes, head, floor, ready, head_class)
            return
        self._changes += 1

    def update_annotation(self, js: JobState, annotation: Any, t: float) -> None:
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
        if len(placement) == 1:  # one node, one rack (what `span` says)
            js.nodes_spanned = js.racks_spanned = 1
            if js.max_nodes < 1:
                js.max_nodes = js.max_racks = 1  # both are 0 before a first start, and only grow
        else:
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
        if self._notes_runs:
            self.scheduler.placement.note_started(js, t)
        if js.nodes_spanned > 1:
            affected = self.network.attach(js)
            js.speed = self.network.speed(js)
            self._reschedule_finish(js, t)
            self._respeed(affected - {js}, t)
        else:  # on one node: no traffic on any link, full speed (what attach and speed would say)
            self._reschedule_finish(js, t)
        if self._preemptive:
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
        if r is None:
            return
        entry = (t + r, js.idx)
        js.end_entry = entry
        self.running_by_end.add(entry)

    def _stop(self, js: JobState, t: float) -> None:
        self._changes += 1
        self._advance(js, t)
        js.executed_s += t - js.last_start
        if self._notes_runs:
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
