"""Network-sensitive delay scheduling over locality levels, with network-sensitive preemption and migration.

Levels (best first), from the helpers in `placements`:

* **L0** `consolidated`: one node, or the fewest nodes when the job is bigger than a node, inside one
  rack whenever a rack could hold it on that many nodes (across racks it would cross the uplinks).
* **L1** `within_one_rack`: all GPUs inside one rack (fewest nodes there).
* **L2** `anywhere`: fewest nodes over the whole cluster.

A job takes L0 whenever L0 is free. Otherwise it may take L1 once it has waited `W_node` and L2
once it has waited `W_rack` (cumulative, W_rack >= W_node). The wait is the **locality wait**: it
counts from the first time, since the job became eligible (submission, or its last preemption), that
enough GPUs were free for it but no L0 slot was, i.e. from when the policy first held it back for
locality; it is never reset by other jobs' launches (the pitfall of Spark's per-stage delay
scheduling) nor by the free GPUs vanishing again. Time spent waiting for GPUs at all is not charged to
the timers: under heavy load every queued job would otherwise reach the head with its timers long
run out and go spread at once, behaving like scatter exactly when spreading hurts most. A job held
back by a timer gets `Wait(until=next expiry)`, so the jobs behind it in the queue may go.

**Timers from the predicted sensitivity** (`Annotation.network_sensitivity` = s in [0, 1], else
derived from `Annotation.spread_slowdown`; unknown -> `default_sensitivity`, so every job is treated
alike when no annotator says anything). With `x(s) = slowdown(s) - 1` (the extra time factor a spread
job pays on an uncontended network, `records.slowdown_from_sensitivity`) and `D` the predicted duration
(`Annotation.predicted_duration.p50`; without one, the median run time of the jobs finished so far,
and `assumed_duration_s` before any has finished):

    s <  insensitive_below   ->  W_node = W_rack = 0      (never waits: best level available now)
    otherwise                ->  W_node = min(age_cap_s, node_factor[c] * x(s) * D)
                                 W_rack = min(age_cap_s, max(W_node, rack_factor[c] * x(s) * D * X))

where X (`network_aware`, default on) is what crossing racks multiplies a spread job's communication
by on this cluster's network: the cross-rack penalty times the uplink oversubscription when links are
shared (1.25 x 4 = 5 on `congested`, 10 on `congested:8`, 1.25 on `ideal`), and x(s) * D is
multiplied by the queue pressure 1 + (GPUs asked for by waiting jobs) / (cluster GPUs) (`load_aware`,
default on): under load a spread job's slowdown also holds GPUs the jobs behind it could use.

i.e. a job waits for locality in proportion to the extra time spreading would cost it (the
ski-rental rule: with factor 1, waiting then spreading never costs more than twice the better
choice on an uncontended network). The factors (node 2, rack 4) are above 1 because congestion
multiplies the spread cost; they were chosen on the Philly-derived experiment, and the age cap (14
days) on the 64-GPU testbed one (`eval/delay`, see its README, where both are documented as tuned on
them). `node_factor[c]`/`rack_factor[c]` are per sensitivity class `c` (`unknown`, `low` < 0.1,
`mid` [0.1, 0.5), `high` [0.5, 1]); the fixed policy uses the configured factors for every class, the
auto-tuner (`schedmate.policies.tuner`) sets them per class.

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

**Preemption** (`NetworkPreemption`, registered `network`; also the guard's claims above): a
sensitive job (s >= `sensitive_from`)
whose locality wait has run at least its node timer, and that would be spread (L1/L2), is told to
wait for the next level, or cannot be placed at all now, may stop running jobs that are lower
priority in the queue order (a larger order key) and insensitive
(s < `victim_below`) to free a consolidated (L0) slot; victims lose `ReplayConfig.restart_cost_s` of
progress and requeue. A job is never preempted within `min_interval_s` of its last preemption nor
before it has run `min_interval_s` since its last start (no thrashing). Among the nodes where this
works, the one that stops the fewest GPUs wins (then the fewest victims, then the lowest index).

**Migration** (`NetworkMigration`, registered `network` among migrations): after each scheduling pass,
a running job with s >= `sensitive_from` that runs spread (not L0) and slower than full speed, and that
has run `min_interval_s` since its last start, moves onto a free L0 slot when the time it is predicted
to save, rest / speed - (rest + restart cost), is at least `gain_factor` restart costs. `rest` is the
predicted duration minus the progress made (without an estimate, or once the job has outrun it: at
least as much again as it has done, and at least the median finished run time minus its progress); `speed` is its current observed
throughput. Jobs are taken in queue order; the freed spread GPUs go to the queue in another pass.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from schedmate.policies.base import (
    MIGRATIONS,
    ORDERS,
    PLACEMENTS,
    PREEMPTIONS,
    Decision,
    MigrationPolicy,
    PlacementPolicy,
    PreemptionPolicy,
    QueueOrder,
    Wait,
)
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.policies.placements import (
    anywhere,
    consolidated,
    is_consolidated,
    min_nodes_needed,
    within_one_rack,
)
from schedmate.records import sensitivity_from_slowdown, slowdown_from_sensitivity
from schedmate.sim.state import ClusterState, JobState, Placement, Status

CLASSES = ("unknown", "low", "mid", "high")
CREDIT_KEY = "delay:credit"
"""`js.extra[CREDIT_KEY]`: seconds already queued before this simulation (forward simulations)."""
CLOCK_KEY = "delay:clock"
"""`js.extra[CLOCK_KEY]`: (eligible_since, t): the locality wait of the attempt that became eligible
at `eligible_since` began at `t` (a preemption makes a new attempt, with a new clock)."""
CLOCK_CREDIT_KEY = "delay:clock-credit"
"""`js.extra[CLOCK_CREDIT_KEY]`: seconds of locality wait already run before this simulation (forward
simulations of a job whose clock had started); its clock then counts from its eligibility."""


@ORDERS.register("fifo-nb")
class NonBlockingFIFO(QueueOrder):
    """Submission order, non-blocking: a job that cannot be placed (or is told to wait) lets the jobs
    behind it go. Reads no annotation. The default order of the `delay` scheduler, and the order of
    the consolidate / scatter baselines it is compared with."""

    name = "fifo-nb"

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        return (js.job.submit_time,)


@dataclass
class DelayConfig:
    node_factor: float = 2.0
    """W_node as a share of the predicted extra spread time x(s) * D."""
    rack_factor: float = 4.0
    """W_rack (cumulative on the locality clock) as a share of x(s) * D; kept >= W_node."""
    insensitive_below: float = 0.1
    default_sensitivity: float = 0.5
    """Sensitivity assumed when the annotation gives none (every job alike)."""
    assumed_duration_s: float = 3600.0
    """D for a job without a duration estimate, until some job has finished (see `learn_duration`)."""
    learn_duration: bool = True
    """Once jobs have finished, D for a job without a duration estimate is the median run time of the
    jobs finished so far (what any scheduler observes; every such job is still treated alike)."""
    age_cap_s: float = 14 * 24 * 3600.0
    """Starvation guard: after this much queueing a job may reserve GPUs (see the module doc); no timer
    is longer than this."""
    load_aware: bool = True
    """Timers grow with the queue: x (1 + GPUs asked for by waiting jobs / cluster GPUs). A spread job's
    slowdown also holds GPUs the jobs queued behind it could use, which matters only under load."""
    locality_first: bool = True
    """A job whose timer let it relax locality takes L1/L2 only on the GPUs left once every waiting job
    that can start at L0 now has (a second pass over the queue, `PlacementPolicy.begin_relaxed_pass`):
    a spread placement never takes GPUs another job would have used consolidated."""
    network_aware: bool = True
    """W_rack grows with what crossing racks costs on this cluster's network: the spread cost x times
    the cross-rack penalty times the uplink oversubscription (when links are shared)."""

    def __post_init__(self) -> None:
        if min(self.node_factor, self.rack_factor, self.age_cap_s, self.assumed_duration_s) < 0:
            raise ValueError("delay timers must be >= 0")
        if not 0.0 <= self.default_sensitivity <= 1.0:
            raise ValueError("default_sensitivity must be in [0, 1]")


class DelayTimers:
    """The timer function shared by the delay placement, the network preemption and the tuner."""

    def __init__(self, config: DelayConfig | None = None) -> None:
        self.config = config or DelayConfig()
        self.per_class: dict[str, tuple[float, float]] = {}
        """class -> (node_factor, rack_factor), overriding the config (set by the tuner)."""
        self.finished_runs: list[float] = []
        """Run times of the jobs finished so far, sorted (for the learned default duration)."""
        self.pressure = 1.0
        """Queue pressure the timers are multiplied by (`load_aware`; set by the placement each pass)."""
        self.cross_rack = 1.0
        """How much more a spread job's communication costs across racks than inside one, on the
        cluster's network (set by the placement from the cluster spec; 1 until then)."""

    def copy(self) -> DelayTimers:
        t = DelayTimers(self.config)
        t.per_class = dict(self.per_class)
        t.finished_runs = list(self.finished_runs)
        t.cross_rack = self.cross_rack
        t.pressure = self.pressure
        return t

    def learn_network(self, cluster: ClusterState) -> None:
        net = cluster.spec.network
        factor = net.cross_rack_penalty * (net.uplink_oversubscription if net.contention else 1.0)
        self.cross_rack = factor if self.config.network_aware else 1.0

    def observe_run(self, run_s: float) -> None:
        if run_s > 0:
            bisect.insort(self.finished_runs, run_s)

    def default_duration(self) -> float:
        """D for a job without a duration estimate: the median observed run time, else the assumed one."""
        runs = self.finished_runs
        if self.config.learn_duration and runs:
            return runs[(len(runs) - 1) // 2]
        return self.config.assumed_duration_s

    def sensitivity(self, js: JobState) -> float:
        ann = js.annotation
        if ann.network_sensitivity is not None:
            return ann.network_sensitivity
        if ann.spread_slowdown is not None:
            return sensitivity_from_slowdown(ann.spread_slowdown)
        return self.config.default_sensitivity

    def klass(self, js: JobState) -> str:
        ann = js.annotation
        if ann.network_sensitivity is None and ann.spread_slowdown is None:
            return "unknown"
        s = self.sensitivity(js)
        if s < self.config.insensitive_below:
            return "low"
        return "mid" if s < 0.5 else "high"

    def scales(self, klass: str) -> tuple[float, float]:
        """(node_factor, rack_factor) for a sensitivity class."""
        cfg = self.config
        return self.per_class.get(klass, (cfg.node_factor, cfg.rack_factor))

    def scales_by_class(self) -> dict[str, tuple[float, float]]:
        """(node_factor, rack_factor) of every class (what the tuner changes)."""
        return {c: self.scales(c) for c in CLASSES}

    def timers(self, js: JobState) -> tuple[float, float]:
        """(W_node, W_rack) in seconds on the locality clock (see `origin`)."""
        cfg = self.config
        s = self.sensitivity(js)
        if s < cfg.insensitive_below:
            return 0.0, 0.0
        node_f, rack_f = self.scales(self.klass(js))
        d = predicted_duration(js)
        extra = (slowdown_from_sensitivity(s) - 1.0) * (self.default_duration() if d is None else d)
        extra *= self.pressure
        w_node = min(cfg.age_cap_s, node_f * extra)
        return w_node, min(cfg.age_cap_s, max(w_node, rack_f * extra * self.cross_rack))

    def queued_since(self, js: JobState) -> float:
        """When the job's queueing began: eligibility, moved back by any queueing credited from before
        this simulation (the tuner's forward runs). The starvation guard and preemption count from here."""
        return js.eligible_since - js.extra.get(CREDIT_KEY, 0.0)

    def queued(self, js: JobState, now: float) -> float:
        return now - self.queued_since(js)

    def origin(self, js: JobState) -> float | None:
        """When the job's locality wait began (the timers count from here), None if it has not: since
        it became eligible it was never offered enough free GPUs without an L0 slot among them."""
        got = js.extra.get(CLOCK_KEY)
        if got is not None and got[0] == js.eligible_since:
            return got[1]
        credit = js.extra.get(CLOCK_CREDIT_KEY)
        return None if credit is None else js.eligible_since - credit

    def start_clock(self, js: JobState, now: float) -> float:
        """Start the job's locality wait now unless it runs already; returns its origin."""
        o = self.origin(js)
        if o is None:
            js.extra[CLOCK_KEY] = (js.eligible_since, now)
            o = now
        return o

    def waited(self, js: JobState, now: float) -> float:
        """Seconds of locality wait so far (0 before the clock starts)."""
        o = self.origin(js)
        return 0.0 if o is None else now - o


@PLACEMENTS.register("delay")
class DelayPlacement(PlacementPolicy):
    """Delay scheduling over L0 (fewest nodes, one rack) / L1 (one rack) / L2 (anywhere); see the module doc."""

    name = "delay"
    tracks_unplaced = True

    def __init__(self, config: DelayConfig | None = None, timers: DelayTimers | None = None) -> None:
        self.timers = timers or DelayTimers(config)
        self._reserved: JobState | None = None
        self._rack: int | None = None
        """The rack the reservation holds nodes in (None: nodes anywhere, for a job no rack can hold)."""
        self._running: dict[int, JobState] = {}
        """Running jobs by index (for the reservation's shadow time)."""
        self._shadow: tuple[float, int, float] | None = None
        """(time, holder index, shadow time) of the last shadow computation."""
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
        return self._reserved is None

    def reset(self, seed: int) -> None:
        self._reserved = None
        self._rack = None
        self._running = {}
        self._shadow = None
        self._network = None
        self.levels = [0, 0, 0]
        self._relaxed = self._deferred = False
        self.timers.finished_runs.clear()

    def note_started(self, js: JobState, now: float) -> None:
        self._running[js.idx] = js

    def note_stopped(self, js: JobState, now: float) -> None:
        self._running.pop(js.idx, None)

    def note_finished(self, js: JobState, now: float) -> None:
        self.timers.observe_run(js.executed_s)

    # ---------------------------------------------------------------- starvation guard
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

    def _free_for_others(self, js: JobState, cluster: ClusterState, now: float) -> tuple[list[int], int]:
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

    # ---------------------------------------------------------------- placement
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
            reserved = self._holder() is js
            free, avail = (cluster.free, cluster.total_free) if reserved else self._free_for_others(js, cluster, now)
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
            if self._reserved is js:
                self._reserved = self._rack = None
        return p


# -------------------------------------------------------------------------------------- preemption


@dataclass
class NetworkPreemptionConfig:
    sensitive_from: float = 0.5
    """Only jobs at least this sensitive preempt."""
    victim_below: float = 0.2
    """Only jobs less sensitive than this are preempted."""
    min_interval_s: float = 1800.0
    max_victims: int = 4
    guard_victims: int = 8
    """The starvation guard's holder may stop up to this many lower-priority jobs (of any sensitivity)
    on its reserved nodes to start now rather than wait for them to drain (0: it only waits)."""


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
        return self.config.guard_victims > 0 and self.placement is not None and self.placement.holder is js

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
        """Victims on the holder's reserved nodes whose GPUs give it L0, else one rack: jobs lower in the
        queue order, past the minimum interval, lowest priority first on the nodes with the most free
        plus freeable GPUs (fewest nodes disturbed); at most `guard_victims`."""
        assert self.placement is not None
        nodes = self.placement.reserved_nodes(cluster)
        inside = set(nodes)
        mine = order.key(js, now)
        on_node: dict[int, list[JobState]] = {}
        for v in running:
            if v is js or not self.eligible(v, now) or not order.key(v, now) > mine:
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
            for v in sorted(on_node.get(n, ()), key=lambda v: ([-x for x in order.key(v, now)], -v.idx)):
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
        if len(needed) > self.config.guard_victims:
            return None
        self.claims += 1
        return needed, where

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


# -------------------------------------------------------------------------------------- migration


@dataclass
class NetworkMigrationConfig:
    sensitive_from: float = 0.1
    """Only jobs at least this sensitive are moved (the delay timers' insensitive threshold: whether a
    move pays is the saving test's call)."""
    min_interval_s: float = 1800.0
    """A job is moved at most once per this long since its last start (no thrashing)."""
    gain_factor: float = 2.0
    """Move only when the predicted time saved is at least this many restart costs."""


@MIGRATIONS.register("network")
class NetworkMigration(MigrationPolicy):
    """Move a running sensitive job that was placed spread (not L0) onto a free L0 slot when the time it
    is predicted to save outweighs the restart: see the module doc."""

    name = "network"

    def __init__(self, timers: DelayTimers | None = None, config: NetworkMigrationConfig | None = None,
                 placement: DelayPlacement | None = None) -> None:
        self.timers = timers or DelayTimers()
        self.config = config or NetworkMigrationConfig()
        self.placement = placement
        """The delay placement whose starvation reservation moves must respect (None: no reservation)."""

    def remaining_work(self, js: JobState) -> float:
        """Predicted work left (consolidated seconds): the duration estimate minus the progress made;
        without an estimate, or once the job has outrun it (the estimate was wrong), at least as much
        again as the job has done (heavy-tailed run times) and at least the median finished run time
        minus its progress."""
        d = predicted_duration(js)
        w = js.work_done
        if d is not None and w < d:
            return d - w
        return max(self.timers.default_duration() - w, w)

    def saving(self, js: JobState, restart_cost_s: float) -> float:
        """Seconds saved by moving to full speed now: the rest at the current (observed) speed, minus
        the rest at full speed plus the progress the restart loses."""
        rest = self.remaining_work(js)
        return rest / max(js.speed, 1e-9) - (rest + restart_cost_s)

    def moves(self, running, cluster, order, now, restart_cost_s):
        cfg = self.config
        cands = [
            js for js in running
            if js.speed < 1.0 and now - js.last_start >= cfg.min_interval_s
            and self.timers.sensitivity(js) >= cfg.sensitive_from
            and not is_consolidated(js.placement, js.num_gpus, cluster)
        ]
        if not cands:
            return []
        cands.sort(key=lambda js: (order.key(js, now), js.idx))
        if self.placement is not None:
            free, avail = self.placement.free_for_moves(cluster)
        else:
            free, avail = list(cluster.free), cluster.total_free
        out: list[tuple[JobState, Placement]] = []
        for js in cands:
            if js.num_gpus > avail or self.saving(js, restart_cost_s) < cfg.gain_factor * max(restart_cost_s, 1.0):
                continue
            p = consolidated(js.num_gpus, cluster, free)
            if p is None:
                continue
            for n, k in p:
                free[n] -= k
            avail -= js.num_gpus
            out.append((js, p))
        return out


# -------------------------------------------------------------------------------------- factory


@dataclass
class DelaySetup:
    """Everything the `delay` schedulers are built from (all optional)."""

    config: DelayConfig = field(default_factory=DelayConfig)
    preemption: NetworkPreemptionConfig | None = field(default_factory=NetworkPreemptionConfig)
    migration: NetworkMigrationConfig | None = field(default_factory=NetworkMigrationConfig)
    order: str = "fifo-nb"


def delay_parts(setup: DelaySetup | None = None
                ) -> tuple[QueueOrder, DelayPlacement, NetworkPreemption | None, NetworkMigration | None]:
    setup = setup or DelaySetup()
    timers = DelayTimers(setup.config)
    placement = DelayPlacement(timers=timers)
    pre = NetworkPreemption(timers, setup.preemption, placement) if setup.preemption is not None else None
    mig = NetworkMigration(timers, setup.migration, placement) if setup.migration is not None else None
    return ORDERS.create(setup.order), placement, pre, mig


__all__ = [
    "CLASSES", "CLOCK_CREDIT_KEY", "CLOCK_KEY", "CREDIT_KEY", "DelayConfig", "DelayPlacement", "DelaySetup",
    "DelayTimers", "NetworkMigration", "NetworkMigrationConfig", "NetworkPreemption", "NetworkPreemptionConfig",
    "NonBlockingFIFO", "delay_parts",
]
