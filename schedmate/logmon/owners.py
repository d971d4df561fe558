"""Which counter a printed total belongs to. A log may print two counters side by side: the optimizer step
(`Training Step: 13 | loss ...`) and samples seen within the epoch (`-- iter: 00768/55000`). The total belongs
to the counter that printed it; when the step reported comes from another counter, named differently and
counting on another scale, it has no total of its own printed. Split from `progress.py` along this seam."""

from __future__ import annotations

import functools
import re

# the word right before a counter's number: `Training Step: ` -> `step`, `... -- iter: ` -> `iter`
_KEY = re.compile(r"([A-Za-z]+)[^A-Za-z]*$")


@functools.lru_cache(maxsize=1024)  # a log repeats a few labels; the search backtracks over every word of one
def counter_key(label: str | None) -> str | None:
    """The name a counter line gives its counter (the last word before the number), lower-cased."""
    if not label:
        return None
    m = _KEY.search(label)
    return m[1].lower() if m is not None else None


def other_scale(a: int, b: int) -> bool:
    """Two readings more than a factor two apart (samples vs steps), not one counter printed at two moments."""
    return a * 2 < b or b * 2 < a


class TotalOwner:
    """Tracks the counter that printed the current total; `foreign` is True while the step being reported
    comes from another counter (another name and another scale) that prints no total."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.step: int | None = None
        self.foreign = False

    def on_step(self, label: str | None, step: int, total: int | None) -> None:
        key = counter_key(label)
        if total is not None:
            self.key, self.step, self.foreign = key, step, False
            return
        self.foreign = key is not None and self.key is not None and key != self.key \
            and self.step is not None and other_scale(step, self.step)


def new_run(done: bool, last: int | None, last_total: int | None, step: int, total: int,
            values: dict[str, float]) -> bool:
    """A counter restarting at its start with another total after the counter before it reached its own, on a
    line that reports training (a loss or a learning rate): a second run in the same log, the one to report.
    An evaluation bar after a finished run restarts the same way but reports no training loss."""
    return done and last is not None and last_total is not None and last >= last_total and total != last_total \
        and step <= 1 and ("loss" in values or "lr" in values)


class RestartWatch:
    """A counter printing another total than the established one, from near its start and rising on consecutive
    training lines (a loss or a learning rate), with no line of the established total between them: a new run
    appended to the log after the earlier one stopped short of its total (research scripts restarted with
    another dataset size). `other` returns True on the third such line; an evaluation bar (no training loss)
    or a side counter interleaved with the training counter never gets there."""

    NEED = 3

    def __init__(self) -> None:
        self.total: int | None = None
        self.last = 0
        self.count = 0

    def reset(self) -> None:
        self.total, self.count = None, 0

    def other(self, step: int, total: int, values: dict[str, float]) -> bool:
        if "loss" not in values and "lr" not in values:
            self.reset()
            return False
        if total == self.total and step > self.last:
            self.count, self.last = self.count + 1, step
        elif step * 10 <= total:
            self.total, self.last, self.count = total, step, 1
        else:
            self.reset()
        return self.count >= self.NEED
