"""The scheduling pass's walk over the waiting queue."""

from __future__ import annotations

import heapq

from sortedcontainers import SortedList


class QueueScan:
    """Walks the waiting queue in key order by merging one sorted list per GPU demand, so that a
    pass can drop every job of a demand that cannot fit any more without visiting them one by one.
    Entries are values, not positions, so starts and re-queues during the walk are safe."""

    __slots__ = ("by_gpus", "dropped", "heap")

    def __init__(self, by_gpus: dict[int, SortedList]) -> None:
        self.by_gpus = by_gpus
        self.dropped: set[int] = set()
        self.heap: list = []
        self.restart(None)

    def restart(self, after: tuple | None) -> None:
        """Continue with the entries after `after` (None: from the top), dropped demands included."""
        self.dropped.clear()
        heap = []
        for g, lst in self.by_gpus.items():
            p = 0 if after is None else lst.bisect_right(after)
            if p < len(lst):
                heap.append((lst[p], g))
        heapq.heapify(heap)
        self.heap = heap

    def drop(self, gpus: int) -> None:
        self.dropped.add(gpus)

    def next(self) -> tuple | None:
        heap = self.heap
        while heap:
            entry, g = heapq.heappop(heap)
            if g in self.dropped:
                continue
            lst = self.by_gpus.get(g)
            if lst is not None:
                p = lst.bisect_right(entry)
                if p < len(lst):
                    heapq.heappush(heap, (lst[p], g))
            return entry
        return None
