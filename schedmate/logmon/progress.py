"""Progress state from matched progress lines: steps, epochs, iteration time, throughput, loss, and the
remaining time with p10/p50/p90.

Which counter: the main training counter. A bar whose description names evaluation or data work
(`Detecting objects: 13/13`, `Validation: ...`) is a pause, not the counter; a bar with another total than
the established one likewise. A global step printed beside a per-epoch bar (`Epoch 3, global step 1200`)
takes over only when it is ahead of the bar (the bar was printed once and went stale). A log whose only
counter is the epoch (`Epoch 14/40 | loss ...`) reports the epoch as the counter until a step counter
shows up.

Iteration time, best source first: (1) timestamps: the median of recent (time delta / step delta) between
progress lines of the leading rank, intervals containing an evaluation or checkpoint excluded (they feed the
pause model), when there are at least 3; (2) running totals of elapsed time the log prints (Keras' `127s`
at the end of an epoch bar, `time_elapsed`, `total time (s)`): per run of the counter, elapsed span / step
span (elapsed / steps for a run of one line); (3) the framework's own per-iteration figures (s/it, it/s, ms
per step, `time: 0.52`), median; (4) one or two timestamp intervals.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import deque
from dataclasses import dataclass

from schedmate.logmon.custom_counters import main_counter, time_column
from schedmate.logmon.labels import DATA_BAR_RATE, counter_label, side_label
from schedmate.logmon.outer_counter import OuterCounter
from schedmate.logmon.owners import RestartWatch, TotalOwner, new_run
from schedmate.logmon.rules import Rule
from schedmate.logmon.shapes import epoch_duration
from schedmate.logmon.tables import EPOCH_LINE, EPOCH_SECONDS, elapsed_figure, rate_figures
from schedmate.logmon.throughput import step_seconds
from schedmate.logmon.timing import RunningTotalWatch, cumulative_runs, interval_elapsed, running_mean_field

WINDOW = 64
_RATE_FIELDS = ("it_s", "s_it", "ms_it")
_LABEL_EPOCH = re.compile(r"\bepoch\W{0,3}(\d+)(?: ?(?:/|of) ?(\d+))?", re.IGNORECASE)


# a bracketed `x/y` right after an epoch counter (a separator or none between them)
_INNER_COUNTER = re.compile(r"[ ,|;:]{0,3}[(\[] ?(\d+) ?/ ?(\d+) ?[)\]](?![/\d])")


def _has_rate(values: dict[str, float]) -> bool:
    return "it_s" in values or "s_it" in values or "ms_it" in values  # `_RATE_FIELDS`, without a generator


def line_values(rule: Rule, m: re.Match[str], text: str) -> tuple[dict[str, float], str | None]:
    """The field values of a matched progress line, with the rate figure the line states in its own words
    when the rule has none, and the counter's label."""
    values = rule.values(m)
    if "step" in m.re.groupindex and m["step"] is not None:  # `iteration:3 step:200/1044`: the counter with the total
        values = main_counter(values, text, m.end("step"))
    if "epoch" in values and "step" not in values:
        inner = _INNER_COUNTER.match(text, m.end())
        if inner is not None and 0 <= int(inner[1]) <= int(inner[2]):
            # `Epoch: 55/167 (996/1926)`, `epoch 3/10 [120/500]`: the counter right after the epoch's is the
            # step within the epoch
            values.update(step=float(inner[1]), total_steps=float(inner[2]))
            values.update(rate_figures(text[inner.end():]))
            return values, counter_label(text, m)
    if rule.epoch_counter:
        values[EPOCH_LINE] = 1.0
        if not _has_rate(values):  # `Epoch: 14  Time: 61.3263  Loss: 6.09`: the epoch's time
            values.update(rate_figures(text[m.end("epoch") if "epoch" in m.re.groupindex else m.end():]))
    if "epoch" in values and "step" not in values and not _has_rate(values):
        took = epoch_duration(text[m.end("epoch") if "epoch" in m.re.groupindex else m.end():])
        if took is not None:  # `Epoch 12/100 [133.2s] | loss ..`: how long the epoch took
            values[EPOCH_SECONDS] = took
    if "step" in values and not _has_rate(values):
        values.update(rate_figures(text[m.start("step"):]))
        if "elapsed_s" not in values and not _has_rate(values):
            values.update(elapsed_figure(text[m.start("step"):]))
        if "elapsed_s" not in values and not _has_rate(values):
            values.update(time_column(text[m.start("step"):]))  # `elapsed 1.5m`, `| 12.3s |`
    return values, counter_label(text, m)


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
        self.outer = OuterCounter()  # a bar's `[n/N]` description with rounds left: the bar's end is no run's end
        self.loss: float | None = None
        self.lr: float | None = None
        self.samples_s: float | None = None
        self.tokens_s: float | None = None
        self.losses: deque[float] = deque(maxlen=WINDOW)
        self.field_its: deque[float] = deque(maxlen=WINDOW)
        self.ts_its: deque[float] = deque(maxlen=WINDOW)
        self.ts_spans: deque[tuple[float, int]] = deque(maxlen=WINDOW)  # (seconds, steps) of the same intervals
        self.coarse_its: deque[float] = deque(maxlen=WINDOW)  # figures in whole seconds (`3s/step`)
        self.epoch_its: deque[float] = deque(maxlen=WINDOW)  # seconds an epoch took, as the framework says
        self.samples_rates: deque[float] = deque(maxlen=WINDOW)  # samples/s readings (`throughput.step_seconds`)
        self.batch_size: int | None = None  # the training batch a configuration line names
        self._ts_fraction = False  # some timestamp has sub-second digits
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
        self.started = False  # a start-of-training banner was seen (no step yet means step 0)
        self._raw: tuple[int, int] | None = None  # the last (counter, total) as printed, leading rank
        self._swapped = False  # `Batch 15/37600` then `Batch 15/37700`: (epoch, counter), not (counter, total)
        self.config_total: int | None = None  # a total printed in the configuration (max_steps=5000)
        self.epoch_counter = False  # the epoch is the only counter seen so far
        self._real_steps = False
        self._counter_done = False
        self._epoch_lines = False  # `Epoch 3/10` lines (no step) seen
        self._first_epoch: int | None = None
        self._runs: deque[tuple[int, float, int, float]] = deque(maxlen=WINDOW)  # elapsed: first/last (step, s)
        self._elapsed_epoch: float | None = None  # the epoch when the last elapsed figure came
        self._elapsed_points: deque[tuple[int, float]] = deque(maxlen=WINDOW)  # every (step, elapsed) printed
        self.span_its: deque[float] = deque(maxlen=WINDOW)  # a duration line over the steps since the last one
        self._span_anchor: int | None = None
        self._field_series: deque[tuple[int, float]] = deque(maxlen=WINDOW)  # (step, s_it) as printed
        self._field_watch = RunningTotalWatch()  # is the per-step time column a running total (`timing.py`)
        self.owner = TotalOwner()  # the counter that printed the total (`owners.py`)
        self.restart = RestartWatch()  # a new run with another total after one that stopped short (`owners.py`)

    def line_gap(self) -> float | None:
        """Mean seconds between progress lines (a job that logs every 10 minutes is not hung after 5)."""
        if self.first_step_ts is None or self.last_step_ts is None or self.step_events < 2:
            return None
        return max(0.0, self.last_step_ts - self.first_step_ts) / (self.step_events - 1)

    # -- updates --------------------------------------------------------------------------
    def on_pause(self, lineno: int) -> None:
        self._pause_since_last = True
        self.in_pause = True

    def reported_total(self) -> int | None:
        """The total of the counter being reported: none when the step comes from a counter that prints no
        total and the total from another one (`owners.TotalOwner`), unless the configuration printed it."""
        if self.owner.foreign and self.config_total is None:
            return None
        return self.total_steps

    def global_step(self) -> int | None:
        if self.step is None:
            return None
        if self.per_epoch and self.epoch is not None and self.total_steps:
            return int((self.epoch - self.epoch_base) * self.total_steps + self.step)
        return self.step

    def on_values(self, values: dict[str, float], rank: int | None, ts: float | None, lineno: int,
                  clock: float | None, epoch_base: int = 0, label: str | None = None) -> bool:
        """Apply a progress line; returns True when it was a step event of the leading rank. `label`: what
        the line says before its counter (see `counter_label`)."""
        if "step" in values and (side_label(label) or values.get("it_s", 0.0) > DATA_BAR_RATE and "loss" not in values):
            self.on_pause(lineno)  # evaluation or data work, or a bar faster than a training step: loading, tokenizing
            return False
        if label and "epoch" not in values and (em := _LABEL_EPOCH.search(label)) is not None and len(em[1]) < 9:
            # the epoch in a bar's description (`Epoch 3/10: 45%|...| 450/1000`): beside the counter, like an
            # `Epoch 3/10` line before it
            self._saw_epoch(float(em[1]), int(em[2]) if em[2] else None)
        if "step" in values:
            self.outer.on_bar(label)
        if "global_step" in values and "step" not in values:
            values = self._global_counter(values)
        epoch_line = values.pop(EPOCH_LINE, None) is not None
        if "step" not in values and "epoch" in values and ("total_epochs" in values or epoch_line) \
                and not self._real_steps and values["epoch"] == int(values["epoch"]):
            # the epoch is the only counter so far: it is the counter
            self.epoch_counter = True
            total_e = values.get("total_epochs")
            self._saw_epoch(values["epoch"], int(total_e) if total_e is not None else None)
            values = {**{k: v for k, v in values.items() if k not in ("epoch", "total_epochs")},
                      "step": values["epoch"], **({"total_steps": total_e} if total_e is not None else {})}
        elif "step" in values and self.epoch_counter:
            self._leave_epoch_counter()
        elif epoch_line:  # an epoch's time is no step's time when steps are counted
            values = {k: v for k, v in values.items() if k not in _RATE_FIELDS}
        if "step" not in values:
            # config / throughput line
            if "total_steps" in values:
                self.config_total = self.config_total or int(values["total_steps"])
                if self.total_steps is None:
                    self.total_steps = int(values["total_steps"])
            if "total_epochs" in values:
                self.total_epochs = int(values["total_epochs"])
            if "epoch" in values:
                self._saw_epoch(values["epoch"], int(values["total_epochs"]) if "total_epochs" in values else None)
            self._common(values)
            return False
        if not self.epoch_counter:
            self._real_steps = True
        if not self.leader_set:
            self.leader, self.leader_set = rank, True
        elif rank != self.leader and rank is not None and self.leader is not None:
            return False
        step = int(values["step"])
        total = int(values["total_steps"]) if "total_steps" in values else None
        if total is not None:
            step, total, values = self._epoch_and_counter(step, total, values)
        if total is not None and new_run(self.done, self.step, self.total_steps, step, total, values):
            self.totals_by_count.clear()
            self.done = False
        if total is not None:
            # A bar with another total (HF evaluation bar, a data-prep bar) is not the training counter.
            self.totals_by_count[total] = self.totals_by_count.get(total, 0) + 1
            main = max(self.totals_by_count, key=self.totals_by_count.__getitem__)
            if self.total_steps is not None and total != self.total_steps and self.totals_by_count.get(self.total_steps, 0) >= 2:
                if not self.restart.other(step, total, values):
                    self._pause_since_last = True
                    return False
                self.totals_by_count = {total: self.restart.NEED}  # a new run: its total is the run's
                self.done = False
                main = total
            elif total == self.total_steps:
                self.restart.reset()
            if self.totals_by_count[total] >= self.totals_by_count[main]:
                self.total_steps = total  # the most frequent total; of equally frequent ones the latest
        if "epoch" in values:
            self.epoch = values["epoch"]
            if "total_steps" in values and values["epoch"] == int(values["epoch"]):
                self.per_epoch = True
                self.epoch_base = epoch_base
        elif self._epoch_lines and not self.per_epoch and self.step is not None and total is not None \
                and total == self.total_steps and step < self.step and not self.epoch_counter:
            # the counter restarted under `Epoch n/N` lines (Keras): it counts within the epoch
            self.per_epoch, self.epoch_base = True, self._first_epoch if self._first_epoch in (0, 1) else 1
        if "total_epochs" in values:
            self.total_epochs = int(values["total_epochs"])
        if "elapsed_s" in values:
            self._on_elapsed(step, values["elapsed_s"])
        self.owner.on_step(label, step, total)
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
                    self.ts_spans.append((dt, dstep))
        if ts is not None and g is not None and (self._last_gstep is None or g != self._last_gstep):
            self._last_ts = ts
        if g is not None and (ts is not None or self._last_ts is None):
            self._last_gstep = g  # the step at the last stamped line: timestamps on only some lines time their own span
        self._pause_since_last = False
        self.in_pause = False
        self.step_events += 1
        self.last_step_line = lineno
        if ts is not None:
            self._ts_fraction = self._ts_fraction or ts != int(ts)
            self.last_step_ts = ts
            if self.first_step_ts is None:
                self.first_step_ts = ts
        if clock is not None:
            self.last_step_clock = clock
        epochs_left = self._epoch_lines and not self.epoch_counter and self.total_epochs is not None and \
            self.epoch is not None and self.epoch < self.total_epochs
        if self.reported_total() is not None and step >= self.total_steps and not self.per_epoch and not epochs_left \
                and not self.outer.open:
            self._counter_done = self.epoch_counter and not self.done
            self.done = True
        return True

    def _epoch_and_counter(self, step: int, total: int, values: dict[str, float]) -> tuple[int, int | None, dict[str, float]]:
        """`x/y` where x stays and y grows from one line to the next (`TRAIN Batch 15/37600` then `15/37700`) is
        no counter out of a total: y counts and x is the epoch. The line before is read again that way."""
        prev, self._raw = self._raw, (step, total)
        if not self._swapped and prev is not None and step == prev[0] and total > prev[1] and prev[0] < prev[1] \
                and self.step == prev[0] and self.total_steps == prev[1]:
            self._swapped = True
            self.step, self.total_steps, self.epoch = prev[1], None, float(prev[0])
            self.totals_by_count.clear()
            if self._last_gstep is not None:
                self._last_gstep = prev[1]
        if not self._swapped:
            return step, total, values
        rest = {k: v for k, v in values.items() if k not in ("step", "total_steps")}
        return total, None, {**rest, "step": float(total), "epoch": float(step)}

    def _saw_epoch(self, epoch: float, total: int | None) -> None:
        """An epoch printed outside the counter's own fields (an `Epoch 3/10` line, a bar's description)."""
        self.epoch = epoch
        if total is not None:
            self.total_epochs = total
            if epoch == int(epoch):
                self._epoch_lines = True
                self._first_epoch = int(epoch) if self._first_epoch is None else min(self._first_epoch, int(epoch))

    def _global_counter(self, values: dict[str, float]) -> dict[str, float]:
        """A global step beside a per-epoch counter: the counter when it is ahead of the bar (else only the
        epoch is taken)."""
        g = int(values["global_step"])
        rest = {k: v for k, v in values.items() if k != "global_step"}
        cur = self.global_step()
        if self.per_epoch and cur is not None and g <= cur:
            return {k: v for k, v in rest.items() if k != "epoch"}
        if self.per_epoch:
            self.per_epoch = False
            self.total_steps = self.config_total
            self.totals_by_count.clear()
        return {**rest, "step": float(g)}

    def _leave_epoch_counter(self) -> None:
        """A step counter appeared after epoch-only lines: it is the counter from now on."""
        self.epoch_counter = False
        self.step = None
        self.total_steps = self.config_total
        self.totals_by_count.clear()
        self._last_ts = self._last_gstep = None
        self.ts_its.clear()
        self.ts_spans.clear()
        self.step_events = 0
        if self._counter_done:
            self.done = self._counter_done = False

    def _on_elapsed(self, step: int, elapsed: float) -> None:
        """A running total of seconds printed with the counter: a run goes on while both grow."""
        self._elapsed_points.append((step, elapsed))
        epoch, self._elapsed_epoch = self._elapsed_epoch, self.epoch
        if self._runs:
            s0, e0, s1, e1 = self._runs[-1]
            if step > s1 and elapsed >= e1:
                self._runs[-1] = (s0, e0, step, elapsed)
                return
            if step == s1 and elapsed == e1 and epoch == self.epoch:
                return  # the same line printed again (not the next epoch's equal figure: Keras `24/24 - 8s`)
        self._runs.append((step, elapsed, step, elapsed))

    def on_span(self, seconds: float) -> None:
        """A line that is only a duration: the time the steps since the previous such line took (the first one
        only anchors, its steps unknown)."""
        if self.step is None:
            return
        if self._span_anchor is not None and self.step > self._span_anchor:
            self.span_its.append(seconds / (self.step - self._span_anchor))
        self._span_anchor = self.step

    def _cumulative_field(self) -> list[float] | None:
        """A per-step time figure that is a running total (`time: 8.1`, `time: 16.3`, ... grows with the
        counter on every line, to many times its first value; it may restart with a per-epoch counter): seconds
        per step from its growth."""
        return cumulative_runs(list(self._field_series), self._field_watch)

    def elapsed_samples(self) -> list[float]:
        if (per_interval := interval_elapsed(self._elapsed_points)) is not None:
            return per_interval
        out = []
        for s0, e0, s1, e1 in self._runs:
            if s1 > s0:
                out.append((e1 - e0) / (s1 - s0))
            elif s1 > 0 and e1 > 0:
                out.append(e1 / s1)
        return out

    def _common(self, values: dict[str, float]) -> None:
        if EPOCH_SECONDS in values:
            self.epoch_its.append(values[EPOCH_SECONDS])
        if "it_s" in values and values["it_s"] > 0:
            self.field_its.append(1.0 / values["it_s"])
        if "s_it" in values and values["s_it"] > 0:
            s_it = values["s_it"]
            if "step" in values:
                self._field_series.append((int(values["step"]), s_it))
                self._field_watch.see(int(values["step"]), s_it)
            (self.coarse_its if s_it >= 1 and s_it == int(s_it) else self.field_its).append(s_it)
        if "ms_it" in values and values["ms_it"] > 0:
            self.field_its.append(values["ms_it"] / 1000.0)
        if "samples_s" in values:
            self.samples_s = values["samples_s"]
            self.samples_rates.append(values["samples_s"])
        if "tokens_s" in values:
            self.tokens_s = values["tokens_s"]
        if "lr" in values:
            self.lr = values["lr"]
        if "loss" in values and "step" not in values:
            self.loss = values["loss"]
            self.losses.append(values["loss"])

    # -- estimates ------------------------------------------------------------------------
    def iteration_samples(self) -> list[float]:
        """Per-iteration seconds from the best source (see the module docstring)."""
        if len(self.ts_its) >= 3 and not self._coarse_timestamps():
            return list(self.ts_its)
        if len(self.ts_its) == 2 and not self._coarse_timestamps() and self._agreeing_pair():
            return list(self.ts_its)
        if self.epoch_counter and self.epoch_its:  # the epoch is the counter: its own duration, not a step's
            return list(self.epoch_its)
        if self.span_its:
            return list(self.span_its)
        if (cumulative := self._cumulative_field() or running_mean_field(self._field_series)) is not None:
            return cumulative
        if self.field_its:
            return list(self.field_its)
        elapsed = self.elapsed_samples()
        if elapsed:
            return elapsed
        if by_batch := step_seconds(list(self.samples_rates), self.batch_size):
            return by_batch  # `Speed: 142 samples/sec` and `batch_size=32` in the configuration: 0.225 s/step
        if len(self.ts_spans) >= 3:
            # whole-second stamps a few seconds apart: the span over all intervals averages the rounding out
            return [sum(dt for dt, _ in self.ts_spans) / sum(n for _, n in self.ts_spans)]
        # identical stamps (many steps printed within one second) are no time per step
        return list(self.coarse_its) or [x for x in self.ts_its if x > 0]

    def _agreeing_pair(self) -> bool:
        """Two timestamp intervals over many steps each that agree within 10 %: wall time per step, which a
        framework figure (often compute or data time alone) may not be."""
        (a, na), (b, nb) = self.ts_spans[-2], self.ts_spans[-1]
        x, y = a / na, b / nb
        return min(na, nb) >= 10 and x > 0 and abs(x - y) <= 0.1 * max(x, y)

    def _coarse_timestamps(self) -> bool:
        """Whole-second timestamps less than 20 s apart (each interval off by up to 1 s: over 5 %)."""
        return not self._ts_fraction and statistics.median(dt for dt, _ in self.ts_spans) < 20.0

    def iteration_time(self) -> float | None:
        xs = self.iteration_samples()
        return statistics.median(xs) if xs else None

    def remaining_steps(self) -> int | None:
        if self.step is None or self.reported_total() is None:
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
