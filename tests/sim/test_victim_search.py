"""The victim search's shortcut changes no decision: reading a running job's cached Tiresias level instead of
computing it again gives every job the same outcome."""

from __future__ import annotations

import pandas as pd

from schedmate.policies.base import PLACEMENTS, PREEMPTIONS, Scheduler
from schedmate.policies.orders import Tiresias
from schedmate.replay import replay
from schedmate.sim.state import JobState
from schedmate.traces import load_trace


class CountingTiresias(Tiresias):
    """Tiresias that counts how often it is asked for a preemption class."""

    def __init__(self, stable: bool) -> None:
        super().__init__()
        self.stable_classes = stable
        self.asked = 0

    def preemption_class(self, js: JobState, now: float) -> float:
        self.asked += 1
        return super().preemption_class(js, now)


def _replay(table, stable: bool):
    order = CountingTiresias(stable)
    sched = Scheduler(order=order, placement=PLACEMENTS.create("consolidate"),
                      preemption=PREEMPTIONS.create("priority"), name="tiresias+consolidate")
    return replay(table, scheduler=sched, annotator="none", cluster="128", network="congested"), order


def test_victim_searches_that_read_cached_tiresias_levels_preempt_the_same_jobs_at_the_same_times():
    """An overloaded 128-GPU cluster where Tiresias preempts thousands of times: the replay whose victim
    searches read the levels the engine keeps for running jobs asks the order for far fewer classes, and
    gives every job the same start, end, preemptions and spans as the replay that computes every level."""
    table = load_trace("synth:helios:4000:5").table
    table = table.with_columns(submit_time=table.submit_time / 8.0)
    (fast, fast_order), (slow, slow_order) = _replay(table, True), _replay(table, False)
    assert slow.jobs["preemptions"].sum() > 1000
    assert fast_order.asked < slow_order.asked  # the shortcut was taken
    pd.testing.assert_frame_equal(fast.jobs, slow.jobs)
    assert fast.summary.events == slow.summary.events and fast.sim.passes == slow.sim.passes
