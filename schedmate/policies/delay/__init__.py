"""Network-sensitive delay scheduling over locality levels, with network-sensitive preemption and migration.

One module per decision, each with its own documentation:

* `placement`: the `delay` placement. A job takes the best locality level free (L0 one node or the
  fewest nodes in one rack, L1 one rack, L2 anywhere), or waits for a better one while its timers run;
  relaxed placements only take what the consolidated ones leave (locality first).
* `timers`: `DelayConfig` and `DelayTimers`. How long a job waits for each level, from its predicted
  sensitivity and duration, the queue pressure and the network, counted on its locality clock.
* `guard`: the starvation guard. The job that has queued longest past the age cap reserves the nodes
  its consolidated placement would take.
* `preemption`: the `network` preemption. A sensitive job held back for locality stops lower-priority
  insensitive jobs for an L0 slot, and the guard's holder claims its reserved nodes.
* `migration`: the `network` migration. A spread sensitive job moves onto a freed L0 slot when the
  predicted saving outweighs the restart.

The queue order the `delay` schedulers use by default, `fifo-nb`, is in `schedmate.policies.orders`;
the auto-tuner of the timers in `schedmate.policies.tuner`. `delay_parts` builds the parts that share
one set of timers and one reservation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedmate.policies.base import ORDERS, QueueOrder
from schedmate.policies.delay.guard import StarvationGuard
from schedmate.policies.delay.migration import NetworkMigration, NetworkMigrationConfig
from schedmate.policies.delay.placement import DelayPlacement
from schedmate.policies.delay.preemption import NetworkPreemption, NetworkPreemptionConfig
from schedmate.policies.delay.timers import (
    CLASSES,
    CLOCK_CREDIT_KEY,
    CLOCK_KEY,
    CREDIT_KEY,
    DelayConfig,
    DelayTimers,
)
from schedmate.policies.orders import NonBlockingFIFO


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
    "NonBlockingFIFO", "StarvationGuard", "delay_parts",
]
