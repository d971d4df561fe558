"""The engine's shortcuts (skipped idle passes, and the searches it cuts short) change no decision: a replay
with them gives every job the same outcome, at the same times, as one without."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedmate.replay import replay
from schedmate.sim.engine import ReplayConfig
from schedmate.traces import load_trace


def _replay(table, policy: str, skip: bool, annotator: str = "none"):
    return replay(table, policy=policy, annotator=annotator, cluster="128", network="congested",
                  config=ReplayConfig(skip_idle_passes=skip))


@pytest.mark.parametrize("policy,annotator", [("fifo", "none"), ("sjf", "none"), ("tiresias", "none"),
                                               ("fifo", "oracle"), ("srtf", "oracle")])
def test_skipping_idle_passes_changes_no_job_outcome(policy, annotator):
    """A queued, preempting workload (arrivals compressed 6x onto 128 GPUs): the replay that skips the
    passes it proves idle gives every job the same start, end, preemptions and spans as the replay that
    walks the queue on every pass, and records the same queue over time. With the oracle's estimates FIFO
    backfills behind reservations and SRTF preempts by predicted end."""
    table = load_trace("synth:helios:3000:3").table
    table = table.with_columns(submit_time=table.submit_time / 6.0)
    fast, slow = _replay(table, policy, True, annotator), _replay(table, policy, False, annotator)
    assert slow.sim.passes_skipped == 0
    assert fast.sim.passes_skipped > 0  # the shortcut was taken, so the comparison means something
    pd.testing.assert_frame_equal(fast.jobs, slow.jobs)
    assert fast.sim.passes == slow.sim.passes and fast.summary.events == slow.summary.events
    for series in ("t", "queued", "busy_gpus"):
        assert np.array_equal(getattr(fast.sim.timeseries, series), getattr(slow.sim.timeseries, series))
    if policy in ("tiresias", "srtf"):
        assert slow.jobs["preemptions"].sum() > 0


def test_the_pass_owed_after_a_preemption_is_skipped_only_when_it_changes_no_job_outcome():
    """Tiresias on an overloaded 128-GPU cluster preempts often: a pass that preempted leaves a pass owed at
    the next event, and the engine skips it when every job still waiting was walked after the last
    preemption. The replay that does so gives every job the same start, end, preemptions and spans, and the
    same queue over time, as the replay that walks the queue on every pass."""
    table = load_trace("synth:helios:4000:5").table
    table = table.with_columns(submit_time=table.submit_time / 8.0)
    fast, slow = _replay(table, "tiresias", True), _replay(table, "tiresias", False)
    assert fast.sim.passes_skipped_after_preemption > 0  # the shortcut was taken
    assert slow.sim.passes_skipped == 0 and slow.jobs["preemptions"].sum() > 1000
    pd.testing.assert_frame_equal(fast.jobs, slow.jobs)
    assert fast.sim.passes == slow.sim.passes and fast.summary.events == slow.summary.events
    for series in ("t", "queued", "busy_gpus"):
        assert np.array_equal(getattr(fast.sim.timeseries, series), getattr(slow.sim.timeseries, series))


@pytest.mark.parametrize("policy,annotator", [("sjf", "none"), ("sjf", "oracle"), ("qssf", "oracle"),
                                               ("tiresias", "none"), ("srtf", "oracle")])
def test_a_pass_after_arrivals_alone_that_tries_only_the_new_jobs_changes_no_job_outcome(policy, annotator):
    """Non-blocking orders on a queued 128-GPU cluster: after a pass that proved every waiting job
    unplaceable, a pass owed to arrivals alone tries only the new jobs (with preemption, only while they all
    come after the head whose victim search failed). The replay that does so
    gives every job the same outcome, and records the same queue over time, as the replay that walks the
    whole queue on every pass."""
    table = load_trace("synth:helios:3000:3").table
    table = table.with_columns(submit_time=table.submit_time / 6.0)
    fast, slow = _replay(table, policy, True, annotator), _replay(table, policy, False, annotator)
    assert fast.sim.passes_incremental > 0 and slow.sim.passes_incremental == 0  # the shortcut was taken
    pd.testing.assert_frame_equal(fast.jobs, slow.jobs)
    assert fast.sim.passes == slow.sim.passes and fast.summary.events == slow.summary.events
    for series in ("t", "queued", "busy_gpus"):
        assert np.array_equal(getattr(fast.sim.timeseries, series), getattr(slow.sim.timeseries, series))
