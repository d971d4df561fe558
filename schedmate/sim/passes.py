"""The scheduling pass: one walk over the waiting queue that starts, preempts for and backfills jobs
(EASY reservations behind a blocked head), the relaxed second pass some placements ask for, and the
migration rounds after them. `SchedulingPasses` adds these to `JobTransitions`; the event loop
(`sim.engine`) runs `_schedule` once per instant at which something changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from schedmate.policies.base import PreemptionPolicy, Wait
from schedmate.policies.estimates import predicted_remaining
from schedmate.sim.core import WAKE
from schedmate.sim.queue import QueueScan
from schedmate.sim.state import JobState
from schedmate.sim.transitions import JobTransitions


class SchedulingPasses(JobTransitions):
    """The scheduling pass on top of the job transitions (see the module doc)."""

    def _schedule(self, t: float) -> None:
        idle = self._idle
        if idle is not None:
            if self._idle_holds(idle, t):
                self.passes += 1
                self.passes_skipped += 1
                if self._idle_after_preemption:
                    self.passes_skipped_after_preemption += 1
                self._arrived_min = 1 << 30
                self._queued_since.clear()
                self._record(t)
                return
            if self._arrivals_only and self._try_newly_queued(idle, t):
                return
            self._idle = None
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

    def _idle_holds(self, idle: tuple, t: float) -> bool:
        """Would a pass now do nothing? `idle` is what the last pass proved at its end, when it preempted
        nothing: (`_changes` then, the queue's head, a GPU demand `floor`, a time `until`, the head's class).
        That pass left every waiting job either tried and unplaced or skipped as too big, on free GPUs that
        were, node by node, at least those at its end (it only started jobs), so with a `stateless`
        placement each would fail again on them. A pass now does nothing when (1) no job started, stopped,
        left the queue or was re-keyed since (`_changes`; a running job's class changes only at announced
        key changes, which re-key it; see `_running_rekeyed` for those that cannot matter), so the free
        GPUs, the running jobs and the waiting jobs' keys are the same; (2) the head is the same job, and
        the preemption search it made (only the head's: a failure ends preemption for the pass) still
        fails (`PreemptionPolicy.failure_holds_until` and the jobs started after it, `until`); (3) every
        job queued since asks for at least `floor` GPUs: no job that big can be placed on these free GPUs
        (`floor` is 0 behind a blocked head without a reservation, where no job behind the head is looked
        at)."""
        changes, head, floor, until, _ = idle
        if changes != self._changes or t >= until or self._arrived_min < floor:
            return False
        waiting = self.waiting
        return (waiting[0] if waiting else None) is head

    def _try_newly_queued(self, idle: tuple, t: float) -> bool:
        """A pass that tries only the jobs queued since the last pass, when that pass proved every other
        waiting job unplaceable and nothing but arrivals happened since (`_idle_holds` but for the arrivals;
        only for non-blocking orders, `_arrivals_only`). A full walk would give the same
        starts: in key order it tries old jobs, which fail again on these free GPUs (the placement is
        stateless, and GPUs only get fewer as the walk starts jobs), and the new ones in between, each
        either provably failing (too big for the free GPUs, or at least the proof's `floor`: then the walk
        skips or tries it in vain) or tried on the same free GPUs as here. The proof it leaves is a valid
        one for the next pass (the old jobs' `floor`, lowered by the free GPUs left and, the placement being
        monotone, by the smallest new job that failed), if not always the one a full walk would leave.

        With preemption by class, only when every new job comes after the proof's head: a full walk then
        begins with the head, which fails to be placed and to find victims as before (the proof's `until`,
        lowered for the jobs started here as a pass lowers it), and no job after a failed search searches."""
        changes, head, floor, until, head_class = idle
        if changes != self._changes or t >= until:
            return False
        preemption = self.scheduler.preemption
        preemptive = preemption is not None and self.scheduler.order.preemptive
        queued = sorted(self._queued_since)  # still waiting, with these entries: nothing left the queue
        if preemptive and (head is None or (queued and queued[0] < head)):
            # With preemption a full walk starts at the head, whose search fails again (the proof's `until`),
            # and no job after it searches: the same as here only while the head is the same job.
            return False
        self.passes += 1
        self.passes_incremental += 1
        self._arrived_min = 1 << 30
        cluster = self.cluster
        placement = self.scheduler.placement
        monotone = placement.monotone
        live = self.jobs.live
        self._queued_since.clear()
        for entry in queued:
            js = live[entry[1]]
            g = js.num_gpus
            if g >= floor or g > cluster.total_free:
                continue
            decision = placement.place(js, cluster, t)
            if isinstance(decision, tuple):
                self.start(js, decision, t)
                if preemptive:  # the head's failed search did not see this job run (as in `_pass`)
                    ready = preemption.ineligible_until(js, t)
                    until = ready if t < ready < until else (until if ready > t else -math.inf)
            elif monotone:
                floor = g  # g < floor here: no job this big or bigger fits any more
        if cluster.total_free < floor:
            floor = cluster.total_free + 1
        waiting = self.waiting
        self._idle = (self._changes, waiting[0] if waiting else None, floor, until, head_class)
        self._idle_after_preemption = False
        self._record(t)
        return True

    def _note_idle(self, blocked: bool, searched: tuple | None, smallest_misfit: int, until: float) -> None:
        """Keep what a pass that preempted nothing proved, for `_idle_holds` (only where skipping is allowed:
        a `stateless` placement, no migration, no tick hook, preemption that ranks by class). `searched`:
        the queue entry whose preemption search failed (None: no search failed)."""
        if not self._skip_idle:
            return
        sched = self.scheduler
        placement = sched.placement
        pre = sched.preemption
        if blocked:
            floor = 0
        else:
            # every waiting job that fits under the free GPUs was tried (the scan's limit follows the
            # smallest misfit), so a job fails if it asks for more than are free or, the placement being
            # monotone, for at least the smallest demand that failed (same demand: same answer, stateless)
            floor = self.cluster.total_free + 1
            if placement.monotone and smallest_misfit < floor:
                floor = smallest_misfit
        waiting = self.waiting
        head = waiting[0] if waiting else None
        head_class = math.inf
        if pre is not None and sched.order.preemptive:
            # only the head's failed search ends preemption for a pass in the same way every time (a job
            # that could still have preempted was never offered, or a later job searched: promise nothing)
            if head is None or searched is not head:
                return
            # the class that search compared with (a running job of no worse class is never a candidate);
            # asked again at the same time, the order answers the same
            head_class = sched.order.preemption_class(self.jobs.live[head[1]], self.now)
        self._idle = (self._changes, head, floor, until, head_class)

    def _settled_after(self, preemptor: tuple | None, upgrade: bool) -> bool:
        """After a pass that preempted: may it still prove itself idle (`_note_idle`)? Yes when every job still
        waiting comes after the entry of the last job that preempted (`preemptor`; victims re-enter the queue
        behind it, their class being worse). The walk went on from that entry over everything behind it, and
        from then on GPUs only got fewer (jobs only started), so each of those jobs was tried, skipped as too
        big or searched for victims on free GPUs that were, node by node, at least those at the pass's end:
        what a pass that preempted nothing proves of every waiting job. (Jobs before that entry were tried on
        GPUs the preemption may have added to, which is why none may be left waiting.) The pass owed after
        the preemption is then skipped like any idle pass."""
        if upgrade or preemptor is None or not self._skip_idle:
            return False
        waiting = self.waiting
        return not waiting or waiting[0] > preemptor

    def idle_skipping_allowed(self) -> bool:
        """Whether this replay may skip idle passes (see `_note_idle`); the event loop asks once."""
        sched = self.scheduler
        placement = sched.placement
        pre = sched.preemption
        return (self.config.skip_idle_passes and placement.stateless and sched.migration is None
                and sched.on_tick is None and not placement.tracks_unplaced and (pre is None or not pre.any_order))

    def _record(self, t: float) -> None:
        if self.config.record_timeseries:
            ts = self.timeseries
            ts.t.append(t)
            ts.queued.append(len(self.waiting))
            ts.busy_gpus.append(self.cluster.total_gpus - self.cluster.total_free)

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
        self._queued_since.clear()
        preempted = False  # GPUs only got fewer during this pass while no job was preempted
        last_preemptor = None  # the queue entry of the job the last preemption started
        self._arrived_min = 1 << 30
        blocked = False  # the walk ended at a blocked head without a reservation
        until = math.inf  # the failed preemption search holds until then
        searched = None  # the entry whose preemption search failed
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
        scan = QueueScan(self.queue_by_gpus, self.waiting, jobs.live)
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
                        preempted = True
                        for v in victims:
                            self.preempt(v, t)
                        self.start(js, decision, t)
                        if reservation is not None:
                            reservation = self._consume_reservation(js, t, reservation)
                        smallest_misfit = 1 << 30
                        scan.restart(None)  # victims re-entered the queue: rescan from the top
                        continue
                self.start(js, decision, t)
                if searched is not None and self._skip_idle:
                    # the failed search did not see this job run: it holds only while the job cannot be chosen
                    ready = preemption.ineligible_until(js, t)
                    until = ready if t < ready < until else (until if ready > t else -math.inf)
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
                    preempted = True
                    last_preemptor = entry
                    for v in victims:
                        self.preempt(v, t)
                    self.start(js, where, t)
                    smallest_misfit = 1 << 30  # preemption freed GPUs
                    # Victims are of a worse class, so they re-entered the queue behind this entry
                    # (orders keep keys consistent with classes): carry on from here.
                    scan.restart(entry)
                    continue
                may_preempt = False  # worse jobs behind this one cannot preempt either
                until = preemption.failure_holds_until()
                searched = entry
            if order.blocking and reservation is None:
                if not self.scheduler.backfill:
                    blocked = True
                    break
                reservation = self._reserve(js, t)
                if reservation is None:
                    blocked = True
                    break
        if reservation is None and (not preempted or self._settled_after(last_preemptor, upgrade)):
            self._arrived_min = 1 << 30  # the victims queued during the pass were walked after their preemptor
            self._idle_after_preemption = preempted
            self._note_idle(blocked, searched, smallest_misfit, until)
        self._record(t)

    def _running_for(self, preemption: PreemptionPolicy) -> Iterable[JobState]:
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
        # jobs without an estimate are not in running_by_end: they would sort after every estimate and
        # end the search with None, as the end of the list does
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
