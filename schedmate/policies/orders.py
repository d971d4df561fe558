"""Queue orders: FIFO, non-blocking FIFO, SJF, SRTF, QSSF (Helios) and Tiresias (discretised 2D-LAS).

Jobs whose annotation carries no duration estimate sort after every job that has one, in
submission order: with the `none` annotator SJF, SRTF and QSSF degrade to a non-blocking FIFO.
"""

from __future__ import annotations

import math

from schedmate.policies.base import ORDERS, QueueOrder
from schedmate.policies.estimates import predicted_duration, predicted_remaining
from schedmate.sim.state import JobState, Status

INF = math.inf


@ORDERS.register("fifo")
class FIFO(QueueOrder):
    """First come, first served. Blocking: the head waits for room and nothing passes it, except by
    EASY backfilling (`Scheduler.backfill`), which needs duration estimates."""

    name = "fifo"
    blocking = True

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        return (js.submit_time,)


@ORDERS.register("fifo-nb")
class NonBlockingFIFO(QueueOrder):
    """Submission order, non-blocking: a job that cannot be placed (or is told to wait) lets the jobs
    behind it go. Reads no annotation. The default order of the `delay` scheduler, and the order of
    the consolidate / scatter baselines it is compared with."""

    name = "fifo-nb"

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        return (js.job.submit_time,)


@ORDERS.register("sjf")
class SJF(QueueOrder):
    """Shortest predicted job first, non-preemptive."""

    name = "sjf"

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        d = predicted_duration(js)
        return (INF if d is None else d, js.submit_time)


@ORDERS.register("srtf")
class SRTF(QueueOrder):
    """Shortest predicted remaining time first, preemptive: a waiting job that would end before a
    running one preempts it. Classes are predicted absolute end times (static while running)."""

    name = "srtf"
    preemptive = True

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        r = predicted_remaining(js, now)
        return (INF if r is None else r, js.submit_time)

    def preemption_class(self, js: JobState, now: float) -> float:
        # now + remaining: for a running job remaining shrinks at rate 1, so this stays constant.
        r = predicted_remaining(js, now)
        return INF if r is None else now + r


@ORDERS.register("qssf")
class QSSF(QueueOrder):
    """Helios' Quasi-Shortest-Service-First: smallest predicted GPU-time (duration x GPUs) first."""

    name = "qssf"

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        d = predicted_duration(js)
        return (INF if d is None else d * max(1, js.num_gpus), js.submit_time)


@ORDERS.register("tiresias")
class Tiresias(QueueOrder):
    """Discretised two-dimensional least-attained-service (Gu et al., NSDI'19).

    Attained service is GPUs x executed seconds. A job starts in queue 0 and moves down a queue
    each time its attained service crosses a threshold; lower queues run only when higher ones are
    served; inside a queue, jobs go in submission order. A waiting job preempts running jobs of
    lower queues. Starvation guard: a job that has waited `starvation_factor` times its executed
    time (and at least `starvation_min_s`) is promoted back to queue 0, where its service counts
    afresh. Tiresias needs no duration
    estimates: it ignores annotations.

    Defaults: two queues split at 3,600 GPU-seconds (the paper finds two queues enough; the
    threshold is our choice for hour-scale traces), starvation factor 10.
    """

    name = "tiresias"
    preemptive = True
    stable_classes = True  # levels are whole numbers that move only when service crosses a threshold

    def __init__(self, thresholds: tuple[float, ...] = (3600.0,), starvation_factor: float = 10.0,
                 starvation_min_s: float = 3600.0) -> None:
        if list(thresholds) != sorted(thresholds):
            raise ValueError("Tiresias thresholds must be ascending")
        self.thresholds = tuple(thresholds)
        self.starvation_factor = starvation_factor
        self.starvation_min_s = starvation_min_s

    def _service(self, js: JobState, now: float) -> float:
        # A job promoted for starvation starts counting its service afresh (it keeps queue 0 for a
        # full first-queue quantum instead of being demoted, and preempted, right after it starts).
        return js.attained_service(now) - js.extra.get("tiresias_base", 0.0)

    def level(self, js: JobState, now: float) -> int:
        running = js.status is Status.running
        # _service, inlined (hot): attained service less the base a starvation promotion set
        service = (js.executed_s + (now - js.last_start if running else 0.0)) * js.num_gpus
        if js.extra:
            service -= js.extra.get("tiresias_base", 0.0)
        lvl = 0
        for t in self.thresholds:
            if service >= t:
                lvl += 1
        if not running and lvl > 0 and self._starved(js, now):
            js.extra["tiresias_base"] = js.attained_service(now)  # promotion
            return 0
        return lvl

    def _starve_time(self, js: JobState) -> float:
        return js.eligible_since + max(self.starvation_min_s, self.starvation_factor * js.executed_s)

    def _starved(self, js: JobState, now: float) -> bool:
        return now >= self._starve_time(js)

    def key(self, js: JobState, now: float) -> tuple[float, ...]:
        return (float(self.level(js, now)), js.submit_time)

    def preemption_class(self, js: JobState, now: float) -> float:
        return float(self.level(js, now))

    def next_key_change(self, js: JobState, now: float) -> float | None:
        if js.status is Status.running:
            service = self._service(js, now)
            for t in self.thresholds:
                if service < t:
                    return now + (t - service) / max(1, js.num_gpus)
            return None
        if js.status is Status.waiting and js.executed_s > 0 and self.level(js, now) > 0:
            return self._starve_time(js)
        return None
