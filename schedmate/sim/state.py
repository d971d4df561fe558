"""Mutable simulation state: per-job runtime state and the cluster's free GPUs.

Policies receive these objects read-only; only the engine mutates them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

from schedmate.records import Annotation, ClusterSpec, Job

if TYPE_CHECKING:
    from schedmate.jobtable import JobView

Placement = tuple[tuple[int, int], ...]
"""((node index, GPUs on that node), ...), node indices ascending."""


class Status(IntEnum):
    pending = 0  # not yet submitted
    waiting = 1
    running = 2
    done = 3


@dataclass(eq=False, slots=True)
class JobState:
    """A job during a replay. `work_*` are in consolidated-seconds: one unit per second at full speed.

    `job` is the trace's record, or a `JobView` of the engine's job table (same fields); the fields the
    engine reads on every event (`num_gpus`, `submit_time`, `spread_slowdown`) are copied here."""

    job: Job | JobView
    idx: int
    annotation: Annotation
    status: Status = Status.pending
    work_total: float = 0.0
    work_done: float = 0.0
    speed: float = 1.0
    last_update: float = 0.0
    version: int = 0
    """Bumped whenever the pending finish event becomes stale."""
    key_version: int = 0
    """Bumped whenever a pending key-change event becomes stale."""
    placement: Placement = ()
    nodes_spanned: int = 0
    racks_spanned: int = 0
    eligible_since: float = 0.0
    """When the job last became eligible to run (submission, preemption or a move); queueing, the delay
    scheduler's starvation guard and its locality clock count from here."""
    first_start: float | None = None
    last_start: float = 0.0
    end_time: float | None = None
    executed_s: float = 0.0
    """Wall seconds spent running (all attempts)."""
    queued_s: float = 0.0
    preemptions: int = 0
    last_preempted: float = float("-inf")
    migrations: int = 0
    """Times the job was moved while running (stopped and restarted elsewhere at once)."""
    comm_lost_gpu_s: float = 0.0
    max_nodes: int = 0
    max_racks: int = 0
    ended_by: str = "trace"
    """`trace` when the job ran to its recorded end; `signal` when a failure signal ended it earlier."""
    extra: dict = field(default_factory=dict)
    """Scratch space for policies (e.g. Tiresias queue level); keys are namespaced by policy name."""
    num_gpus: int = field(init=False)
    submit_time: float = field(init=False)
    spread_slowdown: float = field(init=False)
    # the engine's own bookkeeping (None when not in that structure)
    queue_entry: tuple | None = field(default=None, init=False, repr=False)
    class_entry: tuple | None = field(default=None, init=False, repr=False)
    class_until: float = field(default=float("-inf"), init=False, repr=False)
    """While running under an order with `stable_classes`: before this time `class_entry[0]` is the job's
    preemption class (the engine sets it a safe margin before the next announced key change)."""
    end_entry: tuple | None = field(default=None, init=False, repr=False)
    wake_at: float | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        job = self.job
        self.num_gpus = job.num_gpus
        self.submit_time = job.submit_time
        self.spread_slowdown = job.spread_slowdown

    def attained_service(self, now: float) -> float:
        """GPU-seconds executed so far (Tiresias' 2D attained service)."""
        running = now - self.last_start if self.status is Status.running else 0.0
        return (self.executed_s + running) * self.num_gpus

    def executed_at(self, now: float) -> float:
        return self.executed_s + (now - self.last_start if self.status is Status.running else 0.0)


class ClusterState:
    """Free GPUs per node with rack bookkeeping. Placement functions read `free` and `spec`."""

    __slots__ = (
        "_packed_shape",
        "capacity",
        "free",
        "max_node_gpus",
        "nodes_in_rack",
        "nodes_with_free",
        "queued_gpus",
        "rack_of",
        "spec",
        "total_free",
        "total_gpus",
    )

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec
        self.capacity = [n.gpus for n in spec.nodes]
        self.free = list(self.capacity)
        self.rack_of = [n.rack for n in spec.nodes]
        self.nodes_in_rack: dict[int, list[int]] = {}
        for i, r in enumerate(self.rack_of):
            self.nodes_in_rack.setdefault(r, []).append(i)
        self.total_gpus = sum(self.capacity)
        self.total_free = self.total_gpus
        self.queued_gpus = 0
        """GPUs asked for by the jobs waiting in the queue (kept by the engine; what a scheduler sees)."""
        self.max_node_gpus = max(self.capacity)
        self.nodes_with_free = [0] * (self.max_node_gpus + 1)
        """nodes_with_free[k]: how many nodes have exactly k free GPUs (fast 'does it fit' checks)."""
        for f in self.free:
            self.nodes_with_free[f] += 1
        self._packed_shape: dict[int, tuple[int, bool]] = {}

    def packed_shape(self, gpus: int) -> tuple[int, bool]:
        """(fewest nodes that could ever hold `gpus`, whether some rack could hold them on that many
        nodes): what a consolidated placement of that size looks like on the empty cluster. Cached."""
        shape = self._packed_shape.get(gpus)
        if shape is None:
            def fewest(caps: list[int]) -> int:
                need, count = gpus, 0
                for cap in sorted(caps, reverse=True):
                    if need <= 0:
                        break
                    need -= cap
                    count += 1
                return max(1, count) if need <= 0 else 1 << 30

            target = fewest(self.capacity)
            in_rack = any(fewest([self.capacity[n] for n in nodes]) <= target for nodes in self.nodes_in_rack.values())
            shape = self._packed_shape[gpus] = (target, in_rack)
        return shape

    def top_free_sum(self, k: int) -> int:
        """Free GPUs on the k nodes with the most free GPUs (from the counts, without sorting)."""
        total, counts = 0, self.nodes_with_free
        for f in range(len(counts) - 1, 0, -1):
            c = counts[f]
            if c:
                take = c if c < k else k  # noqa: FURB136 - hot path, faster than min()
                total += take * f
                k -= take
                if k == 0:
                    break
        return total

    def fits_on_one_node(self, gpus: int) -> bool:
        return any(self.nodes_with_free[gpus:])

    def allocate(self, placement: Placement) -> None:
        for node, gpus in placement:
            f = self.free[node]
            if gpus <= 0 or f < gpus:
                raise RuntimeError(f"double allocation on node {node}: {gpus} asked, {f} free")
            self.nodes_with_free[f] -= 1
            self.nodes_with_free[f - gpus] += 1
            self.free[node] = f - gpus
            self.total_free -= gpus

    def release(self, placement: Placement) -> None:
        for node, gpus in placement:
            f = self.free[node]
            if f + gpus > self.capacity[node]:
                raise RuntimeError(f"node {node} released more GPUs than it has")
            self.nodes_with_free[f] -= 1
            self.nodes_with_free[f + gpus] += 1
            self.free[node] = f + gpus
            self.total_free += gpus

    def span(self, placement: Placement) -> tuple[int, int]:
        """(nodes, racks) a placement spans."""
        return len(placement), len({self.rack_of[n] for n, _ in placement})
