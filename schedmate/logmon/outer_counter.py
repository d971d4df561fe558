"""An outer counter in a progress bar's description: the bar counts within it, so a full bar is no end of training.

tqdm loops nested in an epoch loop often name the epoch in the bar's description as a bracketed `[n/N]`
(`[3/40] loss 1.92: 100%|######| 310/310 [01:02<00:00, 4.96it/s]`). The bar's `310/310` is the end of epoch 3,
not of the run: a failure printed after it is no post-training clean-up. `OuterCounter` reads that bracket from
each bar's description and says whether the outer counter still has rounds to go. It sets no epoch (a bracket in
a description may count something else, such as stages): it only keeps the run from reading as finished.
"""

from __future__ import annotations

import re

_LEADING = re.compile(r"\s*\[ ?(\d{1,6}) ?/ ?(\d{1,6}) ?\]")


class OuterCounter:
    """Whether the latest bar's description holds an outer `[n/N]` with rounds left (`open`)."""

    def __init__(self) -> None:
        self.open = False
        self._first: int | None = None  # the smallest `n` seen: 0 when the outer counter is zero-based

    def on_bar(self, label: str | None) -> None:
        """A step event of a bar described by `label` (the text before its counter)."""
        m = _LEADING.match(label) if label and "[" in label[:4] else None
        if m is None:
            self.open = False
            return
        n, total = int(m[1]), int(m[2])
        if total == 0 or n > total:
            self.open = False
            return
        self._first = n if self._first is None else min(self._first, n)
        last = total - 1 if self._first == 0 else total
        self.open = n < last
