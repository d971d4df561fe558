"""The small interfaces a scheduler is made of, and the registries that find them by name.

A scheduler is a queue order (who goes first), a placement (where, or wait), and optionally
preemption (whom to stop for whom) and migration (whom to move while it runs). Every implementation takes the same arguments: the job's
runtime state (read-only), the cluster state (read-only) and the simulated time. Policies read
annotations (`js.annotation`), never the truth fields of `js.job`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schedmate.registry import Registry
from schedmate.sim.state import ClusterState, JobState, Placement

if TYPE_CHECKING:
    from schedmate.sim.view import SchedulerView


@dataclass(frozen=True, slots=True)
class Wait:
    """Do not place now; ask again at `until` (a delay timer, in the spirit of a Permit with timeout)."""

    until: float


Decision = Placement | Wait | None
"""A placement, a request to wait until a time, or None when the job cannot fit now."""


class QueueOrder(ABC):
    """Decides who goes first. Lower keys go first; ties are broken by the engine's submission order."""

    name: str = "order"
    blocking: bool = False
    """A job that cannot be placed blocks the jobs behind it (strict FIFO); else they may pass it."""
    preemptive: bool = False
    """Whether running jobs of a worse class may be preempted for a waiting job of a better class."""

    @abstractmethod
    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        """Sort key of a waiting job; must only change at times announced by `next_key_change`."""

    stable_classes: bool = False
    """A running job's `preemption_class` is the very same float from one announced key change to the next
    (e.g. a Tiresias level), not only about the same (SRTF's `now + remaining` moves in the last bits): the
    engine's cached class (`JobState.class_entry`, before `JobState.class_until`) may then stand for it."""

    def preemption_class(self, js: JobState, now: float) -> float:
        """Lower is more important. A waiting job may preempt running jobs of a strictly higher class.

        Contract: a job of a worse class never sorts before a job of a better class (keys agree with
        classes), and a running job's class only changes at times announced by `next_key_change`."""
        return 0.0

    def next_key_change(self, js: JobState, now: float) -> float | None:
        """When this job's key or preemption class will next change (None: not on its own)."""
        return None

    def reset(self) -> None:
        """Called once before a replay."""


class PlacementPolicy(ABC):
    """Decides where a job's GPUs go, or that it should wait."""

    name: str = "placement"
    monotone: bool = True
    """If a job of g GPUs cannot be placed (None), no job of more GPUs can be placed either until
    GPUs are freed; the engine then skips bigger jobs in the same pass without asking."""
    stateless: bool = False
    """`place` depends only on the job's GPU count and the free GPUs it is given (not on the time, the job's
    other fields or earlier calls), changes nothing, never returns `Wait` and never finds room on free GPUs
    that are, node by node, no more than some it found none on; the policy asks for no relaxed pass and
    notes no unplaced jobs. The engine may then skip a pass that could only repeat the last one's
    failures (`sim.passes`)."""

    @abstractmethod
    def place(self, js: JobState, cluster: ClusterState, now: float, free: list[int] | None = None) -> Decision:
        """Choose GPUs for `js` given per-node free GPUs (`free`, default the cluster's own)."""

    def reset(self, seed: int) -> None:
        """Called once before a replay with the run's seed."""

    tracks_unplaced: bool = False
    """Whether the engine should call `note_unplaced` for every job left unplaced (None) in a pass,
    including jobs it skipped without asking `place` (too big for the free GPUs)."""

    def note_unplaced(self, js: JobState, cluster: ClusterState, now: float) -> None:
        """A job got no placement in this pass (e.g. for a starvation guard's reservation)."""

    def note_started(self, js: JobState, now: float) -> None:
        """A job started running on `js.placement` (also after a move)."""

    def note_stopped(self, js: JobState, now: float) -> None:
        """A running job stopped (finished, preempted, moved or ended by a signal); `js.placement` is
        still the one it ran on."""

    def begin_relaxed_pass(self) -> bool:
        """Called after every scheduling pass: True asks the engine for a second pass over the queue
        now, bracketed by `end_relaxed_pass` (e.g. for placements a policy makes only on the GPUs that
        the jobs it could place at their preferred level left). Default: no second pass."""
        return False

    def end_relaxed_pass(self) -> None:
        """The second pass asked for by `begin_relaxed_pass` is over."""

    def note_finished(self, js: JobState, now: float) -> None:
        """A job ended (finished, or was ended by a signal): what any scheduler observes of it, e.g. its
        run time, for defaults learned from history."""


class PreemptionPolicy(ABC):
    """Chooses running jobs to stop so that a waiting job can start."""

    name: str = "preemption"
    any_order: bool = False
    """Consulted whatever the queue order's `preemptive` flag: the policy judges priority itself
    (it is handed the running jobs in index order, not worst class first), and it may also be asked
    to `upgrade` a placement the placement policy found."""

    def failure_holds_until(self) -> float:
        """Called right after `victims` returned None: a time before which `victims` would return None
        again for the same waiting job's class, the same running jobs (and classes) and the same free GPUs.
        The default, -inf, promises nothing (the engine then never skips a pass that asked for victims)."""
        return -math.inf

    def ineligible_until(self, victim: JobState, now: float) -> float:
        """A time before which `victims` skips `victim` (never chooses it, whatever its class), or -inf
        (the default: no promise). Lets the engine keep a pass's proof of idleness (`sim.passes`)."""
        return -math.inf

    def wants(self, js: JobState, now: float) -> bool:
        """Cheap pre-check: may `js` preempt at all now? (False keeps the pass going without a search.)"""
        return True

    def upgrade(
        self,
        js: JobState,
        proposed: Placement,
        running: Iterable[JobState],
        cluster: ClusterState,
        placement: PlacementPolicy,
        order: QueueOrder,
        now: float,
    ) -> tuple[list[JobState], Placement] | None:
        """Victims whose preemption gives `js` a better placement than `proposed`, or None (the
        default: start on `proposed`). Only asked when `any_order` is set."""
        return None

    @abstractmethod
    def victims(
        self,
        js: JobState,
        running: Iterable[JobState],
        cluster: ClusterState,
        placement: PlacementPolicy,
        order: QueueOrder,
        now: float,
    ) -> tuple[list[JobState], Placement] | None:
        """Victims and the placement they make possible, or None if preemption cannot help."""


class MigrationPolicy(ABC):
    """Chooses running jobs to move, while they run, onto better placements made of free GPUs."""

    name: str = "migration"

    @abstractmethod
    def moves(self, running: Iterable[JobState], cluster: ClusterState, order: QueueOrder, now: float,
              restart_cost_s: float) -> list[tuple[JobState, Placement]]:
        """(job, new placement) pairs, applied in turn after a scheduling pass; each placement must use
        only GPUs free at that point (earlier moves in the list included). A move costs the job
        `restart_cost_s` of progress, as a preemption does."""


@dataclass
class Scheduler:
    """A queue order, a placement and (optionally) preemption, composed."""

    order: QueueOrder
    placement: PlacementPolicy
    preemption: PreemptionPolicy | None = None
    migration: MigrationPolicy | None = None
    backfill: bool = True
    """EASY backfilling behind a blocked head (only for blocking orders, only with duration estimates)."""
    backfill_depth: int = 200
    """How many queued jobs behind a blocked head a pass considers for backfilling (as Slurm's
    bf_max_job_test bounds its backfill scan)."""
    tick_s: float | None = None
    """Period of `on_tick` calls, for policies that need one (e.g. an auto-tuner)."""
    on_tick: Callable[[SchedulerView, float], bool | None] | None = None
    """Called every `tick_s`; returns whether it changed anything the policies decide on (then a
    scheduling pass follows at once; None counts as a change)."""
    name: str = ""

    def describe(self) -> str:
        return self.name or f"{self.order.name}+{self.placement.name}"


ORDERS: Registry[QueueOrder] = Registry("queue order")
PLACEMENTS: Registry[PlacementPolicy] = Registry("placement")
PREEMPTIONS: Registry[PreemptionPolicy] = Registry("preemption")
MIGRATIONS: Registry[MigrationPolicy] = Registry("migration")
