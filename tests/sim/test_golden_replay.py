"""A small replay whose metrics are worked out by hand."""

from helpers import cluster, ends, job, run
from pytest import approx

from schedmate.sim.metrics import job_table, summarize


def three_jobs():
    return [job("A", 0, 2, 100), job("B", 10, 4, 50), job("C", 20, 2, 30)]


def test_strict_fifo_on_one_four_gpu_node_matches_the_hand_computed_schedule():
    """One node, 4 GPUs. A (2 GPUs, 100 s) runs 0-100. B (4 GPUs) cannot fit until A ends and, FIFO
    being strict and without estimates no backfill is safe, C waits behind B. B runs 100-150, C 150-180.
    JCT: A 100, B 140, C 160 -> avg 133.33; queueing 0, 90, 130 -> avg 73.33; makespan 180;
    busy GPU-s 2*100 + 4*50 + 2*30 = 460 of 4*180 = 720 -> utilisation 0.6389."""
    sim = run(three_jobs(), cluster(1, 4), "fifo", "none")
    assert ends(sim) == {"A": 100, "B": 150, "C": 180}
    s = summarize(sim, job_table(sim), wall_s=1.0)
    assert s.avg_jct_s == approx(400 / 3)
    assert s.avg_queue_s == approx(220 / 3)
    assert s.makespan_s == approx(180)
    assert s.gpu_utilization == approx(460 / 720)
    assert s.comm_overhead_gpu_s == 0 and s.preemptions == 0


def test_fifo_with_true_durations_backfills_the_short_job_before_the_reservation():
    """With the oracle, the blocked head B gets a reservation at 100 (when A ends); C (30 s) ends at 50,
    before the reservation, so EASY backfilling runs it at 20. JCT: A 100, B 140, C 30 -> avg 90."""
    sim = run(three_jobs(), cluster(1, 4), "fifo", "oracle")
    assert ends(sim) == {"A": 100, "B": 150, "C": 50}
    assert summarize(sim, job_table(sim), wall_s=1.0).avg_jct_s == approx(90)


def test_fifo_does_not_backfill_a_job_that_would_delay_the_head():
    """C now needs 200 s: it would end at 220, after B's reservation at 100, and no GPUs are spare."""
    jobs = [job("A", 0, 2, 100), job("B", 10, 4, 50), job("C", 20, 2, 200)]
    sim = run(jobs, cluster(1, 4), "fifo", "oracle")
    assert ends(sim) == {"A": 100, "B": 150, "C": 350}


def test_tiresias_demotes_a_long_job_and_lets_a_newcomer_preempt_it():
    """One GPU. A (10,000 s) crosses 3,600 GPU-s at t=3,600 and drops to queue 1. B arrives at 5,000 in
    queue 0 and preempts A (A has run well over the 300 s minimum). B runs 5,000-5,100. A restarts,
    having lost 60 s of progress: 5,000 - 60 = 4,940 done, 5,060 left -> ends at 10,160."""
    sim = run([job("A", 0, 1, 10_000), job("B", 5000, 1, 100)], cluster(1, 1), "tiresias", "none")
    assert ends(sim) == {"A": 10_160, "B": 5_100}
    assert sim.jobs[0].preemptions == 1


def test_srtf_preempts_a_running_job_that_would_end_later():
    """One GPU. A (1,000 s) starts at 0; B (50 s) arrives at 400 when A has 600 s left: B ends first."""
    sim = run([job("A", 0, 1, 1000), job("B", 400, 1, 50)], cluster(1, 1), "srtf", "oracle")
    assert ends(sim)["B"] == 450
    assert ends(sim)["A"] == 1000 + 50 + 60  # waited 50 s and lost 60 s of progress


def test_sjf_without_estimates_is_first_come_first_served_but_lets_small_jobs_pass():
    """No annotation: SJF keeps submission order yet is non-blocking, so C passes the blocked B."""
    sim = run(three_jobs(), cluster(1, 4), "sjf", "none")
    assert ends(sim) == {"A": 100, "B": 150, "C": 50}
