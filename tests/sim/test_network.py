"""Placement and congestion set a job's speed (schedmate/sim/network.py)."""

from helpers import cluster, ends, job, run, spreading_fifo
from pytest import approx


def test_a_job_on_one_node_runs_at_full_speed_whatever_its_sensitivity():
    sim = run([job("bert", 0, 4, 100, slowdown=3.0)], cluster(2, 4, network="congested"), "fifo", placement="consolidate")
    assert ends(sim)["bert"] == approx(100)


def test_a_sensitive_job_spread_over_two_nodes_runs_its_published_slowdown_slower():
    """Two 2-GPU nodes; a 2-GPU job scattered 1+1 first needs both nodes: 3x slower (c = 2)."""
    blocker = job("blocker", 0, 1, 1000)  # takes one GPU of node 0, so scatter spreads the next job
    sim = run([blocker, job("bert", 1, 2, 100, slowdown=3.0)], cluster(2, 2), "fifo", placement="scatter")
    assert sim.jobs[1].max_nodes == 2
    assert ends(sim)["bert"] == approx(1 + 300)
    assert sim.jobs[1].comm_lost_gpu_s == approx(2 * 300 * (2 / 3))


def test_an_insensitive_job_does_not_care_where_it_runs():
    blocker = job("blocker", 0, 1, 1000)
    sim = run([blocker, job("resnet", 1, 2, 100, slowdown=1.0)], cluster(2, 2), "fifo", placement="scatter")
    assert ends(sim)["resnet"] == approx(101)


def test_a_job_bigger_than_a_node_is_not_slowed_on_its_consolidated_placement():
    """8 GPUs on two 4-GPU nodes is the best possible placement: the trace runtime already includes it."""
    sim = run([job("lm", 0, 8, 100, slowdown=4.0)], cluster(2, 4, network="congested"), "fifo")
    assert ends(sim)["lm"] == approx(100)


def test_two_spread_jobs_sharing_nics_slow_each_other_only_under_contention():
    """Two nodes of 2 GPUs; x and y each take one GPU on both nodes. Each loads each NIC with
    b = c/(1+c) = 2/3, so a NIC carries 4/3: communication stretches by 4/3 and the speed is
    1 / (1 + 2 * 4/3) = 3/11 instead of 1/3 on an ideal network."""
    jobs = [job("x", 0, 2, 110, slowdown=3.0), job("y", 0, 2, 110, slowdown=3.0)]
    ideal = run(jobs, cluster(2, 2, network="ideal"), scheduler=spreading_fifo())
    congested = run(jobs, cluster(2, 2, network="congested"), scheduler=spreading_fifo())
    assert all(js.max_nodes == 2 for js in congested.jobs)
    assert ends(ideal) == {"x": approx(330), "y": approx(330)}
    assert ends(congested) == {"x": approx(110 * 11 / 3), "y": approx(110 * 11 / 3)}
    assert congested.jobs[0].comm_lost_gpu_s == approx(2 * 110 * 11 / 3 * (1 - 3 / 11))


def test_speeds_recover_when_a_congesting_job_leaves():
    """y (30 s of work) leaves at 110 s (speed 3/11); x has done 30 s of work by then and runs its
    remaining 270 s at the uncontended spread speed 1/3: it ends at 110 + 810."""
    jobs = [job("x", 0, 2, 300, slowdown=3.0), job("y", 0, 2, 30, slowdown=3.0)]
    sim = run(jobs, cluster(2, 2, network="congested"), scheduler=spreading_fifo())
    assert ends(sim) == {"x": approx(110 + 270 * 3), "y": approx(110)}


def test_rack_uplinks_congest_only_jobs_that_cross_racks():
    """Four 1-GPU nodes, two per rack, uplinks 1:2 oversubscribed (capacity 1 NIC). A 4-GPU job spans
    both racks: cross-rack penalty 1.25 -> c = 2.5, b = 2.5/3.5; each uplink carries 2 nodes x b = 1.43
    of capacity 1, so the speed is 1 / (1 + 2.5 * 1.4286) = 0.2188 (the NICs carry only b < 1)."""
    spec = cluster(4, 1, per_rack=2, network="congested:2")
    sim = run([job("lm", 0, 4, 100, slowdown=3.0)], spec, "fifo", placement="scatter")
    c, b = 2.5, 2.5 / 3.5
    # 4 GPUs on 1-GPU nodes is the consolidated size (4 nodes, in one rack it cannot be): baseline c = 2
    expected_speed = (1 + 2.0) / (1 + c * (2 * b / 1.0))
    assert ends(sim)["lm"] == approx(100 / expected_speed)
