"""Two readings of a time column printed beside the counter, by how its values move with the counter.

- `elapsed` that falls while the counter grows (`step: 1330 ... elapsed: 3.71s`, `step: 1340 ... elapsed: 3.63s`)
  and stays within a factor 2 is no running total: it is the time of the interval since the previous print, so seconds per step is the value over the
  steps between the two prints.
- A per-step time that falls on every print while the time per step it implies stays put is a running mean
  since the counter started (an `AverageMeter`'s average: `Time 0.147`, `0.104`, `0.090`, `0.083` at steps 10,
  20, 30, 40 mean 0.062 s per step after a slow first interval): the time per step is read from its growth,
  mean(b) x b - mean(a) x a over b - a.

Each returns None unless the values fit that reading on every print, so a plain column stays a plain column.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

RUNNING_MEAN_SPREAD = 1.25
"""The implied per-step times of a running mean agree within this factor."""


def interval_elapsed(points: Iterable[tuple[int, float]]) -> list[float] | None:
    """Seconds per step when the printed elapsed time is per print interval (see the module docstring)."""
    xs = list(points)
    pairs = list(itertools.pairwise(xs))
    if not pairs or any(b[0] <= a[0] for a, b in pairs):
        return None
    es = [e for _, e in xs]
    if min(es) <= 0 or max(es) > 2 * min(es) or not any(b[1] < a[1] for a, b in pairs):
        return None  # a running total never falls (whole seconds may repeat), and grows many-fold from a start
    return [b[1] / (b[0] - a[0]) for a, b in pairs]


def running_mean_field(series: Iterable[tuple[int, float]]) -> list[float] | None:
    """Seconds per step when a per-step time column is a mean since the counter started (module docstring)."""
    xs = list(series)
    pairs = list(itertools.pairwise(xs))
    if len(pairs) < 3 or any(b[0] <= a[0] or b[1] >= a[1] for a, b in pairs):
        return None
    implied = [(b[1] * b[0] - a[1] * a[0]) / (b[0] - a[0]) for a, b in pairs]
    lo, hi = min(implied), max(implied)
    if lo <= 0 or hi > RUNNING_MEAN_SPREAD * lo or xs[0][1] < 1.3 * hi:
        return None
    return implied



class RunningTotalWatch:
    """Watches a per-step time column over the whole log (the tracker keeps only a window of it): `grew` when
    some run of the counter (from its start or a restart) took the column to many times its first value while
    it rose on every print; `broken` when it ever fell or stood still without the counter restarting."""

    def __init__(self) -> None:
        self.last: tuple[int, float] | None = None
        self.first = 0.0
        self.grew = False
        self.broken = False

    def see(self, step: int, value: float) -> None:
        if self.last is None or step < self.last[0]:
            self.first = value
        elif step == self.last[0] or value <= self.last[1]:
            self.broken = True
        elif self.first > 0 and value >= 4 * self.first:
            self.grew = True
        self.last = (step, value)


def cumulative_runs(series: list[tuple[int, float]], watch: RunningTotalWatch) -> list[float] | None:
    """Seconds per step when a per-step time column is a running total (`time: 8.1`, `16.3`, `24.2` ...): it grows
    with the counter on every print, to many times its first value. A counter that restarts every epoch
    (`Batch: 10/1330 .. Time: 3.1s` after `Batch: 1320/1330 .. Time: 382.5s`) restarts the total with it: each run
    from a restart is read alone."""
    if len(series) < 4 or watch.broken or not watch.grew:
        return None
    return [(b[1] - a[1]) / (b[0] - a[0]) for a, b in itertools.pairwise(series) if b[0] > a[0]]
