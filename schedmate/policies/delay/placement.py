"""Delay scheduling over locality levels: the `delay` placement.

Levels (best first), from the helpers in `placements`:

* **L0** `consolidated`: one node, or the fewest nodes when the job is bigger than a node, inside one
  rack whenever a rack could hold it on that many nodes (across racks it would cross the uplinks).
* **L1** `within_one_rack`: all GPUs inside one rack (fewest nodes there).
* **L2** `anywhere`: fewest nodes over the whole cluster.

A job takes L0 whenever L0 is free. Otherwise it may take L1 once its locality wait has run `W_node`
and L2 once it has run `W_rack`, and a job held back by a timer gets `Wait(until=next expiry)`, so the
jobs behind it in the queue may go. The timers and the locality wait they are counted on are in
`schedmate.policies.delay.timers`, the starvation guard (which free GPUs a job may use while a
reservation is held) in `schedmate.policies.delay.guard`.

**Locality first** (`locality_first`, default on): a job whose timer allows L1/L2 does not take them in
the scheduling pass that finds it so; it is told to wait for that pass, and a second pass over the queue
(`PlacementPolicy.begin_relaxed_pass`) places it on the GPUs the first pass left, after every waiting
job that could start at L0 did. A spread placement therefore never takes GPUs that another waiting job
would have used consolidated (first-come first-served among relaxed placements is kept). On the real
Philly machine list (2- and 8-GPU servers) this halved delay's average-JCT gap to `consolidate-rack`
(`eval/delay`).

**Monotone**: without a reservation, `place` returns None only when fewer GPUs are free than the job
asks for (L2 fails), so no bigger job could be placed either: `monotone` is True then. A job held back
by a timer returns `Wait`, never None.
"""

from __future__ import annotations

from schedmate.policies.base import PLACEMENTS, Decision, PlacementPolicy, Wait
from schedmate.policies.delay.guard import StarvationGuard
from schedmate.policies.delay.timers import DelayConfig, DelayTimers
from schedmate.policies.placements import anywhere, consolidated, within_one_rack
from schedmate.sim.state import ClusterState, JobState, Placement


@PLACEMENTS.register("delay")
class DelayPlacement(PlacementPolicy):
    """Delay scheduling over L0 (fewest nodes, one rack) / L1 (one rack) / L2 (anywhere); see the module doc."""

    name = "delay"
    tracks_unplaced = True

    def __init__(self, config: DelayConfig | None = None, timers: DelayTimers | None = None) -> None:
        self.timers = timers or DelayTimers(config)
        self.guard = StarvationGuard(self.timers)
        """The starvation guard's reservation (also read by the network preemption and migration)."""
        self._network: object | None = None
        self.levels = [0, 0, 0]
        """Placements made at L0, L1, L2 (for reports)."""
        self._relaxed = False
        """In the second pass of a scheduling round: relaxed placements allowed (`locality_first`)."""
        self._deferred = False
        """A job was held back from a relaxed placement in the first pass (a second one is needed)."""

    def begin_relaxed_pass(self) -> bool:
        if not self._deferred:
            return False
        self._deferred = False
        self._relaxed = True
        return True

    def end_relaxed_pass(self) -> None:
        self._relaxed = False

    @property
    def monotone(self) -> bool:  # type: ignore[override]
        return not self.guard.active

    def reset(self, seed: int) -> None:
        self.guard.reset()
        self._network = None
        self.levels = [0, 0, 0]
        self._relaxed = self._deferred = False
        self.timers.set_runs([])

    def note_started(self, js: JobState, now: float) -> None:
        self.guard.note_started(js, now)

    def note_stopped(self, js: JobState, now: float) -> None:
        self.guard.note_stopped(js)

    def note_finished(self, js: JobState, now: float) -> None:
        self.timers.observe_run(js.executed_s)

    def note_unplaced(self, js: JobState, cluster: ClusterState, now: float) -> None:
        self.guard.note_unplaced(js, cluster, now)

    def place(self, js: JobState, cluster: ClusterState, now: float, free: list[int] | None = None) -> Decision:
        g = js.num_gpus
        if g <= 0:
            return ()
        live = free is None
        reserved = False
        if self._network is not cluster.spec.network:
            self._network = cluster.spec.network
            self.timers.learn_network(cluster)
        if live:
            if self.timers.config.load_aware:
                self.timers.pressure = 1.0 + cluster.queued_gpus / cluster.total_gpus
            reserved = self.guard.holder is js
            free, avail = (cluster.free, cluster.total_free) if reserved else self.guard.free_for(js, cluster, now)
        else:
            avail = sum(free)
        if avail < g:
            return None
        p = consolidated(g, cluster, free)
        if p is not None:
            return self._took(js, p, 0, live)
        timers = self.timers
        w_node, w_rack = timers.timers(js)
        # enough GPUs are free but no L0 slot: the locality wait starts (a hypothetical `free` only asks)
        origin = timers.start_clock(js, now) if live else timers.origin(js)
        if origin is None:
            origin = now
        node_deadline = origin + w_node
        # the reservation's holder may take one rack at once, and never spreads further: its reserved
        # nodes drain for it (crossing oversubscribed uplinks could make it hold half the cluster for
        # many times its run time)
        if live and now >= node_deadline and not (reserved or self._relaxed) and timers.config.locality_first:
            self._deferred = True  # relax only on the GPUs this pass's L0 placements leave: next pass
            return Wait(until=now)
        if reserved or now >= node_deadline:
            p = within_one_rack(g, cluster, free)
            if p is not None:
                return self._took(js, p, 1, live)
            if reserved:  # its GPUs are draining for it: it waits for them rather than spread
                return None
            rack_deadline = origin + w_rack
            if now >= rack_deadline:
                p = anywhere(g, cluster, free)
                if p is not None:
                    return self._took(js, p, 2, live)
                return None  # unreachable while avail >= g; kept for safety
            return Wait(until=rack_deadline)
        return Wait(until=node_deadline)

    def _took(self, js: JobState, p: Placement, level: int, live: bool) -> Placement:
        if live:
            self.levels[level] += 1
            self.guard.release(js)
        return p

__all__ = ["DelayPlacement"]
