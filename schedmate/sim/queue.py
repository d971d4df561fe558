"""The scheduling pass's walk over the waiting queue."""

from __future__ import annotations

import heapq
from collections.abc import Callable

from sortedcontainers import SortedList


class QueueScan:
    """Walks the waiting queue in key order by merging one sorted list per GPU demand, so that a
    pass can drop every job of a demand that cannot fit any more without visiting them one by one.
    Entries are values, not positions, so starts and re-queues during the walk are safe.

    The merge is set up only when a demand is dropped or a limit is set: until then the walk follows the
    whole queue (`waiting`), one bisection an entry, which gives the same entries in the same order (the
    merge of all demands' lists is the queue), and many passes look at the head alone or at a few entries
    after starts (a blocked FIFO head, a preemption that cannot happen). The walk is the same: callers
    restart after re-queueing jobs, and between two entries they only remove the entry just returned.

    `limit`, when set, drops every demand above it as the walk reaches it (what the pass does with a
    demand that no longer fits, when nothing else is to be done with its jobs), so that the walk does
    not hand those entries out one demand at a time."""

    __slots__ = ("after", "by_gpus", "dropped", "first", "heap", "limit", "source", "waiting")

    def __init__(self, by_gpus: Callable[[], dict[int, SortedList]], waiting: SortedList) -> None:
        self.source = by_gpus
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
            if self.limit is None and not self.dropped:
                waiting = self.waiting
                p = 0 if after is None else waiting.bisect_right(after)
                if p >= len(waiting):
                    self.heap = []
                    return None
                self.first = waiting[p]
                return self.first
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
