"""The replay engine's state and event plumbing, shared by the modules the engine is split into.

Holds the event kinds, `ReplayConfig`, `Timeseries` and `SimulatorCore`: the state of one replay (the
job table and job states, the cluster and network, the waiting queue and the running sets with their
indexes, the event heap, counters) and `push`, which puts an event on the heap. The layers above it
subclass it in turn: `sim.transitions` (what happens to a job), `sim.passes` (the scheduling pass) and
`sim.engine` (the event loop, and the `Simulator` everything else uses).
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sortedcontainers import SortedList

from schedmate.jobtable import JobTable
from schedmate.policies.base import PlacementPolicy, QueueOrder, Scheduler
from schedmate.records import Annotation, ClusterSpec, Job
from schedmate.sim.jobs import JobStates
from schedmate.sim.network import NetworkModel
from schedmate.sim.state import ClusterState, JobState, Placement

if TYPE_CHECKING:
    from schedmate.annotators.base import Annotator
    from schedmate.sim.view import SchedulerView

ARRIVAL, FINISH, KEY_CHANGE, WAKE, TICK, MONITOR = 0, 1, 2, 3, 4, 5


@dataclass
class ReplayConfig:
    seed: int = 0
    restart_cost_s: float = 60.0
    """Consolidated-seconds of progress a preempted job loses (checkpoint restore and lost steps)."""
    record_timeseries: bool = True
    audit: bool = False
    """Keep every start/stop with its placement in `Simulator.audit` (tests check invariants on it)."""
    skip_idle_passes: bool = True
    """Skip a scheduling pass that provably could start and preempt nothing (`sim.passes`); the results are the
    same either way (off: every pass walks the queue, for tests that check that)."""


@dataclass
class Timeseries:
    t: array = field(default_factory=lambda: array("d"))
    queued: array = field(default_factory=lambda: array("l"))
    busy_gpus: array = field(default_factory=lambda: array("l"))


class SimulatorCore:
    """The state of one replay and the event heap (see the module doc); `Simulator` is what to use."""

    def __init__(
        self,
        jobs: Iterable[Job] | JobTable,
        cluster: ClusterSpec,
        scheduler: Scheduler,
        annotator: Annotator,
        config: ReplayConfig | None = None,
        # called with the Simulator; typed by the view adapters get, since this module cannot import the engine
        on_annotation: Callable[[SchedulerView, JobState, Any, float], None] | None = None,
    ) -> None:
        self.config = config or ReplayConfig()
        self.on_annotation = on_annotation
        """Adapter hook called after every annotation update (see `adapters/`)."""
        self.spec = cluster
        self.cluster = ClusterState(cluster)
        self.network = NetworkModel(self.cluster, cluster.network)
        self.scheduler = scheduler
        self.annotator = annotator
        table = (jobs if isinstance(jobs, JobTable) else JobTable.from_jobs(jobs)).sorted()
        too_big = np.flatnonzero(table.num_gpus > self.cluster.total_gpus)
        if len(too_big):
            raise ValueError(
                f"{len(too_big)} job(s) ask for more GPUs than the cluster has ({self.cluster.total_gpus}), "
                f"e.g. {[str(table.id[i]) for i in too_big[:3]]}: use a bigger --cluster or filter the trace"
            )
        self.table = table
        self.jobs = JobStates(table, Annotation(job_id=""))
        self.now = 0.0
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._next_arrival = 0
        """Index of the next job to arrive (arrivals are read from the table, not the heap)."""
        self._seq = 0
        self.waiting: SortedList = SortedList()
        self.running: set[JobState] = set()
        self.running_by_class: SortedList = SortedList()
        self.waiting_by_gpus: dict[int, SortedList] | None = None
        """The waiting queue split by GPU demand, same keys: a pass skips a whole demand at once. Built
        when a pass first merges it (`queue_by_gpus`), kept from then on (a blocked FIFO never needs it)."""
        self.running_by_end: SortedList = SortedList()
        """(predicted end, idx) of running jobs with a prediction; a running job's predicted end does not
        move. Kept only for blocking orders with backfilling, the only passes that read it. Jobs without a
        prediction are left out (they would sort last, where a reservation's search gives up)."""
        self._track_ends = scheduler.order.blocking and scheduler.backfill
        self.events = 0
        self.passes = 0
        self.timeseries = Timeseries()
        self.log: list[dict] = []
        """Policy decisions worth keeping (e.g. tuned timers over time)."""
        self._dirty = False
        self._changes = 0
        """Counts what can change a pass's outcome other than an arrival (`sim.passes`: idle passes)."""
        self._arrived_min = 1 << 30
        """The smallest GPU demand queued since the last pass."""
        self._skip_idle = False
        order, placement = scheduler.order, scheduler.placement
        self._keys_move = type(order).next_key_change is not QueueOrder.next_key_change
        """Whether the order may announce key changes (else `_announce_key_change` has nothing to ask)."""
        self._preemptive = order.preemptive
        """Whether running jobs are kept by class (`running_by_class`)."""
        self._notes_runs = (type(placement).note_started is not PlacementPolicy.note_started
                            or type(placement).note_stopped is not PlacementPolicy.note_stopped)
        """Whether the placement keeps notes of starts and stops (else they are not called)."""
        """Whether idle passes may be skipped in this replay (set when it starts)."""
        self._idle: tuple | None = None
        """What the last pass that did nothing proved (see `SchedulingPasses._schedule`)."""
        self._arrivals_only = False
        """Whether a pass after arrivals alone may try just the new jobs (`SchedulingPasses._try_newly_queued`)."""
        self._queued_since: list[tuple] = []
        """Queue entries added since the last pass (arrivals, re-queued jobs)."""
        self.passes_incremental = 0
        """Passes (in `passes`, not skipped) that tried only the jobs queued since the pass before."""
        self._idle_after_preemption = False
        """Whether `_idle` was proved by a pass that preempted (`SchedulingPasses._settled_after`)."""
        self.passes_skipped_after_preemption = 0
        """Skipped passes (in `passes_skipped`) that were owed after a preemption."""
        self.passes_skipped = 0
        """Passes counted in `passes` that were skipped as idle (they would have walked the queue in vain)."""
        self.ended = 0
        """Jobs that have ended, however (finish, failure signal, zero length)."""
        self.audit: list[tuple[float, str, int, Placement]] = []

    def push(self, t: float, kind: int, idx: int = -1, version: int = 0) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, idx, version))
