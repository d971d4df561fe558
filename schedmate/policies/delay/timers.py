"""The delay scheduler's timers: how long a job waits for locality, counted on its locality clock.

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
multiplies the spread cost; they were chosen on the Philly-derived experiment (`eval/delay`, see its
README). No timer is longer than the age cap (14 days), which is also the starvation guard's backstop.
`node_factor[c]`/`rack_factor[c]` are per sensitivity class `c` (`unknown`, `low` < 0.1,
`mid` [0.1, 0.5), `high` [0.5, 1]); the fixed policy uses the configured factors for every class, the
auto-tuner (`schedmate.policies.tuner`) sets them per class.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from schedmate.policies.estimates import predicted_duration
from schedmate.records import sensitivity_from_slowdown, slowdown_from_sensitivity
from schedmate.sim.state import ClusterState, JobState

CLASSES = ("unknown", "low", "mid", "high")
CREDIT_KEY = "delay:credit"
"""`js.extra[CREDIT_KEY]`: seconds already queued before this simulation (forward simulations)."""
CLOCK_KEY = "delay:clock"
"""`js.extra[CLOCK_KEY]`: (eligible_since, t): the locality wait of the attempt that became eligible
at `eligible_since` began at `t` (a preemption makes a new attempt, with a new clock)."""
CLOCK_CREDIT_KEY = "delay:clock-credit"
"""`js.extra[CLOCK_CREDIT_KEY]`: seconds of locality wait already run before this simulation (forward
simulations of a job whose clock had started); its clock then counts from its eligibility."""


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
    """No timer is longer than this, and after this much queueing any job may hold the starvation
    guard's reservation, whatever its rule (`schedmate.policies.delay.guard`)."""
    guard: str = "cost"
    """The starvation guard's rule for when a job may hold the reservation (`GUARD_RULES` in
    `schedmate.policies.delay.guard`): `cost`, once it has queued `guard_factor` times what its run costs
    the cluster (its GPU-time over the cluster's GPUs), or `age`, only the age cap (the rule until
    session 4)."""
    guard_factor: float = 20.0
    """The `cost` rule's multiple: a job may hold the reservation once it has queued this many times its
    GPUs x its predicted duration (the mean finished run time without one) / the cluster's GPUs."""
    guard_wait_factor: float = 4.0
    """Under the `cost` rule the holder keeps free GPUs of its reservation idle for itself (others may
    not take them) only once it has queued this many times the median wait of the last `guard_window`
    jobs to start, i.e. when it waits much longer than jobs do now; before that it may only claim its
    nodes. (Under the `age` rule it always does.)"""
    guard_window: int = 100
    guard_backstop: float = 1.0
    """When the guard's claims must pay (`NetworkPreemptionConfig.guard_pay` > 0), a holder that jobs
    started after it began queueing have passed, while it held the reservation, with this many times its
    GPU count in all, claims whether or not the claim pays (as it does after the age cap): the starvation
    backstop. A job the queue does not pass (e.g. the oldest of alike jobs) is never overdue: it starts
    with the next GPUs to free."""
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
        if min(self.node_factor, self.rack_factor, self.age_cap_s, self.assumed_duration_s, self.guard_factor) < 0:
            raise ValueError("delay timers must be >= 0")
        if not 0.0 <= self.default_sensitivity <= 1.0:
            raise ValueError("default_sensitivity must be in [0, 1]")
        if self.guard_window < 1 or self.guard_wait_factor < 0 or self.guard_backstop < 0:
            raise ValueError("guard_window must be >= 1, guard_wait_factor and guard_backstop >= 0")


class DelayTimers:
    """The timer function shared by the delay placement, the network preemption and the tuner."""

    def __init__(self, config: DelayConfig | None = None) -> None:
        self.config = config or DelayConfig()
        self.per_class: dict[str, tuple[float, float]] = {}
        """class -> (node_factor, rack_factor), overriding the config (set by the tuner)."""
        self.finished_runs: list[float] = []
        """Run times of the jobs finished so far, sorted (for the learned default duration); set it
        with `set_runs`."""
        self.runs_total = 0.0
        """Their sum (for `mean_duration`)."""
        self._suffix: list[float] | None = None
        """Suffix sums of `finished_runs` (for `mean_residual`), rebuilt when a run is added."""
        self.pressure = 1.0
        """Queue pressure the timers are multiplied by (`load_aware`; set by the placement each pass)."""
        self.cross_rack = 1.0
        """How much more a spread job's communication costs across racks than inside one, on the
        cluster's network (set by the placement from the cluster spec; 1 until then)."""
        self.guard_scale = 1.0
        """Multiplies the starvation guard's `guard_factor` (set by the tuner)."""

    def copy(self) -> DelayTimers:
        t = DelayTimers(self.config)
        t.per_class = dict(self.per_class)
        t.set_runs(self.finished_runs)
        t.cross_rack = self.cross_rack
        t.pressure = self.pressure
        t.guard_scale = self.guard_scale
        return t

    def learn_network(self, cluster: ClusterState) -> None:
        net = cluster.spec.network
        factor = net.cross_rack_penalty * (net.uplink_oversubscription if net.contention else 1.0)
        self.cross_rack = factor if self.config.network_aware else 1.0

    def observe_run(self, run_s: float) -> None:
        if run_s > 0:
            bisect.insort(self.finished_runs, run_s)
            self.runs_total += run_s

    def mean_residual(self, ran_s: float) -> float:
        """The expected remaining run of a job without an estimate that has run `ran_s`: the mean of the
        finished runs longer than that, minus `ran_s` (the mean run when none is that long; the assumed
        duration minus `ran_s` before any job finished; at least 0)."""
        runs = self.finished_runs
        if not (self.config.learn_duration and runs):
            return max(0.0, self.config.assumed_duration_s - ran_s)
        if self._suffix is None or len(self._suffix) != len(runs) + 1:
            suffix = [0.0] * (len(runs) + 1)
            for i in range(len(runs) - 1, -1, -1):
                suffix[i] = suffix[i + 1] + runs[i]
            self._suffix = suffix
        i = bisect.bisect_right(runs, ran_s)
        if i == len(runs):  # it has run longer than any finished run: no evidence, the mean run
            return self.mean_duration()
        return max(0.0, self._suffix[i] / (len(runs) - i) - ran_s)

    def set_runs(self, runs: list[float]) -> None:
        """Start from these observed run times (sorted), e.g. none before a replay."""
        self.finished_runs = list(runs)
        self.runs_total = sum(runs)
        self._suffix = None

    def default_duration(self) -> float:
        """D for a job without a duration estimate: the median observed run time, else the assumed one."""
        runs = self.finished_runs
        if self.config.learn_duration and runs:
            return runs[(len(runs) - 1) // 2]
        return self.config.assumed_duration_s

    def mean_duration(self) -> float:
        """The expected run time of a job without a duration estimate: the mean observed run time (more
        than the median when run times are heavy-tailed), else the assumed one."""
        runs = self.finished_runs
        if self.config.learn_duration and runs:
            return self.runs_total / len(runs)
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

    def guard_factor(self) -> float:
        """The starvation guard's `guard_factor` as the tuner set it (`guard_scale` times the config's)."""
        return self.config.guard_factor * self.guard_scale

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


__all__ = ["CLASSES", "CLOCK_CREDIT_KEY", "CLOCK_KEY", "CREDIT_KEY", "DelayConfig", "DelayTimers"]
