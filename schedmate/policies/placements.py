"""Placements: consolidate / consolidate-rack (fewest nodes, else wait), scatter (first fit anywhere), random.

Also the locality helpers the delay scheduler builds on: the best placement at each level
L0 (fewest nodes), L1 (inside one rack), L2 (anywhere).
"""

from __future__ import annotations

import random

from schedmate.policies.base import PLACEMENTS, Decision, PlacementPolicy
from schedmate.sim.state import ClusterState, JobState, Placement


def min_nodes_needed(gpus: int, cluster: ClusterState) -> int:
    """The fewest nodes that could ever hold `gpus` GPUs on this cluster (empty cluster)."""
    return cluster.packed_shape(gpus)[0]


def is_consolidated(placement: Placement, gpus: int, cluster: ClusterState) -> bool:
    """Does `placement` look like L0: the fewest nodes, inside one rack when some rack could hold it so?"""
    target, in_rack = cluster.packed_shape(gpus)
    if len(placement) > target:
        return False
    return not in_rack or len({cluster.rack_of[n] for n, _ in placement}) <= 1


def _greedy(gpus: int, nodes: list[int], free: list[int]) -> Placement | None:
    """Fill the given nodes in the given order; None if they hold too few GPUs."""
    need = gpus
    out: list[tuple[int, int]] = []
    for n in nodes:
        f = free[n]
        if f <= 0:
            continue
        take = f if f < need else need  # noqa: FURB136 - hot path, faster than min()
        out.append((n, take))
        need -= take
        if need == 0:
            return tuple(sorted(out))
    return None


def best_fit_single_node(gpus: int, free: list[int], nodes: list[int] | range | None = None) -> Placement | None:
    """The node with the fewest free GPUs that still holds the job (lowest index on ties)."""
    if nodes is None:  # the first node holding the smallest count that fits: list scans in C
        top = max(free, default=0)
        for k in range(max(gpus, 0), top + 1):
            if k in free:
                return ((free.index(k), gpus),)
        return None
    best, best_free = -1, 1 << 30
    for n in nodes:
        f = free[n]
        if gpus <= f < best_free:
            best, best_free = n, f
            if f == gpus:
                break
    return ((best, gpus),) if best >= 0 else None


def fewest_nodes(gpus: int, cluster: ClusterState, free: list[int], nodes: list[int] | None = None) -> Placement | None:
    """A placement on the fewest nodes possible now, among `nodes` (default all)."""
    if gpus <= 0:
        return ()
    single = best_fit_single_node(gpus, free, nodes)
    if single is not None:
        return single
    pool = nodes if nodes is not None else range(len(free))
    # most-free first is optimal for the node count; ties by index keep it deterministic
    ordered = sorted((n for n in pool if free[n] > 0), key=lambda n: (-free[n], n))
    return _greedy(gpus, ordered, free)


def consolidated(gpus: int, cluster: ClusterState, free: list[int], strict_rack: bool = True) -> Placement | None:
    """L0: as few nodes as the job could ever use, inside one rack when one rack could ever hold it on
    that many nodes; None if not possible now. `strict_rack=False` (the classic packing of consolidation
    schedulers) still prefers one rack but takes the fewest nodes across racks when no rack has them,
    so its multi-node jobs may cross the oversubscribed uplinks."""
    if gpus <= 0:
        return ()
    live = free is cluster.free
    if gpus <= cluster.max_node_gpus:
        if live:
            # best_fit_single_node's answer read from the counts of nodes by free GPUs: the smallest free
            # count that holds the job, on the first node that has it (no scan of every node per count)
            counts = cluster.nodes_with_free
            for k in range(gpus, len(counts)):
                if counts[k]:
                    return ((free.index(k), gpus),)
            return None
        return best_fit_single_node(gpus, free)
    target, in_rack = cluster.packed_shape(gpus)
    top = cluster.top_free_sum(target) if live else sum(sorted(free, reverse=True)[:target])
    if top < gpus:
        return None
    racks = cluster.nodes_in_rack
    for rack in sorted(racks):
        nodes = racks[rack]
        if sum([free[n] for n in nodes]) < gpus:  # fewest_nodes finds nothing in a rack with fewer free GPUs
            continue
        p = fewest_nodes(gpus, cluster, free, nodes)
        if p is not None and len(p) <= target:
            return p
    if in_rack and strict_rack:
        return None
    p = fewest_nodes(gpus, cluster, free)
    return p if p is not None and len(p) <= target else None


def within_one_rack(gpus: int, cluster: ClusterState, free: list[int]) -> Placement | None:
    """L1: all GPUs inside one rack, on as few nodes as that rack allows; the tightest rack wins."""
    best: Placement | None = None
    best_key = (1 << 30, 1 << 30)
    for rack in sorted(cluster.nodes_in_rack):
        nodes = cluster.nodes_in_rack[rack]
        rack_free = sum(free[n] for n in nodes)
        if rack_free < gpus:
            continue
        p = fewest_nodes(gpus, cluster, free, nodes)
        if p is not None and (len(p), rack_free) < best_key:
            best, best_key = p, (len(p), rack_free)
    return best


def anywhere(gpus: int, cluster: ClusterState, free: list[int]) -> Placement | None:
    """L2: fewest nodes over the whole cluster."""
    return fewest_nodes(gpus, cluster, free)


@PLACEMENTS.register("consolidate")
class Consolidate(PlacementPolicy):
    """Fewest nodes (one node when the job fits in one; whole nodes of one rack when a rack has them,
    else the fewest nodes across racks); otherwise wait. The classic consolidation baseline."""

    name = "consolidate"
    strict_rack = False
    stateless = True  # `consolidated` reads only the GPU count and the free GPUs

    def place(self, js: JobState, cluster: ClusterState, now: float, free: list[int] | None = None) -> Decision:
        return consolidated(js.num_gpus, cluster, cluster.free if free is None else free, self.strict_rack)


@PLACEMENTS.register("consolidate-rack")
class ConsolidateInRack(Consolidate):
    """Like `consolidate`, but a multi-node job that one rack could hold waits for one rack (never
    crosses the uplinks): exactly the delay scheduler's L0, with no timer to relax it."""

    name = "consolidate-rack"
    strict_rack = True


@PLACEMENTS.register("scatter")
class Scatter(PlacementPolicy):
    """First fit in node order, spreading over as many nodes as it takes; never waits for locality."""

    name = "scatter"
    stateless = True  # first fit reads only the GPU count and the free GPUs

    def place(self, js: JobState, cluster: ClusterState, now: float, free: list[int] | None = None) -> Decision:
        free = cluster.free if free is None else free
        return _greedy(js.num_gpus, list(range(len(free))), free) if js.num_gpus > 0 else ()


@PLACEMENTS.register("random")
class RandomPlacement(PlacementPolicy):
    """Free GPUs drawn at random (seeded); a baseline with no locality at all."""

    name = "random"

    def __init__(self) -> None:
        self._rng = random.Random(0)

    def reset(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def place(self, js: JobState, cluster: ClusterState, now: float, free: list[int] | None = None) -> Decision:
        free = cluster.free if free is None else free
        if js.num_gpus <= 0:
            return ()
        if sum(free) < js.num_gpus:
            return None
        slots = [n for n, f in enumerate(free) for _ in range(f)]
        chosen = self._rng.sample(slots, js.num_gpus)
        counts: dict[int, int] = {}
        for n in chosen:
            counts[n] = counts.get(n, 0) + 1
        return tuple(sorted(counts.items()))
