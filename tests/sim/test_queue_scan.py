"""The queue walk follows the whole queue until an entry would be left out, then merges the per-demand lists:
it hands out the same entries in the same order as a walk that merges from the start."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sortedcontainers import SortedList

from schedmate.sim.queue import QueueScan


@dataclass
class Demand:
    num_gpus: int


def _walk(entries: list[tuple], live: list[Demand], top: int | None, drops: set[int], merged: bool) -> list:
    waiting = SortedList(entries)
    by_gpus: dict[int, SortedList] = {}
    for e in entries:
        by_gpus.setdefault(live[e[1]].num_gpus, SortedList()).add(e)
    scan = QueueScan(lambda: by_gpus, waiting, live)
    if merged:
        scan.heap = scan._merge(None)
    out = []
    for step in range(len(entries) + 1):
        # as in a pass, the limit (free GPUs, or fewer than the smallest misfit) never rises during a walk
        scan.limit = top if step < 2 else min(top or 8, 8) if step < 5 else min(top or 4, 4)
        if step == 3:
            for g in drops:
                scan.drop(g)
        entry = scan.next()
        if entry is None:
            break
        out.append(entry)
        if step % 2:  # a started job leaves the queue (the only change between two entries)
            waiting.remove(entry)
            by_gpus[live[entry[1]].num_gpus].remove(entry)
    return out


def test_a_walk_that_merges_late_hands_out_the_entries_a_walk_that_merges_at_once_does():
    """Random queues of mixed demands, under a limit that shrinks (or none) and a dropped demand: both walks agree,
    and the late-merging walk returns the queue's own head first whenever it is not left out."""
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 40)
        live = [Demand(rng.choice([1, 2, 4, 8, 16, 32])) for _ in range(n)]
        entries = [((float(rng.randint(0, 5)), float(i)), i) for i in range(n)]
        top = rng.choice([None, 32, 16])
        drops = {rng.choice([1, 2, 4, 8])} if rng.random() < 0.5 else set()
        late = _walk(entries, live, top, drops, merged=False)
        assert late == _walk(entries, live, top, drops, merged=True)
        head = min(entries)
        if top is None or live[head[1]].num_gpus <= top:
            assert late[0] == head
