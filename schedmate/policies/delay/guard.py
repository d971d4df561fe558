"""The delay scheduler's starvation guard: a reservation for the job that has queued longest.

**Who may hold it** (`GuardRule`, registry `GUARD_RULES`, chosen by `DelayConfig.guard`). A waiting job
may hold the reservation once its rule says so, and in any case once it has queued `age_cap_s` (since
it became eligible; queueing of any kind, not only the locality wait); among those, the one that has
queued longest holds it. That is first come, first served among them, so no job waits much past its
rule's point plus the time the jobs ahead of it take to start: a job cannot starve.

* `cost` (default): once it has queued `guard_factor` times what its run costs the cluster, its GPUs x
  its predicted duration / the cluster's GPUs (without an estimate, the mean run time of the jobs
  finished so far: the expected one, longer than the median under heavy tails). Serving a job sooner
  delays the others by about that much cluster time, so a job that is cheap to serve (e.g. a whole-rack
  job of one hour) gets its turn after a short wait, and one that would hold many GPUs for days waits in
  proportion: under overload the policy keeps letting small jobs pass (the mean of `consolidate-rack`)
  without leaving the cheap big jobs behind for ever (its tail). With the `none` annotator every job
  has the same duration estimate, and the point only grows with the GPU count.
* `age`: only the age cap, the same for every job (the rule until session 4; under overload it traded
  mean JCT for tail, `eval/delay` guard sweep).

**What it gets.** The holder takes L0, or one rack (L1) at once; it never spreads further (crossing
oversubscribed uplinks could make it hold its GPUs for many times its run time). Only the holder
relaxes its locality: under overload many queued jobs pass their point, and letting them all go
anywhere would turn the policy into scatter exactly when spreading costs most.

* **Claims**: with the `network` preemption the holder does not wait for its nodes to drain: it claims
  them, stopping up to `guard_victims` jobs that passed it (`guard_claims`: by default the jobs on its
  nodes that started after it began queueing, any sensitivity) and have run the minimum interval; each
  victim loses one restart cost (`schedmate.policies.delay.preemption`). With
  `preemption.guard_pay` = k > 0 (off by default) a claim is made only when it pays (the holder's wait
  for its victims saved is at least k x the victims x its own run), or once the holder is **overdue**:
  jobs that started while it held the reservation took `guard_backstop` times its GPUs, or it queued the
  age cap (`overdue`). Among alike jobs no claim pays and the oldest job is not passed, so claims stop
  time-slicing; a big job that small ones keep passing is overdue soon and claims: it cannot starve.
* **Protection**: it reserves the nodes its consolidated placement would take (the most-free nodes, up
  to its GPU count, of the rack that was closest to holding it: the most free GPUs among racks big
  enough; of the whole cluster for a job no rack can hold). The other jobs may not use their free GPUs,
  so they drain for it (and idle meanwhile), except jobs predicted to end before the holder could start
  (its shadow time, from the predicted ends of the jobs running there: backfilling, as EASY does; a job
  without a duration estimate never backfills), and running jobs may not move onto them. Under the
  `cost` rule the holder protects its nodes only once it has queued `guard_wait_factor` times the median
  wait of the last `guard_window` jobs to start, i.e. when it waits far longer than jobs do now: under
  a flood of small jobs, where everyone waits about alike, no GPU idles for a holder (`tests/policies/
  test_guard.py`). Under the `age` rule it protects from the start.

While a reservation is held the policy is not `monotone` (the reserved job may fit where a smaller job
did not).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import deque

from schedmate.policies.delay.timers import DelayTimers
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.registry import Registry
from schedmate.sim.state import ClusterState, JobState, Status

MOVES_KEY = "delay:moves"
"""`js.extra[MOVES_KEY]`: the job's migrations when the guard last saw it start."""


class GuardRule(ABC):
    """When a waiting job may hold the starvation guard's reservation (besides the age cap, which
    lets any job hold it)."""

    name: str = "rule"
    always_protects: bool = False
    """The holder keeps the free GPUs of its reservation for itself from the start (else only once it
    waits much longer than jobs do now, `StarvationGuard.protects`)."""

    @abstractmethod
    def point(self, js: JobState, guard: StarvationGuard, cluster: ClusterState) -> float:
        """Seconds of queueing after which the rule lets `js` hold the reservation (inf: only the age cap)."""

    def may_hold(self, js: JobState, guard: StarvationGuard, cluster: ClusterState, now: float) -> bool:
        """Asked for every job left unplaced in a pass; a holder keeps the reservation until it starts,
        or until a job that has queued longer may hold it."""
        return guard.timers.queued(js, now) >= self.point(js, guard, cluster)


GUARD_RULES: Registry[GuardRule] = Registry("starvation guard rule")


def job_work(js: JobState, timers: DelayTimers) -> float:
    """GPU-seconds a job is expected to hold: its GPUs x its predicted duration (without an estimate,
    the mean run time of the jobs finished so far)."""
    d = predicted_duration(js)
    return js.num_gpus * (timers.mean_duration() if d is None else d)


@GUARD_RULES.register("age")
class AgeCap(GuardRule):
    """Only the age cap: every job after `age_cap_s` of queueing."""

    name = "age"
    always_protects = True

    def point(self, js: JobState, guard: StarvationGuard, cluster: ClusterState) -> float:
        return math.inf


@GUARD_RULES.register("cost")
class ReservationCost(GuardRule):
    """After `guard_factor` times its expected GPU-time over the cluster's GPUs of queueing."""

    name = "cost"

    def point(self, js: JobState, guard: StarvationGuard, cluster: ClusterState) -> float:
        t = guard.timers
        return t.guard_factor() * job_work(js, t) / max(1, cluster.total_gpus)


class StarvationGuard:
    """The reservation of the job that has queued longest among those its rule (or the age cap) lets
    hold it (see the module doc); the delay placement asks it which free GPUs a job may use,
    preemption which nodes the holder claims."""

    def __init__(self, timers: DelayTimers) -> None:
        self.timers = timers
        self.rule = GUARD_RULES.create(timers.config.guard)
        self._reserved: JobState | None = None
        self._rack: int | None = None
        """The rack the reservation holds nodes in (None: nodes anywhere, for a job no rack can hold)."""
        self._running: dict[int, JobState] = {}
        """Running jobs by index (for the reservation's shadow time)."""
        self._shadow: tuple[float, int, float] | None = None
        """(time, holder index, shadow time) of the last shadow computation."""
        self._waits: deque[float] = deque(maxlen=timers.config.guard_window)
        """How long the last `guard_window` jobs to start had queued (moves excluded)."""
        self._typical: float | None = None
        self._passed = 0
        """GPUs of the jobs that started while the current holder held the reservation."""

    def reset(self) -> None:
        self._reserved = None
        self._rack = None
        self._running = {}
        self._shadow = None
        self._waits.clear()
        self._typical = None
        self._passed = 0

    def typical_wait(self) -> float:
        """The median wait of the last `guard_window` jobs to start (0 before any started)."""
        if self._typical is None:
            waits = sorted(self._waits)
            self._typical = waits[(len(waits) - 1) // 2] if waits else 0.0
        return self._typical

    def protects(self, now: float) -> bool:
        """Does the holder keep the free GPUs of its reservation for itself now (see `guard_wait_factor`)?"""
        r = self._holder()
        if r is None:
            return False
        if self.rule.always_protects:
            return True
        return self.timers.queued(r, now) >= self.timers.config.guard_wait_factor * self.typical_wait()

    @property
    def active(self) -> bool:
        """Is a reservation held (possibly by a job that started since, until the next look)?"""
        return self._reserved is not None

    def note_started(self, js: JobState, now: float) -> None:
        self._running[js.idx] = js
        if js.extra.get(MOVES_KEY, 0) != js.migrations:  # a move, not a start after queueing
            js.extra[MOVES_KEY] = js.migrations
            return
        self._waits.append(self.timers.queued(js, now))
        self._typical = None
        r = self._reserved
        if r is not None and r is not js and r.status is Status.waiting:
            self._passed += js.num_gpus

    def note_stopped(self, js: JobState) -> None:
        self._running.pop(js.idx, None)

    def release(self, js: JobState) -> None:
        """`js` took a placement: if it held the reservation, the reservation ends."""
        if self._reserved is js:
            self._reserved = self._rack = None

    def may_hold(self, js: JobState, cluster: ClusterState, now: float) -> bool:
        """May `js` hold the reservation: has it queued `age_cap_s`, or does its rule say so?"""
        return self.timers.queued(js, now) >= self.timers.config.age_cap_s or self.rule.may_hold(js, self, cluster, now)

    def overdue(self, js: JobState, now: float) -> bool:
        """Has the queue passed the holder `js` (jobs that started while it held the reservation took
        `guard_backstop` times its GPUs), or has it queued the age cap? Then its claims need not pay
        (`NetworkPreemptionConfig.guard_pay`): the starvation backstop."""
        cfg = self.timers.config
        if self.timers.queued(js, now) >= cfg.age_cap_s:
            return True
        return self._holder() is js and self._passed >= cfg.guard_backstop * js.num_gpus

    def _holder(self) -> JobState | None:
        r = self._reserved
        if r is not None and r.status is not Status.waiting:
            self._reserved = self._rack = None
            return None
        return r

    @property
    def holder(self) -> JobState | None:
        """The waiting job that holds the starvation guard's reservation, if any."""
        return self._holder()

    def reserved_nodes(self, cluster: ClusterState) -> list[int]:
        """The nodes the holder's reservation is in: its rack's, or every node for a job no rack can hold."""
        return list(cluster.nodes_in_rack[self._rack]) if self._rack is not None else list(range(len(cluster.free)))

    def shadow_time(self, cluster: ClusterState, now: float) -> float:
        """When the holder's reservation is predicted to have its GPUs free (in its rack, or anywhere
        for a job no rack can hold): running jobs there end at their predicted ends (never, without one)."""
        r = self._reserved
        assert r is not None
        got = self._shadow
        if got is not None and got[0] == now and got[1] == r.idx:
            return got[2]
        nodes = set(cluster.nodes_in_rack[self._rack]) if self._rack is not None else None
        have = sum(cluster.free[n] for n in nodes) if nodes is not None else cluster.total_free
        ends: list[tuple[float, int]] = []
        for js in self._running.values():
            k = sum(c for n, c in js.placement if nodes is None or n in nodes)
            if k:
                rest = predicted_remaining(js, now)
                ends.append((math.inf if rest is None else now + rest, k))
        shadow = now if have >= r.num_gpus else math.inf
        for end, k in sorted(ends):
            if have >= r.num_gpus:
                break
            have += k
            shadow = end
        if have < r.num_gpus:
            shadow = math.inf
        self._shadow = (now, r.idx, shadow)
        return shadow

    def free_for_moves(self, cluster: ClusterState, now: float) -> tuple[list[int], int]:
        """(per-node free GPUs, their sum) a running job may move onto: all but the reserved ones while
        the holder keeps them (a move does not end before the reservation's holder could start)."""
        r = self._holder()
        protect = r is not None and self.protects(now)
        view, avail = self._protected_view(r, cluster) if protect else (cluster.free, cluster.total_free)
        return list(view), avail

    def free_for(self, js: JobState, cluster: ClusterState, now: float) -> tuple[list[int], int]:
        """(per-node free GPUs, their sum) that `js`, not the reservation's holder, may use: all of
        them when it is predicted to end before the holder could start (backfilling, as EASY does),
        else all but the reserved ones."""
        r = self._holder()
        if r is None or not self.protects(now):
            return cluster.free, cluster.total_free
        d = predicted_duration(js)
        if d is not None and now + d <= self.shadow_time(cluster, now):
            return cluster.free, cluster.total_free
        return self._protected_view(r, cluster)

    def _protected_view(self, r: JobState, cluster: ClusterState) -> tuple[list[int], int]:
        """The free GPUs outside `r`'s reservation: the most-free nodes of its rack (of the whole
        cluster for a job no rack can hold), up to its GPU count, held back: the ones its
        consolidated placement would take."""
        view = list(cluster.free)
        nodes = cluster.nodes_in_rack[self._rack] if self._rack is not None else range(len(view))
        need = r.num_gpus
        for n in sorted(nodes, key=lambda n: (-view[n], n)):
            if need <= 0:
                break
            need -= view[n]
            view[n] = 0
        return view, sum(view)

    def note_unplaced(self, js: JobState, cluster: ClusterState, now: float) -> None:
        if not self.may_hold(js, cluster, now):
            return
        r = self._holder()
        if r is None or (self.timers.queued(js, now), -js.idx) > (self.timers.queued(r, now), -r.idx):
            self._reserved = js
            self._passed = 0
            racks = [rk for rk, nodes in sorted(cluster.nodes_in_rack.items())
                     if sum(cluster.capacity[n] for n in nodes) >= js.num_gpus]
            # the rack closest to holding it now; it keeps that rack until it starts
            self._rack = max(racks, key=lambda rk: (sum(cluster.free[n] for n in cluster.nodes_in_rack[rk]), -rk),
                             default=None)


__all__ = ["GUARD_RULES", "AgeCap", "GuardRule", "ReservationCost", "StarvationGuard", "job_work"]
