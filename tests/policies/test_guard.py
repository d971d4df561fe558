"""The starvation guard's `cost` rule: who may hold the reservation, and what holding it costs.

Small literal clusters (`ClusterSpec.uniform`) and literal jobs. Under the `cost` rule a job may hold
the reservation once it has queued `guard_factor` x its GPUs x its duration / the cluster's GPUs (with
the oracle annotator the duration is the true one; with `none`, the mean run time of the jobs finished
so far).
"""

from __future__ import annotations

import itertools

import pytest

from schedmate.annotators import ANNOTATORS
from schedmate.policies import build_scheduler
from schedmate.policies.delay import DelayConfig, DelayPlacement, DelayTimers, NetworkPreemptionConfig
from schedmate.records import Annotation, ClusterSpec, Job, NetworkSpec
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.sim.state import ClusterState, JobState, Status

BIG = 10**7


def job(id: str, t: float, gpus: int, dur: float, slowdown: float = 1.0) -> Job:
    return Job(id=id, user="u", submit_time=t, num_gpus=gpus, duration_s=dur, spread_slowdown=slowdown)


def cluster(nodes: int, gpus: int, per_rack: int) -> ClusterSpec:
    return ClusterSpec.uniform(nodes, gpus, per_rack, network=NetworkSpec.parse("ideal"))


def run(jobs: list[Job], spec: ClusterSpec, config: DelayConfig, annotator: str = "oracle",
        preemption: NetworkPreemptionConfig | bool = True) -> Simulator:
    sched = build_scheduler("delay", config=config, preemption=preemption, migration=False)
    return Simulator(jobs, spec, sched, ANNOTATORS.create(annotator), ReplayConfig(audit=True)).run()


def state(sim: Simulator, id: str) -> JobState:
    return next(js for js in sim.jobs if js.job.id == id)


def flood(until: float, gap: float, dur: float, gpus: int = 1) -> list[Job]:
    return [job(f"q{i:04d}", gap * i, gpus, dur) for i in range(int(until / gap))]


@pytest.mark.parametrize("annotator", ["oracle", "none"])
def test_a_big_job_cannot_starve_behind_a_flood_of_small_jobs(annotator):
    # 2 x 4 GPUs; an 8-GPU job and 1-GPU jobs every 20 s (100 s each) until t=6000: without a guard the
    # flood keeps one GPU busy at every instant and the big job waits for the flood to end.
    stream = flood(6000.0, 20.0, 100.0)
    big = job("big", 1.0, 8, 500.0)
    starved = run([big, *stream], cluster(2, 4, 1), DelayConfig(load_aware=False, guard="age", age_cap_s=BIG),
                  annotator)
    assert state(starved, "big").first_start > 5900.0
    cfg = DelayConfig(load_aware=False, guard="cost", guard_factor=2.0, age_cap_s=BIG)
    sim = run([big, *stream], cluster(2, 4, 1), cfg, annotator)
    # it may hold the reservation after 2 x 8 GPUs x D / 8 GPUs of queueing (D: 500 s with the oracle,
    # the mean finished run, 100 s, without), then its nodes drain within one small job's run time
    d = 500.0 if annotator == "oracle" else 100.0
    assert state(sim, "big").first_start <= 1.0 + 2.0 * d + 100.0 + 20.0
    assert all(js.status is Status.done for js in sim.jobs)


def test_among_jobs_past_their_threshold_the_one_that_queued_longest_holds_the_reservation():
    # 2 x 4 GPUs, both busy. 4-GPU jobs without a duration estimate (`none`; nothing finished: D is
    # `assumed_duration_s`, 100 s) may hold the reservation after 1 x 4 x 100 / 8 = 50 s of queueing.
    timers = DelayTimers(DelayConfig(guard="cost", guard_factor=1.0, assumed_duration_s=100.0))
    placement = DelayPlacement(timers=timers)
    busy = ClusterState(cluster(2, 4, 1))
    busy.free = [0, 0]
    busy.total_free = 0
    old, young, fresh = (JobState(job=job(i, t, 4, 100.0), idx=n, annotation=Annotation(job_id=i),
                                  status=Status.waiting, eligible_since=t)
                         for n, (i, t) in enumerate((("old", 0.0), ("young", 50.0), ("fresh", 100.0))))
    placement.note_unplaced(fresh, busy, 120.0)  # queued 20 s: not yet
    assert placement.guard.holder is None
    placement.note_unplaced(young, busy, 120.0)
    assert placement.guard.holder is young
    placement.note_unplaced(old, busy, 120.0)  # queued longer: it takes the reservation over
    assert placement.guard.holder is old
    placement.note_unplaced(young, busy, 130.0)
    assert placement.guard.holder is old


def idle_while_waiting(sim: Simulator) -> float:
    """GPU-seconds left free while some job that fits the free GPUs waited (from the start/stop audit)."""
    total = sum(n.gpus for n in sim.spec.nodes)
    events = sorted({t for t, *_ in sim.audit} | {js.job.submit_time for js in sim.jobs})
    used: dict[float, int] = {}
    for t, kind, _, placement in sim.audit:
        used[t] = used.get(t, 0) + (1 if kind == "start" else -1) * sum(k for _, k in placement)
    busy, idle = 0, 0.0
    for a, b in itertools.pairwise(events):
        busy += used.get(a, 0)
        free = total - busy
        waiting = [js for js in sim.jobs if js.job.submit_time <= a and (js.first_start is None or js.first_start > a)]
        if free and any(js.job.num_gpus <= free for js in waiting):
            idle += free * (b - a)
    return idle


def test_under_a_flood_of_small_jobs_the_guard_idles_no_gpus_and_stops_no_job():
    # 2 x 4 GPUs overloaded (load 1.25) by 1- and 2-GPU jobs of 60-140 s: everyone waits about alike,
    # and jobs pass their small cost threshold (20 x at most 2 GPUs x 140 s / 8 GPUs = 700 s) and may
    # hold the reservation in turn. No holder waits much longer than jobs do now, so none keeps free
    # GPUs idle for itself; and no job has run the 30-minute minimum a claim needs. The replay is then
    # exactly the one without a guard.
    jobs = [job(f"s{i:03d}", 15.0 * i, 1 + i % 2, 60.0 + 20 * (i % 5)) for i in range(200)]
    guarded = run(jobs, cluster(2, 4, 1), DelayConfig(load_aware=False, guard="cost"))
    off = run(jobs, cluster(2, 4, 1), DelayConfig(load_aware=False, guard="age", age_cap_s=BIG))
    assert guarded.scheduler.placement.guard.rule.name == "cost"
    assert idle_while_waiting(guarded) == idle_while_waiting(off) == 0.0
    assert sum(js.preemptions for js in guarded.jobs) == 0
    assert [js.first_start for js in guarded.jobs] == [js.first_start for js in off.jobs]


def test_a_holder_that_waits_far_longer_than_jobs_do_now_keeps_its_free_gpus():
    # The guard's protection switches on only past guard_wait_factor x the median recent wait: with
    # a factor of 0 it always protects, and then the same flood does leave GPUs idle for holders.
    jobs = [job(f"s{i:03d}", 15.0 * i, 1 + i % 2, 60.0 + 20 * (i % 5)) for i in range(200)]
    eager = run(jobs, cluster(2, 4, 1), DelayConfig(load_aware=False, guard="cost", guard_wait_factor=0.0))
    assert idle_while_waiting(eager) > 0.0


@pytest.mark.parametrize("pay", [0.0, 1.0])
@pytest.mark.parametrize("annotator", ["oracle", "none"])
def test_a_big_job_arriving_into_a_backlog_is_served_in_its_turn_not_after_the_flood(annotator, pay):
    # 1 x 4 GPUs overloaded 1.5x for 40 h by 1-GPU jobs of an hour (one every 10 min), long enough to
    # be claimed; a 4-GPU job arrives at 10 h, when 20 jobs are queued. Every queued job passes its
    # small cost point (1 x its GPU-time / 4 GPUs), so the reservation goes in order of queueing: the
    # big job holds it once the jobs queued before it have started, about 5 h later, and claims its
    # node. The 60 jobs submitted before it bound its wait at 60 x 1 h / 4 GPUs. Without a guard it
    # waits until the flood ends and its backlog drains. With claims that must pay (`guard_pay`) its
    # claims do not pay (an hour-long victim's remaining run is shorter than the big job's), but jobs
    # pass it while it holds the reservation, and once they took its 4 GPUs (`guard_backstop`) it is
    # overdue and claims: it cannot starve.
    stream = [job(f"q{i:04d}", 600.0 * i, 1, 3600.0) for i in range(240)]
    big = job("big", 10 * 3600.0, 4, 1000.0)
    off = run([big, *stream], cluster(1, 4, 1), DelayConfig(load_aware=False, guard="age", age_cap_s=BIG), annotator)
    assert state(off, "big").first_start > 40 * 3600.0
    cfg = DelayConfig(load_aware=False, guard="cost", guard_factor=1.0, age_cap_s=BIG)
    sim = run([big, *stream], cluster(1, 4, 1), cfg, annotator, NetworkPreemptionConfig(guard_pay=pay))
    ahead = sum(j.submit_time < big.submit_time for j in stream)
    assert state(sim, "big").first_start <= big.submit_time + ahead * 3600.0 / 4 + 3600.0
    assert all(js.status is Status.done for js in sim.jobs)


@pytest.mark.parametrize("annotator", ["oracle", "none"])
def test_under_a_flood_of_alike_jobs_claims_that_must_pay_stop_no_job_and_idle_no_gpu(annotator):
    # The same backlog without the big job: 1 x 4 GPUs overloaded 1.5x for 40 h by 1-GPU jobs of an
    # hour. The oldest waiting job holds the reservation once past its cost point (20 x 1 h / 4 GPUs).
    # Claiming always stops a running job to start one just like it: time-slicing, which only raises
    # the mean JCT. A claim that must pay never does (the victim's remaining run is shorter than the
    # holder's whole run), and no job passes the holder (it starts with the next GPU to free), so the
    # backstop never fires: the replay is exactly the one without a guard.
    stream = [job(f"q{i:04d}", 600.0 * i, 1, 3600.0) for i in range(240)]
    off = run(stream, cluster(1, 4, 1), DelayConfig(load_aware=False, guard="age", age_cap_s=BIG), annotator)
    always = run(stream, cluster(1, 4, 1), DelayConfig(load_aware=False), annotator)
    paying = run(stream, cluster(1, 4, 1), DelayConfig(load_aware=False), annotator,
                 NetworkPreemptionConfig(guard_pay=1.0))

    def mean_jct(sim: Simulator) -> float:
        return sum(js.end_time - js.job.submit_time for js in sim.jobs) / len(sim.jobs)

    assert sum(js.preemptions for js in always.jobs) > 0 and mean_jct(always) > mean_jct(off)
    assert sum(js.preemptions for js in paying.jobs) == 0
    assert idle_while_waiting(paying) == idle_while_waiting(off) == 0.0
    assert [js.first_start for js in paying.jobs] == [js.first_start for js in off.jobs]


def test_a_claim_pays_when_the_victim_would_hold_the_holder_back_longer_than_the_holder_runs():
    # 1 x 4 GPUs, a 2-GPU job runs for the first 600 s. A 4-GPU job arrives at 1 s, a 2-GPU job at 2 s
    # passes it, and the 4-GPU job may hold the reservation a little later (guard_factor 0.03: after
    # 0.03 x its run). If the passer runs 10 h and the holder 1 h, stopping the passer (its 9+ h left
    # against the holder's hour) pays: the holder claims it once it has run the 30-minute minimum. The
    # other way round (holder 10 h, passer 1 h) no claim pays, no job passed it while it held the
    # reservation (not overdue), and the holder waits for the passer to end. (A job arriving at 1900 s
    # makes the scheduling pass in which the claim is made or not.)
    spec = cluster(1, 4, 1)
    cfg = DelayConfig(load_aware=False, guard_factor=0.03)
    pay = NetworkPreemptionConfig(guard_pay=1.0)

    def jobs(holder_s: float, passer_s: float) -> list[Job]:
        return [job("first", 0.0, 2, 600.0), job("holder", 1.0, 4, holder_s), job("passer", 2.0, 2, passer_s),
                job("late", 1900.0, 4, 100.0)]

    sim = run(jobs(3600.0, 36000.0), spec, cfg, "oracle", pay)
    assert state(sim, "passer").preemptions == 1
    assert state(sim, "holder").first_start == 1900.0
    sim = run(jobs(36000.0, 3600.0), spec, cfg, "oracle", pay)
    assert sum(js.preemptions for js in sim.jobs) == 0
    assert state(sim, "holder").first_start == pytest.approx(2.0 + 3600.0)
