"""Preemption by priority class: stop the least important running jobs that make room."""

from __future__ import annotations

import math
from collections.abc import Iterable

from schedmate.policies.base import PREEMPTIONS, PlacementPolicy, PreemptionPolicy, QueueOrder
from schedmate.sim.state import ClusterState, JobState, Placement


@PREEMPTIONS.register("priority")
class PriorityPreemption(PreemptionPolicy):
    """Victims are running jobs of a strictly worse preemption class than the waiting job, taken
    worst first (latest started first on ties), until the placement policy finds room; victims that
    do not share a node with the resulting placement are spared. A job is never preempted twice
    within `min_interval_s`, nor before it has run `min_interval_s` since its last start, which
    bounds thrashing."""

    name = "priority"

    def __init__(self, min_interval_s: float = 300.0) -> None:
        self.min_interval_s = min_interval_s
        self._holds_until = -math.inf

    def failure_holds_until(self) -> float:
        """The last failed search saw every candidate victim (running jobs of a worse class): those that
        were eligible did not make room with the free GPUs, the others become eligible no earlier than
        `min_interval_s` after their last start or preemption. Until the first of those times (less a few
        units in the last place, for the rounding of `eligible`'s subtractions) the search finds the same."""
        return self._holds_until

    def ineligible_until(self, victim: JobState, now: float) -> float:
        if self.eligible(victim, now):
            return -math.inf
        return self._ready_at(max(victim.last_preempted, victim.last_start))

    def _ready_at(self, last: float) -> float:
        # a job last started or stopped at `last` is not `eligible` before this (less a few units in the
        # last place, for the rounding of its subtractions)
        at = last + self.min_interval_s
        return at - 8 * math.ulp(max(abs(at), self.min_interval_s))

    def eligible(self, victim: JobState, now: float) -> bool:
        return (
            now - victim.last_preempted >= self.min_interval_s
            and now - victim.last_start >= self.min_interval_s
        )

    def victims(
        self,
        js: JobState,
        running: Iterable[JobState],
        cluster: ClusterState,
        placement: PlacementPolicy,
        order: QueueOrder,
        now: float,
    ) -> tuple[list[JobState], Placement] | None:
        """`running` must be ordered worst class first."""
        mine = order.preemption_class(js, now)
        free: list[int] | None = None
        chosen: list[JobState] = []
        since = math.inf  # the earliest last start or preemption among the ineligible candidates
        # a placement is GPUs out of `free`: while the free GPUs and the victims' are fewer than the job
        # asks for, no placement can come back, and a stateless one has nothing else to do (not asked)
        short = js.num_gpus - cluster.total_free if placement.stateless else 0
        stable = order.stable_classes
        for victim in running:
            # a stable class the engine computed and holds (`QueueOrder.stable_classes`) is the class now
            entry = victim.class_entry
            if stable and entry is not None and now < victim.class_until:
                if entry[0] <= mine:
                    break
            elif order.preemption_class(victim, now) <= mine:
                break
            if not self.eligible(victim, now):
                last = victim.last_start if victim.last_start > victim.last_preempted else victim.last_preempted
                if last < since:
                    since = last
                continue
            if free is None:
                free = list(cluster.free)
            chosen.append(victim)
            for node, gpus in victim.placement:
                free[node] += gpus
                short -= gpus
            if short > 0:
                continue
            decision = placement.place(js, cluster, now, free)
            if isinstance(decision, tuple):
                used = {node for node, _ in decision}
                needed = [v for v in chosen if any(n in used for n, _ in v.placement)]
                return needed, decision
        # a job that stopped or started later is ineligible at least as long (the subtractions in
        # `eligible` are monotone)
        self._holds_until = self._ready_at(since) if since < math.inf else math.inf
        return None
