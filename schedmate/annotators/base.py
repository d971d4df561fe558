"""Annotators turn what is known about a job into an `Annotation`.

The engine calls `on_submit` when a job arrives and `on_finish` when it ends (so history-based
annotators can learn, seeing only jobs that finished before the query time). Annotators that
follow a running job (log monitor) may update the annotation through `on_progress`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from schedmate.records import Annotation, Job
from schedmate.registry import Registry

if TYPE_CHECKING:
    from schedmate.sim.state import JobState
    from schedmate.sim.view import SchedulerView


class Annotator(ABC):
    name: str = "annotator"

    @abstractmethod
    def on_submit(self, job: Job, now: float) -> Annotation:
        """Annotation for a job at its submission; must not read the future."""

    def on_finish(self, job: Job, now: float, runtime_s: float) -> None:
        """A job ended at `now` after running `runtime_s` seconds of wall time."""

    monitor_interval_s: float | None = None
    """If set, the engine calls `on_running` for every running job at this period (log monitoring)."""

    def monitor_delay(self, js: JobState, run_s: float) -> float:
        """Seconds from now to the next look at a running job that has run `run_s` in this attempt.
        Default: the fixed `monitor_interval_s`; an annotator may look more often early in a run."""
        return self.monitor_interval_s or 0.0

    def on_running(self, sim: SchedulerView, js: JobState, now: float) -> Annotation | None:
        """A running job, every `monitor_interval_s`: return an updated annotation, or None for no change.
        May end the job through `sim.terminate(js, now)` or requeue it through `sim.preempt(js, now)`."""
        return None

    def reset(self, seed: int) -> None:
        """Called once before a replay."""


ANNOTATORS: Registry[Annotator] = Registry("annotator")
