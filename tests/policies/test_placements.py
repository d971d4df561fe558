"""Placement policies on literal free-GPU vectors."""

import pytest
from helpers import cluster, job

from schedmate.policies import PLACEMENTS
from schedmate.policies.placements import (
    anywhere,
    consolidated,
    is_consolidated,
    min_nodes_needed,
    within_one_rack,
)
from schedmate.records import Annotation
from schedmate.sim.state import ClusterState, JobState


def state(free: list[int], gpus_per_node: int = 8, per_rack: int = 2) -> ClusterState:
    cs = ClusterState(cluster(len(free), gpus_per_node, per_rack))
    cs.allocate(tuple((n, gpus_per_node - f) for n, f in enumerate(free) if f < gpus_per_node))
    return cs


def js(gpus: int) -> JobState:
    return JobState(job=job("j", 0, gpus, 10), idx=0, annotation=Annotation(job_id="j"))


@pytest.mark.parametrize(
    "name,free,gpus,expected",
    [
        ("consolidate picks the tightest node that fits", [8, 3, 5, 4], 4, ((3, 4),)),
        ("consolidate breaks ties by the lowest node index", [4, 4, 8, 8], 4, ((0, 4),)),
        ("consolidate waits rather than spread a job that fits on one node", [3, 3, 3, 3], 4, None),
        ("consolidate puts a two-node job on two whole nodes of one rack", [8, 4, 8, 8], 16, ((2, 8), (3, 8))),
        ("consolidate waits when no two whole nodes are free", [8, 7, 7, 7], 16, None),
        ("consolidate takes whole nodes of two racks when no rack has them free", [8, 0, 8, 0], 16,
         ((0, 8), (2, 8))),
        ("consolidate-rack waits rather than put a job that fits in a rack on whole nodes of two racks",
         [8, 0, 8, 0], 16, None),
        ("consolidate-rack puts a two-node job on two whole nodes of one rack", [8, 4, 8, 8], 16, ((2, 8), (3, 8))),
        ("scatter fills nodes first fit in index order", [1, 3, 8, 8], 6, ((0, 1), (1, 3), (2, 2))),
        ("scatter only fails when the whole cluster is short", [1, 1, 1, 1], 5, None),
    ],
)
def test_placement_table(name, free, gpus, expected):
    policy = PLACEMENTS.create(name.split()[0])
    cs = state(free)
    assert policy.place(js(gpus), cs, 0.0) == expected, name


def test_random_placement_uses_only_free_gpus_and_is_seeded():
    policy = PLACEMENTS.create("random")
    cs = state([2, 0, 5, 1])
    policy.reset(3)
    a = policy.place(js(6), cs, 0.0)
    policy.reset(3)
    assert policy.place(js(6), cs, 0.0) == a
    assert sum(g for _, g in a) == 6 and all(g <= cs.free[n] for n, g in a)


def test_locality_levels_differ_as_documented():
    """Node 0 has 2 free, rack 0 (nodes 0,1) has 2+3, rack 1 (nodes 2,3) has 4+4."""
    cs = state([2, 3, 4, 4])
    assert consolidated(6, cs, cs.free) is None  # no single node has 6
    assert within_one_rack(6, cs, cs.free) == ((2, 4), (3, 2))
    assert anywhere(5, cs, cs.free) == ((2, 4), (3, 1))
    assert within_one_rack(9, cs, cs.free) is None


def test_a_job_bigger_than_any_rack_is_consolidated_on_the_fewest_nodes_across_racks():
    cs = state([8, 8, 8, 0])  # racks of 2 nodes = 16 GPUs: 24 GPUs can never fit in one
    assert consolidated(24, cs, cs.free) == ((0, 8), (1, 8), (2, 8))
    assert is_consolidated(((0, 8), (1, 8), (2, 8)), 24, cs)


def test_a_fewest_node_placement_across_racks_is_not_consolidated_when_one_rack_could_hold_it():
    cs = state([8, 8, 8, 8])
    assert is_consolidated(((0, 8), (1, 8)), 16, cs)
    assert not is_consolidated(((1, 8), (2, 8)), 16, cs)
    assert not is_consolidated(((0, 4), (1, 4)), 8, cs)


def test_the_fewest_nodes_ever_needed_follows_node_sizes():
    cs = state([8, 8, 8, 8])
    assert [min_nodes_needed(g, cs) for g in (1, 8, 9, 16, 32)] == [1, 1, 2, 2, 4]


def test_an_unknown_placement_name_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown placement: 'packed'"):
        PLACEMENTS.create("packed")
