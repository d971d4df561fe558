"""Network-sensitive migration: move a spread sensitive job onto a freed consolidated slot.

**Migration** (`NetworkMigration`, registered `network` among migrations): after each scheduling pass,
a running job with s >= `sensitive_from` that runs spread (not L0) and slower than full speed, and that
has run `min_interval_s` since its last start, moves onto a free L0 slot when the time it is predicted
to save, rest / speed - (rest + restart cost), is at least `gain_factor` restart costs. `rest` is the
predicted duration minus the progress made (without an estimate, or once the job has outrun it: at
least as much again as it has done, and at least the median finished run time minus its progress);
`speed` is its current observed throughput. Jobs are taken in queue order; the freed spread GPUs go to the queue in another pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from schedmate.policies.base import MIGRATIONS, MigrationPolicy
from schedmate.policies.delay.timers import DelayTimers
from schedmate.policies.estimates import predicted_duration
from schedmate.policies.placements import consolidated, is_consolidated
from schedmate.sim.state import JobState, Placement

if TYPE_CHECKING:
    from schedmate.policies.delay.placement import DelayPlacement


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
            free, avail = self.placement.guard.free_for_moves(cluster, now)
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



__all__ = ["NetworkMigration", "NetworkMigrationConfig"]
