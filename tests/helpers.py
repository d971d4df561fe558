"""Small builders for literal test cases."""

from __future__ import annotations

from schedmate.annotators import ANNOTATORS
from schedmate.policies import ORDERS, build_scheduler
from schedmate.policies.base import PlacementPolicy, Scheduler
from schedmate.records import ClusterSpec, Job, NetworkSpec, Outcome
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.sim.state import Status


def job(id: str, t: float, gpus: int, dur: float, slowdown: float = 1.0, **kw) -> Job:
    return Job(id=id, user=kw.pop("user", "u"), submit_time=t, num_gpus=gpus, duration_s=dur,
               spread_slowdown=slowdown, outcome=kw.pop("outcome", Outcome.completed), **kw)


def cluster(nodes: int, gpus: int, per_rack: int = 16, network: str = "ideal") -> ClusterSpec:
    return ClusterSpec.uniform(nodes, gpus, per_rack, network=NetworkSpec.parse(network))


def run(jobs, spec, policy="fifo", annotator="none", placement=None, scheduler=None, **cfg) -> Simulator:
    cfg.setdefault("audit", True)
    sched = scheduler or build_scheduler(policy, placement)
    sim = Simulator(jobs, spec, sched, ANNOTATORS.create(annotator), ReplayConfig(**cfg))
    return sim.run()


class OneGpuPerNode(PlacementPolicy):
    """Test placement: one GPU on each of the first nodes with a free GPU (forces spreading)."""

    name = "one-per-node"

    def place(self, js, cluster, now, free=None):
        free = cluster.free if free is None else free
        nodes = [n for n, f in enumerate(free) if f > 0][: js.num_gpus]
        return tuple((n, 1) for n in nodes) if len(nodes) == js.num_gpus else None


def spreading_fifo() -> Scheduler:
    return Scheduler(order=ORDERS.create("fifo"), placement=OneGpuPerNode())


def ends(sim: Simulator) -> dict[str, float]:
    return {js.job.id: js.end_time for js in sim.jobs}


def starts(sim: Simulator) -> dict[str, float]:
    return {js.job.id: js.first_start for js in sim.jobs}


def assert_all_done(sim: Simulator) -> None:
    assert all(js.status is Status.done for js in sim.jobs)
