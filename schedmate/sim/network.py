"""How placement and congestion set a job's speed.

Model (documented in docs of `replay --help` and BENCHMARKS.md):

* A job on one node communicates over NVLink/PCIe only: speed 1.
* Spread over nodes, an iteration takes `1 + c` times as long, where `c = spread_slowdown - 1` is the
  job's communication time relative to compute at full NIC bandwidth (published slowdown tables).
  Spanning racks multiplies `c` by `cross_rack_penalty` (spine hops).
* A trace's runtime is the runtime on a consolidated placement, so speeds are relative to that:
  a job too big for one node already pays `c` on its fewest-nodes, one-rack placement, and only
  what goes beyond that counts as slowdown (and as communication overhead in the metrics).
* With contention, each spread job loads the NIC of every node it uses with `b = c / (1 + c)` (the
  share of its time it spends sending at full rate) and, if it spans racks, the uplink of each rack
  it touches with `b` times its node count in that rack. A link whose load exceeds its capacity
  (NIC: 1; rack uplink: nodes in the rack / oversubscription) stretches the communication of every
  job on it by load / capacity; a job is as slow as its most congested link.

Speeds are recomputed for exactly the jobs that share a link with a job that starts or stops.
"""

from __future__ import annotations

from schedmate.records import NetworkSpec
from schedmate.sim.state import ClusterState, JobState


class NetworkModel:
    def __init__(self, cluster: ClusterState, spec: NetworkSpec) -> None:
        self.cluster = cluster
        self.spec = spec
        n_nodes = len(cluster.capacity)
        self._uplink_base = n_nodes
        racks = max(cluster.rack_of) + 1 if cluster.rack_of else 0
        self.capacity = [1.0] * n_nodes + [
            max(1e-9, len(cluster.nodes_in_rack.get(r, ())) / spec.uplink_oversubscription) for r in range(racks)
        ]
        self.load = [0.0] * len(self.capacity)
        self.jobs_on: list[set[JobState]] = [set() for _ in self.capacity]
        self._links: dict[int, list[tuple[int, float]]] = {}  # job idx -> [(link, demand)]
        self._multi_node: dict[int, bool] = {}  # GPUs -> does the consolidated placement span nodes?

    def baseline_comm(self, js: JobState) -> float:
        """Communication factor already included in the trace runtime (consolidated placement)."""
        g = js.num_gpus
        multi = self._multi_node.get(g)
        if multi is None:
            multi = self._multi_node[g] = self.cluster.packed_shape(g)[0] > 1  # the fewest nodes that could hold g
        return js.spread_slowdown - 1.0 if multi else 0.0

    def comm_factor(self, js: JobState) -> float:
        """Communication time relative to compute for this job on its current placement, uncontended."""
        if js.nodes_spanned <= 1:
            return 0.0
        c = js.spread_slowdown - 1.0
        if js.racks_spanned > 1:
            c *= self.spec.cross_rack_penalty
        return c

    def isolated_speed(self, js: JobState) -> float:
        return min(1.0, (1.0 + self.baseline_comm(js)) / (1.0 + self.comm_factor(js)))

    def attach(self, js: JobState) -> set[JobState]:
        """Register a started job's traffic; returns the jobs whose speed must be recomputed."""
        if js.nodes_spanned <= 1 or not self.spec.contention:
            return {js}
        c = self.comm_factor(js)
        if c <= 0:
            return {js}
        b = c / (1.0 + c)
        links: list[tuple[int, float]] = [(node, b) for node, _ in js.placement]
        if js.racks_spanned > 1:
            per_rack: dict[int, int] = {}
            for node, _ in js.placement:
                r = self.cluster.rack_of[node]
                per_rack[r] = per_rack.get(r, 0) + 1
            links += [(self._uplink_base + r, b * k) for r, k in per_rack.items()]
        self._links[js.idx] = links
        affected: set[JobState] = {js}
        for link, demand in links:
            self.load[link] += demand
            self.jobs_on[link].add(js)
            affected |= self.jobs_on[link]
        return affected

    def detach(self, js: JobState) -> set[JobState]:
        """Remove a stopped job's traffic; returns the other jobs whose speed must be recomputed."""
        links = self._links.pop(js.idx, None)
        if not links:
            return set()
        affected: set[JobState] = set()
        for link, demand in links:
            self.load[link] -= demand
            if self.load[link] < 1e-12:
                self.load[link] = 0.0
            self.jobs_on[link].discard(js)
            affected |= self.jobs_on[link]
        return affected

    def speed(self, js: JobState) -> float:
        c = self.comm_factor(js)
        if c <= 0:
            return 1.0
        congestion = 1.0
        for link, _ in self._links.get(js.idx, ()):
            ratio = self.load[link] / self.capacity[link]
            if ratio > congestion:  # noqa: PLR1730 - hot path, faster than max()
                congestion = ratio
        return min(1.0, (1.0 + self.baseline_comm(js)) / (1.0 + c * congestion))
