"""What policies, annotators and adapters see of a running simulation: a protocol below all of them.

The simulator (`sim/engine.py`) satisfies it; policies and annotators are typed against it, so the
dependency points one way: engine -> policies/annotators -> this protocol, never back to the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from schedmate.records import ClusterSpec
    from schedmate.sim.state import ClusterState, JobState


class SchedulerView(Protocol):
    now: float
    spec: ClusterSpec
    cluster: ClusterState
    jobs: Sequence[JobState]
    """Every job's state by index (replay order). A job that has ended may come back as a snapshot
    rebuilt from the engine's result columns (see `schedmate.sim.jobs`)."""
    waiting: Any
    """sorted waiting queue of JobState"""
    running: set[JobState]
    log: list[dict]
    config: Any
    scheduler: Any
    events: int

    def preempt(self, js: JobState, t: float) -> None: ...

    def terminate(self, js: JobState, t: float, reason: str = "signal") -> None: ...


__all__ = ["SchedulerView"]
