"""Network-sensitive preemption, and the starvation guard's claims.

**Preemption** (`NetworkPreemption`, registered `network`): a sensitive job (s >= `sensitive_from`)
whose locality wait has run at least its node timer, and that would be spread (L1/L2), is told to
wait for the next level, or cannot be placed at all now, may stop running jobs that are lower
priority in the queue order (a larger order key) and insensitive (s < `victim_below`) to free a
consolidated (L0) slot; victims lose `ReplayConfig.restart_cost_s` of
progress and requeue. A job is never preempted within `min_interval_s` of its last preemption nor
before it has run `min_interval_s` since its last start (no thrashing). Among the nodes where this
works, the one that stops the fewest GPUs wins (then the fewest victims, then the lowest index).

The starvation guard's holder (`schedmate.policies.delay.guard`) **claims** its reserved nodes through
the same policy, instead of waiting for them to drain: it stops up to `guard_victims` jobs (any
sensitivity) that passed it while it waited and have run the minimum interval. `guard_claims` says who
passed it: `passed` (default), the jobs that started after it began queueing, latest started first;
`lower`, the jobs lower in the queue order, lowest first (the rule until session 4: under overload the
jobs on the reserved nodes had often been submitted before the holder, so its nodes drained, idle).

**Claims that pay** (`guard_pay` = k > 0, off by default): a claim swaps the holder ahead of its
victims. It saves the holder the wait for them to end (about the longest expected remaining run among
them) and adds about the holder's run (plus the lost progress) to each victim's completion, so it
lowers the sum of completion times only when `saved >= k x victims x (holder's duration + restart)`
with k = 1 (the exchange argument of shortest-remaining-first). Among alike jobs no claim pays (a
victim's remaining run is shorter than the holder's whole run): claims then only time-slice. So that
no job starves, the **backstop**: once the queue has passed the holder (jobs started while it held
the reservation took `DelayConfig.guard_backstop` times its GPUs), or it queued the age cap, it claims
as without the rule (`StarvationGuard.overdue`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schedmate.policies.base import PREEMPTIONS, PreemptionPolicy, QueueOrder
from schedmate.policies.delay.timers import DelayTimers
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.policies.placements import consolidated, is_consolidated, min_nodes_needed, within_one_rack
from schedmate.sim.state import ClusterState, JobState, Placement

if TYPE_CHECKING:
    from schedmate.policies.delay.placement import DelayPlacement


@dataclass
class NetworkPreemptionConfig:
    sensitive_from: float = 0.5
    """Only jobs at least this sensitive preempt."""
    victim_below: float = 0.2
    """Only jobs less sensitive than this are preempted."""
    min_interval_s: float = 1800.0
    max_victims: int = 4
    guard_victims: int = 8
    """The starvation guard's holder may stop up to this many jobs that passed it (of any sensitivity)
    on its reserved nodes to start now rather than wait for them to drain (0: it only waits)."""
    guard_claims: str = "passed"
    """Which running jobs passed the holder: `passed`, those that started after it began queueing;
    `lower`, those lower in the queue order."""
    guard_pay: float = 0.0
    """k > 0: the holder claims only when the claim pays, i.e. the time it would wait for the victims
    to end (the longest expected remaining run among them) is at least k x the victims' number x (its
    expected duration + `restart_s`), the time the claim adds to their completions; or once it is
    overdue (`DelayConfig.guard_backstop`). 0: every claim (the rule of session 5)."""
    restart_s: float = 60.0
    """The progress a victim loses when stopped, for `guard_pay` (`ReplayConfig.restart_cost_s`'s default)."""

    def __post_init__(self) -> None:
        if self.guard_claims not in ("passed", "lower"):
            raise ValueError(f"guard_claims must be passed or lower, got {self.guard_claims!r}")
        if self.guard_pay < 0 or self.restart_s < 0:
            raise ValueError("guard_pay and restart_s must be >= 0")


@PREEMPTIONS.register("network")
class NetworkPreemption(PreemptionPolicy):
    """Stop lower-priority insensitive jobs to give a sensitive job whose node timer ran out an L0
    slot, and stop lower-priority jobs on the starvation guard's reserved nodes for its holder; see the
    module doc."""

    name = "network"
    any_order = True

    def __init__(self, timers: DelayTimers | None = None, config: NetworkPreemptionConfig | None = None,
                 placement: DelayPlacement | None = None) -> None:
        self.timers = timers or DelayTimers()
        self.config = config or NetworkPreemptionConfig()
        self.placement = placement
        """The delay placement whose starvation reservation the guard's claims serve (None: no claims)."""
        self.count = 0
        """Network preemptions made (each may stop several victims)."""
        self.claims = 0
        """Reservations the guard's holder claimed by preemption."""

    def eligible(self, victim: JobState, now: float) -> bool:
        m = self.config.min_interval_s
        return now - victim.last_preempted >= m and now - victim.last_start >= m

    def _claims(self, js: JobState) -> bool:
        """Is `js` the starvation guard's holder, allowed to claim its reservation by preemption?"""
        return self.config.guard_victims > 0 and self.placement is not None and self.placement.guard.holder is js

    def wants(self, js: JobState, now: float) -> bool:
        if self._claims(js):
            return True
        t = self.timers
        if t.sensitivity(js) < self.config.sensitive_from:
            return False
        w_node, _ = t.timers(js)
        # only a job held back for locality (its clock runs) preempts: preempting for a job that
        # waits for GPUs at all would be priority preemption, which under load cost average JCT
        return t.origin(js) is not None and t.waited(js, now) >= w_node

    def victims(self, js, running, cluster, placement, order, now):
        if self._claims(js):
            running = list(running)
            found = self._claim(js, running, cluster, order, now)
            if found is not None or self.timers.sensitivity(js) < self.config.sensitive_from:
                return found
        return self._find(js, running, cluster, order, now)

    def upgrade(self, js, proposed, running, cluster, placement, order, now):
        if is_consolidated(proposed, js.num_gpus, cluster):
            return None  # already L0
        return self._find(js, running, cluster, order, now)

    def _claim(self, js: JobState, running: Iterable[JobState], cluster: ClusterState, order: QueueOrder,
               now: float) -> tuple[list[JobState], Placement] | None:
        """Victims on the holder's reserved nodes whose GPUs give it L0, else one rack: jobs that passed
        it (`guard_claims`), past the minimum interval, on the nodes with the most free plus freeable GPUs
        first (fewest nodes disturbed), the last to pass it first; at most `guard_victims`."""
        assert self.placement is not None
        nodes = self.placement.guard.reserved_nodes(cluster)
        inside = set(nodes)
        by_order = self.config.guard_claims == "lower"
        mine = order.key(js, now)
        since = self.timers.queued_since(js)

        def passed(v: JobState) -> bool:
            return order.key(v, now) > mine if by_order else v.last_start >= since

        def last_first(v: JobState) -> tuple:
            return ([-x for x in order.key(v, now)], -v.idx) if by_order else (-v.last_start, -v.idx)

        on_node: dict[int, list[JobState]] = {}
        for v in running:
            if v is js or not self.eligible(v, now) or not passed(v):
                continue
            for n, _ in v.placement:
                if n in inside:
                    on_node.setdefault(n, []).append(v)
        if not on_node:
            return None
        g = js.num_gpus
        free = cluster.free
        mine_only = [free[n] if n in inside else 0 for n in range(len(free))]  # the reservation's view

        def fits(view: list[int]) -> Placement | None:
            return consolidated(g, cluster, view) or within_one_rack(g, cluster, view)

        def freeable(n: int) -> int:
            return sum(k for v in on_node.get(n, ()) for m, k in v.placement if m == n)

        chosen: list[JobState] = []
        where = fits(mine_only)
        for n in sorted(nodes, key=lambda n: (-(free[n] + freeable(n)), n)):
            if where is not None:
                break
            for v in sorted(on_node.get(n, ()), key=last_first):
                if v not in chosen:
                    chosen.append(v)
                    for m, k in v.placement:
                        if m in inside:
                            mine_only[m] += k
            where = fits(mine_only)
        if where is None or not chosen:
            return None
        used = {n for n, _ in where}
        needed = [v for v in chosen if any(n in used for n, _ in v.placement)]
        if len(needed) > self.config.guard_victims or not self._pays(js, needed, cluster, now):
            return None
        self.claims += 1
        return needed, where

    def _pays(self, js: JobState, victims: list[JobState], cluster: ClusterState, now: float) -> bool:
        """Does stopping `victims` for the holder `js` pay (`guard_pay`), or is `js` overdue (backstop)?
        Without estimates: the holder's duration is the mean finished run, a victim's remaining run the
        mean residual of the finished runs longer than it has run (`DelayTimers.mean_residual`)."""
        k = self.config.guard_pay
        assert self.placement is not None
        if k <= 0 or self.placement.guard.overdue(js, now):
            return True
        t = self.timers
        d = predicted_duration(js)
        own = t.mean_duration() if d is None else d

        def rest(v: JobState) -> float:
            r = predicted_remaining(v, now)
            return t.mean_residual(v.executed_at(now)) if r is None else r

        saved = max(rest(v) for v in victims)
        return saved >= k * len(victims) * (own + self.config.restart_s)

    def _find(
        self, js: JobState, running: Iterable[JobState], cluster: ClusterState, order: QueueOrder, now: float
    ) -> tuple[list[JobState], Placement] | None:
        cfg = self.config
        mine = order.key(js, now)
        cands = [
            v for v in running
            if v is not js and self.timers.sensitivity(v) < cfg.victim_below and self.eligible(v, now)
            and order.key(v, now) > mine
        ]
        if not cands:
            return None
        g = js.num_gpus
        free = cluster.free
        on_node: dict[int, list[tuple[int, JobState]]] = {}
        for v in cands:
            for n, k in v.placement:
                on_node.setdefault(n, []).append((k, v))
        if g <= cluster.max_node_gpus:
            best: tuple[tuple[int, int, int], list[JobState], int] | None = None
            for n in sorted(on_node):
                if cluster.capacity[n] < g:
                    continue
                need = g - free[n]
                picked: list[JobState] = []
                got = 0
                # largest share on this node first (fewest victims), then the lowest priority
                for k, v in sorted(on_node[n], key=lambda kv: (-kv[0], [-x for x in order.key(kv[1], now)], kv[1].idx)):
                    if got >= need:
                        break
                    picked.append(v)
                    got += k
                if got < need or not picked or len(picked) > cfg.max_victims:
                    continue
                score = (sum(v.num_gpus for v in picked), len(picked), n)
                if best is None or score < best[0]:
                    best = (score, picked, n)
            if best is None:
                return None
            self.count += 1
            return best[1], ((best[2], g),)
        # bigger than a node: take the nodes with the most (free + freeable) GPUs, rack by rack
        target = min_nodes_needed(g, cluster)
        for rack in sorted(cluster.nodes_in_rack):
            nodes = cluster.nodes_in_rack[rack]
            pot = sorted(nodes, key=lambda n: (-(free[n] + sum(k for k, _ in on_node.get(n, ()))), n))[:target]
            hyp = list(free)
            chosen: list[JobState] = []
            for n in pot:
                for _, v in sorted(on_node.get(n, ()), key=lambda kv: kv[1].idx):
                    if v in chosen:
                        continue
                    chosen.append(v)
                    for m, k in v.placement:
                        hyp[m] += k
            if not chosen or len(chosen) > cfg.max_victims:
                continue
            p = consolidated(g, cluster, hyp)
            if p is None or len(p) > target:
                continue
            used = {n for n, _ in p}
            needed = [v for v in chosen if any(n in used for n, _ in v.placement)]
            self.count += 1
            return needed, p
        return None


__all__ = ["NetworkPreemption", "NetworkPreemptionConfig"]
