"""The scheduling pass's walk over the waiting queue."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

from sortedcontainers import SortedList


class QueueScan:
    """Walks the waiting queue in key order by merging one sorted list per GPU demand, so that a
    pass can drop every job of a demand that cannot fit any more without visiting them one by one.
    Entries are values, not positions, so starts and re-queues during the walk are safe.

    The merge is set up only when the queue's next entry would be left out (its demand dropped or over the
    limit): until then the walk follows the whole queue (`waiting`), one bisection an entry, which gives the
    same entries in the same order (the merge of the kept demands' lists is the queue less the entries left
    out, and none was met yet), and many passes look at the head alone or at a few entries
    after starts (a blocked FIFO head, a preemption that cannot happen). The walk is the same: callers
    restart after re-queueing jobs, and between two entries they only remove the entry just returned.

    `limit`, when set, drops every demand above it as the walk reaches it (what the pass does with a
    demand that no longer fits, when nothing else is to be done with its jobs), so that the walk does
    not hand those entries out one demand at a time. It never rises during a walk (a pass sets it from the
    free GPUs and its smallest misfit once it can no longer preempt, and both only shrink from then on)."""

    __slots__ = ("after", "by_gpus", "dropped", "first", "heap", "limit", "live", "source", "waiting")

    def __init__(self, by_gpus: Callable[[], dict[int, SortedList]], waiting: SortedList,
                 live: Sequence[Any]) -> None:
        self.source = by_gpus
        self.live = live
        """Job states by index (`entry[1]`), for an entry's GPU demand."""
        self.by_gpus: dict[int, SortedList] = {}
        self.waiting = waiting
        self.dropped: set[int] = set()
        self.heap: list | None = None
        self.after: tuple | None = None
        self.first: tuple | None = None
        self.limit: int | None = None

    def restart(self, after: tuple | None) -> None:
        """Continue with the entries after `after` (None: from the top), dropped demands included."""
        self.dropped.clear()
        self.heap = None
        self.after = after
        self.first = None

    def _merge(self, after: tuple | None) -> list:
        heap = []
        self.by_gpus = self.source()
        dropped, limit = self.dropped, self.limit
        for g, lst in self.by_gpus.items():
            if g in dropped:
                continue
            if limit is not None and g > limit:
                dropped.add(g)
                continue
            p = 0 if after is None else lst.bisect_right(after)
            if p < len(lst):
                heap.append((lst[p], g))
        heapq.heapify(heap)
        return heap

    def drop(self, gpus: int) -> None:
        self.dropped.add(gpus)

    def next(self) -> tuple | None:
        heap = self.heap
        if heap is None:
            after = self.first if self.first is not None else self.after
            # The next entry of the whole queue is the merge's next entry too when its demand is neither
            # dropped nor over the limit (the merge gives the smallest such entry, and this one is the
            # smallest of all): follow the queue until an entry would be left out, then merge from there
            # (a limit is set on most non-blocking passes, yet their first entries often fit).
            waiting = self.waiting
            p = 0 if after is None else waiting.bisect_right(after)
            if p >= len(waiting):
                self.heap = []
                return None
            entry = waiting[p]
            limit, dropped = self.limit, self.dropped
            if limit is None and not dropped:
                self.first = entry
                return entry
            g = self.live[entry[1]].num_gpus
            if (limit is None or g <= limit) and g not in dropped:
                self.first = entry
                return entry
            heap = self.heap = self._merge(after)
        dropped, limit = self.dropped, self.limit
        while heap:
            entry, g = heapq.heappop(heap)
            if g in dropped:
                continue
            if limit is not None and g > limit:
                dropped.add(g)
                continue
            lst = self.by_gpus.get(g)
            if lst is not None:
                p = lst.bisect_right(entry)
                if p < len(lst):
                    heapq.heappush(heap, (lst[p], g))
            return entry
        return None
