"""Delay scheduling over locality levels, its starvation guard and network-sensitive preemption.

Small literal clusters (`ClusterSpec.uniform`) and literal jobs; the `oracle` annotator gives each
job its true sensitivity and duration, so the expected timers follow from the documented formula
W = factor * (slowdown - 1) * duration.
"""

from __future__ import annotations

import pytest

from schedmate.annotators import ANNOTATORS
from schedmate.policies import build_scheduler
from schedmate.policies.delay import (
    DelayConfig,
    DelayPlacement,
    NetworkMigrationConfig,
    NetworkPreemptionConfig,
)
from schedmate.records import ClusterSpec, Job, NetworkSpec
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.sim.state import Status

BIG = 10**7  # a duration that outlives every test
X = NetworkSpec.parse("ideal").cross_rack_penalty
"""What crossing racks multiplies the rack timer by on the `ideal` network (no shared links)."""


def job(id: str, t: float, gpus: int, dur: float, slowdown: float = 1.0) -> Job:
    return Job(id=id, user="u", submit_time=t, num_gpus=gpus, duration_s=dur, spread_slowdown=slowdown)


def cluster(nodes: int, gpus: int, per_rack: int) -> ClusterSpec:
    return ClusterSpec.uniform(nodes, gpus, per_rack, network=NetworkSpec.parse("ideal"))


def run(jobs, spec, config: DelayConfig, preemption=False, annotator="oracle", restart_cost=60.0,
        migration=False) -> Simulator:
    sched = build_scheduler("delay", config=config, preemption=preemption, migration=migration)
    sim = Simulator(jobs, spec, sched, ANNOTATORS.create(annotator),
                    ReplayConfig(restart_cost_s=restart_cost, audit=True))
    return sim.run()


def state(sim: Simulator, id: str):
    return next(js for js in sim.jobs if js.job.id == id)


# Three 4-GPU nodes each with a long 3-GPU blocker: one GPU free per node, so a 2-GPU job can only
# be spread over two nodes.
BLOCKERS = [job(f"b{i}", 0.0, 3, BIG) for i in range(3)]


@pytest.mark.parametrize("slowdown", [1.0, 1.05, 1.2])  # sensitivity 0, 0.017, 0.067: all < 0.1
@pytest.mark.parametrize("annotator", ["oracle", "none"])
def test_an_insensitive_job_never_waits(slowdown, annotator):
    # With `none` every job has the default sensitivity; set it insensitive to treat all alike so.
    cfg = DelayConfig(load_aware=False, node_factor=2.0, rack_factor=4.0, default_sensitivity=0.0)
    sim = run([*BLOCKERS, job("x", 100.0, 2, 5000.0, slowdown)], cluster(3, 4, per_rack=1), cfg, annotator=annotator)
    x = state(sim, "x")
    assert x.first_start == 100.0
    assert x.max_nodes == 2  # it went spread at once rather than wait for a node


@pytest.mark.parametrize(
    "slowdown, dur, per_rack, node_f, rack_f, expect_nodes, expect_wait",
    [
        # separate racks: no L1 exists, the job waits W_rack = rack_f * (s - 1) * D * X then goes anywhere
        (4.0, 1000.0, 1, 0.5, 1.0, 2, 1.0 * 3.0 * 1000.0 * X),
        (2.5, 2000.0, 1, 0.5, 2.0, 2, 2.0 * 1.5 * 2000.0 * X),
        # one rack: L1 (inside the rack, two nodes) opens after W_node = node_f * (s - 1) * D
        (4.0, 1000.0, 4, 0.5, 1.0, 2, 0.5 * 3.0 * 1000.0),
        (3.0, 600.0, 4, 1.0, 3.0, 2, 1.0 * 2.0 * 600.0),
    ],
)
def test_a_sensitive_job_waits_at_most_its_timers_then_goes_spread(
    slowdown, dur, per_rack, node_f, rack_f, expect_nodes, expect_wait
):
    cfg = DelayConfig(load_aware=False, node_factor=node_f, rack_factor=rack_f)
    sim = run([*BLOCKERS, job("s", 100.0, 2, dur, slowdown)], cluster(3, 4, per_rack), cfg)
    s = state(sim, "s")
    assert s.first_start == pytest.approx(100.0 + expect_wait)
    assert s.max_nodes == expect_nodes


def test_a_sensitive_job_takes_a_node_as_soon_as_one_frees_before_its_timer():
    cfg = DelayConfig(load_aware=False, node_factor=1.0, rack_factor=2.0)
    jobs = [job("b0", 0.0, 3, 500.0), job("b1", 0.0, 3, BIG), job("b2", 0.0, 3, BIG), job("s", 100.0, 2, 1000.0, 4.0)]
    sim = run(jobs, cluster(3, 4, per_rack=1), cfg)
    s = state(sim, "s")
    assert s.first_start == 500.0 and s.max_nodes == 1


@pytest.mark.parametrize("others", [0, 1, 5])
def test_the_wait_is_measured_from_the_first_offer_and_not_reset_by_other_launches(others):
    # Short insensitive 1-GPU jobs launch (and end) while the sensitive job waits; its start must not move.
    cfg = DelayConfig(load_aware=False, node_factor=0.5, rack_factor=1.0)
    extra = [job(f"o{i}", 200.0 + 300.0 * i, 1, 50.0, 1.0) for i in range(others)]
    sim = run([*BLOCKERS, job("s", 100.0, 2, 1000.0, 4.0), *extra], cluster(3, 4, per_rack=1), cfg)
    s = state(sim, "s")
    assert s.first_start == pytest.approx(100.0 + 3000.0 * X)
    for i in range(others):
        o = state(sim, f"o{i}")
        assert o.first_start == 200.0 + 300.0 * i  # they did launch during the wait
        assert o.first_start < s.first_start


def test_time_spent_waiting_for_free_gpus_is_not_charged_to_the_locality_timers():
    # Every GPU is busy when the sensitive job arrives (t=100); at t=1000 one GPU frees on each node
    # (separate racks), so from then on it could only go spread: its locality wait starts at 1000, and
    # it goes anywhere W_rack = 1.0 * (4 - 1) * 1000 s * X later, not W_rack after its submission.
    cfg = DelayConfig(load_aware=False, node_factor=0.5, rack_factor=1.0)
    fillers = [job(f"f{i}", 0.0, 1, 1000.0) for i in range(3)]
    sim = run([*BLOCKERS, *fillers, job("s", 100.0, 2, 1000.0, 4.0)], cluster(3, 4, per_rack=1), cfg)
    s = state(sim, "s")
    assert all(state(sim, f"f{i}").end_time == 1000.0 for i in range(3))
    assert s.first_start == pytest.approx(1000.0 + 3000.0 * X)
    assert s.max_nodes == 2


@pytest.mark.parametrize("learn, expect_start", [(True, 2000.0 + 1.0 * 1.5 * 1000.0 * X),
                                                 (False, 2000.0 + 1.0 * 1.5 * 3600.0 * X)])
def test_a_job_without_a_duration_estimate_waits_in_proportion_to_the_median_finished_run_time(learn, expect_start):
    # annotator `none`: no duration, default sensitivity 0.5 (slowdown 2.5). Three 1-GPU jobs run 1000 s
    # and finish; then a 2-GPU job can only go spread (separate racks), after W_rack = 1.0 * 1.5 * D * X
    # with D the median finished run time (1000 s), or the assumed 3600 s when learning is off.
    cfg = DelayConfig(load_aware=False, node_factor=0.5, rack_factor=1.0, learn_duration=learn)
    short = [job(f"f{i}", 0.0, 1, 1000.0) for i in range(3)]
    sim = run([*BLOCKERS, *short, job("s", 2000.0, 2, 5000.0)], cluster(3, 4, per_rack=1), cfg, annotator="none")
    s = state(sim, "s")
    assert s.first_start == pytest.approx(expect_start)
    assert s.max_nodes == 2


@pytest.mark.parametrize(
    "age_cap, starts_by",
    [
        (1000.0, 1000.0 + 100.0),  # the guard reserves 8 GPUs: at most one small-job runtime later
        (BIG, None),  # no guard: the stream of small jobs keeps it out until the stream ends
    ],
)
def test_a_job_that_waited_the_age_cap_reserves_gpus_and_starts(age_cap, starts_by):
    # 2 x 4 GPUs; an 8-GPU job and a stream of 1-GPU jobs (every 20 s, 100 s each, until t=6000).
    stream = [job(f"q{i:03d}", 20.0 * i, 1, 100.0) for i in range(300)]
    big = job("big", 1.0, 8, 500.0)
    cfg = DelayConfig(load_aware=False, age_cap_s=age_cap, guard="age")
    sim = run([big, *stream], cluster(2, 4, per_rack=1), cfg, annotator="none")
    b = state(sim, "big")
    if starts_by is not None:
        assert b.first_start <= starts_by
    else:
        assert b.first_start > 20.0 * 299  # starved until the stream dried up
    assert all(js.status is Status.done for js in sim.jobs)


def claim_case(guard_victims: int, min_interval: float, preemption: bool = True) -> Simulator:
    """3 x 4 GPUs in one rack. `a` (higher priority than `big`) holds node 0; `w` holds node 1 until 100.
    The 8-GPU `big` arrives at 1 and cannot fit; v1, v2 (2 GPUs each, after `big`) take node 2 at
    once, v3, v4 take node 1 at 100 (non-blocking FIFO: `big` still cannot fit). Every job but `big`
    runs forever. `big` passes the 1000 s age cap; arrivals at 1200 and 1300 make scheduling passes."""
    jobs = [job("a", 0.0, 4, BIG), job("w", 0.0, 4, 100.0), job("big", 1.0, 8, 500.0),
            *[job(f"v{i}", 1.0 + i, 2, BIG) for i in range(1, 5)],
            job("t1", 1200.0, 1, 50.0), job("t2", 1300.0, 1, 50.0)]
    cfg = DelayConfig(load_aware=False, age_cap_s=1000.0, guard="age")
    pre = NetworkPreemptionConfig(min_interval_s=min_interval, guard_victims=guard_victims) if preemption else False
    return run(jobs, cluster(3, 4, per_rack=3), cfg, preemption=pre)


@pytest.mark.parametrize(
    "guard_victims, min_interval, preemption, big_start",
    [
        (8, 300.0, True, 1200.0),  # aged: claims nodes 1 and 2 (four lower-priority victims) at once
        (8, 1150.0, True, 1300.0),  # at 1200 v3/v4 have run only 1100 s: claimed at the next pass
        (3, 300.0, True, None),  # four victims needed, three allowed: it waits for its nodes to drain
        (8, 300.0, False, None),  # no preemption: the reservation only drains
    ],
)
def test_the_starvation_guards_holder_claims_its_nodes_by_preempting_lower_priority_jobs(
    guard_victims, min_interval, preemption, big_start
):
    sim = claim_case(guard_victims, min_interval, preemption)
    big = state(sim, "big")
    assert state(sim, "a").preemptions == 0  # higher priority than the holder: never a victim
    victims = [state(sim, f"v{i}") for i in range(1, 5)]
    if big_start is None:
        assert big.first_start >= BIG  # it starts only when `a` ends and frees a node
        assert all(v.preemptions == 0 or v.last_preempted >= BIG for v in victims)
    else:
        assert big.first_start == pytest.approx(big_start)
        assert big.max_nodes == 2 and big.max_racks == 1  # its consolidated placement: nodes 1 and 2
        assert all(v.preemptions == 1 for v in victims)
        assert sim.scheduler.preemption.claims == 1
    assert all(js.status is Status.done for js in sim.jobs)


@pytest.mark.parametrize("locality_first", [True, False])
def test_a_relaxed_placement_takes_only_the_gpus_left_after_the_consolidated_ones(locality_first):
    # 4 x 4 GPUs in separate racks, long blockers leave 0, 0, 1, 1 GPUs free; at 500 two GPUs free on
    # node 0 and one on node 1. Both jobs wait then: the insensitive 3-GPU x (no timer: it would go
    # anywhere) is ahead of the sensitive 2-GPU y, and only y can start consolidated (node 0).
    blockers = [job("a0", 0.0, 2, BIG), job("a1", 0.0, 3, BIG), job("a2", 0.0, 3, BIG), job("a3", 0.0, 3, BIG),
                job("b0", 0.0, 2, 500.0), job("f", 0.0, 1, 500.0)]
    jobs = [*blockers, job("x", 100.0, 3, 1000.0), job("y", 150.0, 2, 1000.0, 4.0)]
    sim = run(jobs, cluster(4, 4, per_rack=1), DelayConfig(load_aware=False, locality_first=locality_first))
    x, y = state(sim, "x"), state(sim, "y")
    assert x.first_start == 500.0  # x starts as soon as GPUs free either way...
    if locality_first:
        assert y.first_start == 500.0 and y.max_nodes == 1  # ...y keeps its consolidated slot
        assert x.max_nodes == 3  # and x spreads over the GPUs y left
    else:
        assert x.max_nodes == 2  # ...on the fewest nodes, node 0 among them
        assert y.first_start == 1500.0 and y.max_nodes == 1  # y waits for x to end


def test_the_delay_placement_is_monotone_unless_a_reservation_is_held():
    p = DelayPlacement()
    assert p.monotone is True
    stream = [job(f"q{i:03d}", 20.0 * i, 1, 100.0) for i in range(30)]
    sched = build_scheduler("delay", config=DelayConfig(load_aware=False, age_cap_s=100.0), preemption=False)
    sim = Simulator([job("big", 1.0, 8, 500.0), *stream], cluster(2, 4, 1), sched, ANNOTATORS.create("none"))
    sim.run(until=150.0)
    assert sched.placement.monotone is False  # the big job holds a reservation


# ------------------------------------------------------------------------------------------ preemption

PRE = NetworkPreemptionConfig(sensitive_from=0.5, victim_below=0.2, min_interval_s=300.0)


def preemption_case(victim_submit: float, victim_slowdown: float, min_interval: float):
    """3 x 4 GPUs in separate racks. b1 holds node 0 and x3 three GPUs of node 1 (both sensitive, so
    never victims); x2 holds two GPUs of node 2 until 100. The sensitive 3-GPU job s arrives at 10:
    three GPUs are free but on two nodes, so its locality wait starts (W_node = 0, W_rack far away).
    The victim candidate v (2 GPUs) takes node 2's free GPUs; from 100 node 2 holds only v, so
    stopping v gives s a node. Jobs t (at 500 and 1200) force later scheduling passes."""
    jobs = [
        job("b1", 0.0, 4, BIG, 4.0),
        job("x3", 0.0, 3, BIG, 4.0),
        job("x2", 0.0, 2, 100.0, 1.0),
        job("s", 10.0, 3, 5000.0, 4.0),
        job("v", victim_submit, 2, 20000.0, victim_slowdown),
        job("t1", 500.0, 1, 50.0, 1.0),
        job("t2", 1200.0, 1, 50.0, 1.0),
    ]
    cfg = DelayConfig(load_aware=False, node_factor=0.0, rack_factor=10.0)  # its node timer has run out at once
    pre = NetworkPreemptionConfig(sensitive_from=0.5, victim_below=0.2, min_interval_s=min_interval)
    return run(jobs, cluster(3, 4, per_rack=1), cfg, preemption=pre)


@pytest.mark.parametrize(
    "victim_submit, victim_slowdown, min_interval, s_start, v_preempted",
    [
        (20.0, 1.0, 300.0, 500.0, 1),  # lower priority, insensitive, ran 480 s >= 300: preempted at 500
        (20.0, 1.0, 1000.0, 1200.0, 1),  # ran only 480 s at 500: spared until the pass at 1200
        (5.0, 1.0, 300.0, 20005.0, 0),  # submitted before s (higher priority): never preempted
        (20.0, 4.0, 300.0, 20020.0, 0),  # sensitive: never preempted
        (20.0, 1.6, 300.0, 20020.0, 0),  # sensitivity 0.2 is not below the victim threshold
    ],
)
def test_preemption_only_takes_lower_priority_insensitive_jobs_and_respects_the_minimum_interval(
    victim_submit, victim_slowdown, min_interval, s_start, v_preempted
):
    sim = preemption_case(victim_submit, victim_slowdown, min_interval)
    s, v = state(sim, "s"), state(sim, "v")
    assert s.first_start == pytest.approx(s_start)
    assert v.preemptions == v_preempted
    assert s.max_nodes == 1  # the sensitive job got a consolidated slot
    for js in sim.jobs:
        assert js.job.id == "v" or js.preemptions == 0  # nobody else was touched
    if v_preempted:
        # the victim lost the restart cost: it ends later than its own runtime allows
        assert v.end_time > v.first_start + 20000.0


@pytest.mark.parametrize(
    "last_start, last_preempted, now, chosen",
    [
        (0.0, float("-inf"), 1000.0, True),  # ran 1000 s, never preempted
        (0.0, float("-inf"), 999.0, False),  # ran less than the interval
        (1500.0, 1200.0, 2600.0, True),  # preempted 1400 s ago, restarted 1100 s ago
        (1500.0, 1200.0, 2150.0, False),  # preempted only 950 s ago
        (1300.0, 1200.0, 2250.0, False),  # preempted 1050 s ago but restarted only 950 s ago
    ],
)
def test_no_job_is_preempted_again_within_the_minimum_interval(last_start, last_preempted, now, chosen):
    from schedmate.policies.base import ORDERS
    from schedmate.policies.delay import DelayTimers, NetworkPreemption
    from schedmate.records import Annotation
    from schedmate.sim.state import ClusterState, JobState

    spec = cluster(2, 4, per_rack=1)
    cs = ClusterState(spec)
    ann = lambda j: Annotation(job_id=j.id, network_sensitivity=j.network_sensitivity)
    hog, v_job, s_job = job("hog", 0.0, 4, BIG, 4.0), job("v", 20.0, 4, BIG, 1.0), job("s", 10.0, 4, 100.0, 4.0)
    hog_s = JobState(job=hog, idx=0, annotation=ann(hog), status=Status.running, placement=((0, 4),))
    v = JobState(job=v_job, idx=2, annotation=ann(v_job), status=Status.running, placement=((1, 4),),
                 last_start=last_start, last_preempted=last_preempted)
    s = JobState(job=s_job, idx=1, annotation=ann(s_job), status=Status.waiting, eligible_since=10.0)
    cs.allocate(hog_s.placement)
    cs.allocate(v.placement)
    timers = DelayTimers(DelayConfig(load_aware=False, node_factor=0.0, rack_factor=0.0))
    pol = NetworkPreemption(timers, NetworkPreemptionConfig(min_interval_s=1000.0))
    assert not pol.wants(s, now)  # it waits for GPUs, not for locality: no preemption for it
    timers.start_clock(s, 10.0)  # offered GPUs without an L0 slot at 10: held back for locality
    assert pol.wants(s, now)
    found = pol.victims(s, [hog_s, v], cs, DelayPlacement(), ORDERS.create("fifo-nb"), now)
    if chosen:
        assert found is not None and found[0] == [v] and found[1] == ((1, 4),)
    else:
        assert found is None


# ------------------------------------------------------------------------------------------ migration


def starts(sim: Simulator, id: str) -> list[tuple[float, tuple]]:
    idx = state(sim, id).idx
    return [(t, p) for t, what, i, p in sim.audit if what == "start" and i == idx]


@pytest.mark.parametrize(
    "slowdown, gain_factor, moved",
    [
        (4.0, 2.0, True),  # sensitive, saves far more than two restarts: moved when node 0 frees
        (4.0, 1e6, False),  # the saving does not reach the (huge) bar: left where it is
        (1.05, 2.0, False),  # insensitive (s < 0.1): never moved
    ],
)
def test_a_spread_job_moves_onto_a_freed_node_only_when_sensitive_and_the_saving_outweighs_the_restart(
    slowdown, gain_factor, moved
):
    # Timers 0: the 2-GPU job goes spread at once over the blockers' free GPUs (separate racks, so
    # congested uplinks slow it); node 0 frees at 500.
    cfg = DelayConfig(load_aware=False, node_factor=0.0, rack_factor=0.0)
    blockers = [job("b0", 0.0, 3, 500.0), job("b1", 0.0, 3, BIG), job("b2", 0.0, 3, BIG)]
    mig = NetworkMigrationConfig(min_interval_s=300.0, gain_factor=gain_factor)
    spec = ClusterSpec.uniform(3, 4, 1, network=NetworkSpec.parse("congested:4"))
    sim = run([*blockers, job("s", 100.0, 2, 5000.0, slowdown)], spec, cfg, migration=mig)
    s = state(sim, "s")
    got = starts(sim, "s")
    assert got[0][0] == 100.0 and len(got[0][1]) == 2  # started spread
    if moved:
        assert s.migrations == 1 and s.preemptions == 0
        assert got[1][0] == 500.0 and len(got[1][1]) == 1  # onto one node as soon as it freed
        assert s.queued_s == 0.0  # a move never queues
    else:
        assert s.migrations == 0 and len(got) == 1


def test_a_move_waits_for_the_minimum_interval_since_the_last_start():
    # Node 0 frees at 500 but the job has run only 400 s of the 1000 s interval; the next pass (a
    # 1-GPU arrival at 1200) moves it.
    cfg = DelayConfig(load_aware=False, node_factor=0.0, rack_factor=0.0)
    blockers = [job("b0", 0.0, 3, 500.0), job("b1", 0.0, 3, BIG), job("b2", 0.0, 3, BIG)]
    spec = ClusterSpec.uniform(3, 4, 1, network=NetworkSpec.parse("congested:4"))
    jobs = [*blockers, job("s", 100.0, 2, 5000.0, 4.0), job("t", 1200.0, 1, 50.0)]
    sim = run(jobs, spec, cfg, migration=NetworkMigrationConfig(min_interval_s=1000.0))
    got = starts(sim, "s")
    assert [t for t, _ in got] == [100.0, 1200.0]
    assert len(got[1][1]) == 1


@pytest.mark.parametrize(
    "network, aware, factor",
    [("ideal", True, 1.25), ("congested", True, 1.25 * 4), ("congested:8", True, 1.25 * 8), ("congested:8", False, 1.0)],
)
def test_the_rack_timer_grows_with_what_crossing_racks_costs_on_the_network(network, aware, factor):
    # Separate racks: the 2-GPU job can only cross racks, after W_rack = 1.0 * (4 - 1) * 1000 s * factor.
    cfg = DelayConfig(load_aware=False, node_factor=0.5, rack_factor=1.0, network_aware=aware)
    spec = ClusterSpec.uniform(3, 4, 1, network=NetworkSpec.parse(network))
    sim = run([*BLOCKERS, job("s", 100.0, 2, 1000.0, 4.0)], spec, cfg)
    s = state(sim, "s")
    assert s.first_start == pytest.approx(100.0 + 3000.0 * factor)
    assert s.max_racks == 2


@pytest.mark.parametrize("aware, pressure", [(True, 1.0 + (4 + 2) / 12), (False, 1.0)])
def test_the_timers_grow_with_the_gpus_the_queue_asks_for(aware, pressure):
    # A 4-GPU job waits for GPUs (never enough free) while the sensitive 2-GPU job waits for locality:
    # 6 of the cluster's 12 GPUs are asked for, so W_rack = 1.0 * 3 * 1000 s * X * (1 + 6 / 12).
    cfg = DelayConfig(node_factor=0.5, rack_factor=1.0, load_aware=aware)
    jobs = [*BLOCKERS, job("q", 50.0, 4, 1000.0), job("s", 100.0, 2, 1000.0, 4.0)]
    sim = run(jobs, cluster(3, 4, per_rack=1), cfg)
    s = state(sim, "s")
    assert s.first_start == pytest.approx(100.0 + 3000.0 * X * pressure)
    assert state(sim, "q").first_start >= BIG  # it found four free GPUs only when the blockers ended


@pytest.mark.parametrize(
    "estimate, done, expected",
    [
        (5000.0, 1000.0, 4000.0),  # the estimate minus the progress
        (5000.0, 6000.0, 6000.0),  # outran its estimate: as much again as it has done
        (None, 300.0, 1000.0 - 300.0),  # no estimate: the median finished run time minus progress...
        (None, 800.0, 800.0),  # ...or as much again as done, whichever is more
    ],
)
def test_a_moves_predicted_remaining_work_falls_back_to_its_progress_once_the_estimate_is_outrun(estimate, done, expected):
    from schedmate.policies.delay import DelayTimers, NetworkMigration
    from schedmate.records import Annotation, DurationEstimate
    from schedmate.sim.state import JobState

    timers = DelayTimers(DelayConfig())
    timers.observe_run(1000.0)  # one finished job: the median run time is 1000 s
    est = DurationEstimate(p10=estimate, p50=estimate, p90=estimate) if estimate is not None else None
    j = job("m", 0.0, 2, 9999.0, 4.0)
    js = JobState(job=j, idx=0, annotation=Annotation(job_id="m", predicted_duration=est), work_done=done)
    assert NetworkMigration(timers).remaining_work(js) == pytest.approx(expected)
