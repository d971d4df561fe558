"""The delay scheduler's starvation guard: a reservation for the job that has queued longest.

**Starvation guard** (reservation): the job that has queued longest past `age_cap_s` since it
became eligible (queueing of any kind, not only the locality wait) holds a reservation on the nodes its
consolidated placement would take: the most-free nodes, up to its GPU count, of the rack that was
closest to holding it (the most free GPUs among racks big enough; of the whole cluster for a job no
rack can hold). The other jobs may not use them, so they drain for it, except jobs predicted to end
before the holder could start (its shadow time, from the predicted ends of the jobs running there:
backfilling, as EASY does; a job without a duration estimate never backfills), and running jobs may
not move onto them. The holder takes L0, or one rack (L1) at once; it never spreads further (crossing
oversubscribed uplinks could make it hold its GPUs for many times its run time). Only the holder
relaxes its locality: under overload every queued job passes the age cap, and letting them all go
anywhere would turn the policy into scatter exactly when spreading costs most. While a reservation is
held the policy is not `monotone` (the reserved job may fit where a smaller job did not). With the
`network` preemption the holder does not wait for its nodes to drain: it **claims** them, stopping
up to `guard_victims` jobs lower in the queue order (any sensitivity; they passed it while it waited)
that have run the minimum interval; drained GPUs idle, claimed ones lose one restart cost per victim
(`eval/delay` ablation, 3 seeds: on testbed64 at load 0.9, -10 % average and p99 JCT with `none` and
-4 % p99 with oracle against draining; under sustained overload with oracle it trades mean for tail).
"""

from __future__ import annotations

import math

from schedmate.policies.delay.timers import DelayTimers
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.sim.state import ClusterState, JobState, Status


class StarvationGuard:
    """The reservation of the job that has queued longest past the age cap (see the module doc); the
    delay placement asks it which free GPUs a job may use, preemption which nodes the holder claims."""

    def __init__(self, timers: DelayTimers) -> None:
        self.timers = timers
        self._reserved: JobState | None = None
        self._rack: int | None = None
        """The rack the reservation holds nodes in (None: nodes anywhere, for a job no rack can hold)."""
        self._running: dict[int, JobState] = {}
        """Running jobs by index (for the reservation's shadow time)."""
        self._shadow: tuple[float, int, float] | None = None
        """(time, holder index, shadow time) of the last shadow computation."""

    def reset(self) -> None:
        self._reserved = None
        self._rack = None
        self._running = {}
        self._shadow = None

    @property
    def active(self) -> bool:
        """Is a reservation held (possibly by a job that started since, until the next look)?"""
        return self._reserved is not None

    def note_started(self, js: JobState) -> None:
        self._running[js.idx] = js

    def note_stopped(self, js: JobState) -> None:
        self._running.pop(js.idx, None)

    def release(self, js: JobState) -> None:
        """`js` took a placement: if it held the reservation, the reservation ends."""
        if self._reserved is js:
            self._reserved = self._rack = None

    def _aged(self, js: JobState, now: float) -> bool:
        return self.timers.queued(js, now) >= self.timers.config.age_cap_s

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

    def free_for_moves(self, cluster: ClusterState) -> tuple[list[int], int]:
        """(per-node free GPUs, their sum) a running job may move onto: all but the reserved ones (a
        move does not end before the reservation's holder could start)."""
        r = self._holder()
        view, avail = (cluster.free, cluster.total_free) if r is None else self._protected_view(r, cluster)
        return list(view), avail

    def free_for(self, js: JobState, cluster: ClusterState, now: float) -> tuple[list[int], int]:
        """(per-node free GPUs, their sum) that `js`, not the reservation's holder, may use: all of
        them when it is predicted to end before the holder could start (backfilling, as EASY does),
        else all but the reserved ones."""
        r = self._holder()
        if r is None:
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
        if not self._aged(js, now):
            return
        r = self._holder()
        if r is None or (self.timers.queued(js, now), -js.idx) > (self.timers.queued(r, now), -r.idx):
            self._reserved = js
            racks = [rk for rk, nodes in sorted(cluster.nodes_in_rack.items())
                     if sum(cluster.capacity[n] for n in nodes) >= js.num_gpus]
            # the rack closest to holding it now; it keeps that rack until it starts
            self._rack = max(racks, key=lambda rk: (sum(cluster.free[n] for n in cluster.nodes_in_rack[rk]), -rk),
                             default=None)


__all__ = ["StarvationGuard"]
