"""Progress state from matched progress lines: steps, epochs, iteration time, throughput, loss, and the
remaining time with p10/p50/p90.

Iteration time: when progress lines carry timestamps, the median of recent (time delta / step delta)
between consecutive progress lines of the leading rank, excluding intervals that contain an evaluation or
checkpoint pause (those feed the pause model instead); otherwise the median of the per-iteration times the
framework prints (s/it, it/s, ms per iteration).
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import dataclass

WINDOW = 64


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


@dataclass
class Remaining:
    p10: float
    p50: float
    p90: float


class ProgressTracker:
    def __init__(self) -> None:
        self.leader: int | None = None
        self.leader_set = False
        self.step: int | None = None
        self.total_steps: int | None = None
        self.epoch: float | None = None
        self.total_epochs: int | None = None
        self.epoch_base = 0
        self.per_epoch = False
        self.loss: float | None = None
        self.lr: float | None = None
        self.samples_s: float | None = None
        self.tokens_s: float | None = None
        self.losses: deque[float] = deque(maxlen=WINDOW)
        self.field_its: deque[float] = deque(maxlen=WINDOW)
        self.ts_its: deque[float] = deque(maxlen=WINDOW)
        self.pauses: list[float] = []  # seconds of pause beyond the normal iteration time
        self.pause_steps: list[int] = []  # global step at which each pause happened
        self._last_ts: float | None = None
        self._last_gstep: int | None = None
        self._pause_since_last = False
        self.in_pause = False
        self.step_events = 0
        self.last_step_line: int | None = None
        self.last_step_ts: float | None = None
        self.first_step_ts: float | None = None
        self.last_step_clock: float | None = None
        self.totals_by_count: dict[int, int] = {}
        self.done = False

    def line_gap(self) -> float | None:
        """Mean seconds between progress lines (a job that logs every 10 minutes is not hung after 5)."""
        if self.first_step_ts is None or self.last_step_ts is None or self.step_events < 2:
            return None
        return max(0.0, self.last_step_ts - self.first_step_ts) / (self.step_events - 1)

    # -- updates --------------------------------------------------------------------------
    def on_pause(self, lineno: int) -> None:
        self._pause_since_last = True
        self.in_pause = True

    def global_step(self) -> int | None:
        if self.step is None:
            return None
        if self.per_epoch and self.epoch is not None and self.total_steps:
            return int((self.epoch - self.epoch_base) * self.total_steps + self.step)
        return self.step

    def on_values(self, values: dict[str, float], rank: int | None, ts: float | None, lineno: int,
                  clock: float | None, epoch_base: int = 0) -> bool:
        """Apply a progress line; returns True when it was a step event of the leading rank."""
        if "step" not in values:
            # config / throughput line
            if "total_steps" in values and self.total_steps is None:
                self.total_steps = int(values["total_steps"])
            if "total_epochs" in values:
                self.total_epochs = int(values["total_epochs"])
            if "epoch" in values:
                self.epoch = values["epoch"]
            self._common(values)
            return False
        if not self.leader_set:
            self.leader, self.leader_set = rank, True
        elif rank != self.leader and rank is not None and self.leader is not None:
            return False
        step = int(values["step"])
        total = int(values["total_steps"]) if "total_steps" in values else None
        if total is not None:
            # A bar with another total (HF evaluation bar, a data-prep bar) is not the training counter.
            self.totals_by_count[total] = self.totals_by_count.get(total, 0) + 1
            main = max(self.totals_by_count, key=self.totals_by_count.__getitem__)
            if self.total_steps is not None and total != self.total_steps and self.totals_by_count.get(self.total_steps, 0) >= 2:
                self._pause_since_last = True
                return False
            if main == total:
                self.total_steps = total
        if "epoch" in values:
            self.epoch = values["epoch"]
            if "total_steps" in values and values["epoch"] == int(values["epoch"]):
                self.per_epoch = True
                self.epoch_base = epoch_base
        self.step = step
        self._common(values)
        if "loss" in values:
            self.loss = values["loss"]
            self.losses.append(values["loss"])
        g = self.global_step()
        if ts is not None and self._last_ts is not None and g is not None and self._last_gstep is not None:
            dstep = g - self._last_gstep
            dt = ts - self._last_ts
            if dstep > 0 and dt >= 0:
                per = dt / dstep
                if self._pause_since_last:
                    base = statistics.median(self.ts_its) if self.ts_its else None
                    if base is not None:
                        self.pauses.append(max(0.0, dt - dstep * base))
                        self.pause_steps.append(g)
                else:
                    self.ts_its.append(per)
        if ts is not None and g is not None and (self._last_gstep is None or g != self._last_gstep):
            self._last_ts = ts
        if g is not None:
            self._last_gstep = g
        self._pause_since_last = False
        self.in_pause = False
        self.step_events += 1
        self.last_step_line = lineno
        if ts is not None:
            self.last_step_ts = ts
            if self.first_step_ts is None:
                self.first_step_ts = ts
        if clock is not None:
            self.last_step_clock = clock
        if self.total_steps is not None and step >= self.total_steps and not self.per_epoch:
            self.done = True
        return True

    def _common(self, values: dict[str, float]) -> None:
        if "it_s" in values and values["it_s"] > 0:
            self.field_its.append(1.0 / values["it_s"])
        if "s_it" in values and values["s_it"] > 0:
            self.field_its.append(values["s_it"])
        if "ms_it" in values and values["ms_it"] > 0:
            self.field_its.append(values["ms_it"] / 1000.0)
        if "samples_s" in values:
            self.samples_s = values["samples_s"]
        if "tokens_s" in values:
            self.tokens_s = values["tokens_s"]
        if "lr" in values:
            self.lr = values["lr"]
        if "loss" in values and "step" not in values:
            self.loss = values["loss"]
            self.losses.append(values["loss"])

    # -- estimates ------------------------------------------------------------------------
    def iteration_samples(self) -> list[float]:
        if len(self.ts_its) >= 3:
            return list(self.ts_its)
        return list(self.field_its)

    def iteration_time(self) -> float | None:
        xs = self.iteration_samples()
        return statistics.median(xs) if xs else None

    def remaining_steps(self) -> int | None:
        if self.step is None or self.total_steps is None:
            return None
        if self.per_epoch:
            if self.total_epochs is None or self.epoch is None:
                return None
            epochs_after = self.total_epochs - (int(self.epoch) - self.epoch_base) - 1
            return max(0, epochs_after) * self.total_steps + max(0, self.total_steps - self.step)
        return max(0, self.total_steps - self.step)

    def remaining(self) -> Remaining | None:
        r = self.remaining_steps()
        xs = self.iteration_samples()
        if r is None or not xs:
            return None
        if r == 0 or self.done:
            return Remaining(0.0, 0.0, 0.0)
        q10, q50, q90 = _quantile(xs, 0.1), _quantile(xs, 0.5), _quantile(xs, 0.9)
        p_lo = p_mid = p_hi = 0.0
        if self.pauses and len(self.pause_steps) >= 1:
            g = self.global_step() or 0
            first = self.pause_steps[0]
            interval = (g / len(self.pause_steps)) if len(self.pause_steps) == 1 else \
                (self.pause_steps[-1] - first) / (len(self.pause_steps) - 1)
            if interval > 0:
                n = r / interval
                p_lo, p_mid, p_hi = (n * _quantile(self.pauses, 0.1), n * _quantile(self.pauses, 0.5),
                                     n * _quantile(self.pauses, 0.9))
        return Remaining(r * q10 + p_lo, r * q50 + p_mid, r * q90 + p_hi)
