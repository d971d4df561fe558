"""The delay auto-tuner: never worse than the fixed default on its own window; deterministic replays."""

from __future__ import annotations

import random

import pytest

from schedmate.annotators import ANNOTATORS
from schedmate.policies import build_scheduler
from schedmate.policies.delay import DelayConfig, DelayTimers
from schedmate.policies.tuner import TunerConfig, evaluate, snapshot
from schedmate.records import ClusterSpec, Job, NetworkSpec
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.workloads import CATALOGUE

SLOWDOWNS = sorted({w.spread_slowdown for w in CATALOGUE.values()})


def workload(n: int, seed: int) -> list[Job]:
    """Literal-ish jobs: 1-8 GPUs, catalogue slowdowns, minutes to hours, arrivals every ~2 min."""
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(n):
        t += rng.expovariate(1 / 120.0)
        jobs.append(Job(id=f"j{i:03d}", user="u", submit_time=round(t, 1), num_gpus=rng.choice([1, 1, 2, 4, 4, 8]),
                        duration_s=float(rng.choice([300, 900, 1800, 3600, 7200])),
                        spread_slowdown=rng.choice(SLOWDOWNS)))
    return jobs


def cluster() -> ClusterSpec:
    return ClusterSpec.uniform(8, 4, 4, network=NetworkSpec.parse("congested:4"))


def simulator(policy: str, annotator: str, seed: int = 0, tuner: TunerConfig | None = None) -> Simulator:
    sched = build_scheduler(policy, config=DelayConfig(node_factor=1.0, rack_factor=2.0), tuner=tuner)
    return Simulator(workload(160, seed), cluster(), sched, ANNOTATORS.create(annotator), ReplayConfig(seed=seed))


@pytest.mark.parametrize("objective", ["avg_jct", "makespan"])
@pytest.mark.parametrize("annotator", ["oracle", "none"])
@pytest.mark.parametrize("at", [4 * 3600.0, 6 * 3600.0])
def test_the_tuners_choice_is_never_worse_on_its_own_objective_than_the_fixed_default_on_its_window(
    objective, annotator, at
):
    cfg = TunerConfig(objective=objective, horizon_s=6 * 3600.0)
    sim = simulator("delay-tuned", annotator, tuner=cfg)
    sim.run(until=at)  # stop mid-replay, with jobs waiting
    assert sim.waiting, "the window must have waiting jobs to tune on"
    tuner = sim.scheduler.on_tick
    chosen = tuner.tune(sim, sim.now)
    timers = sim.scheduler.placement.timers
    assert timers.per_class == chosen
    snap = snapshot(sim, sim.now, timers, cfg)
    default_obj, _ = evaluate(sim, snap, DelayTimers(timers.config), cfg)
    chosen_obj, _ = evaluate(sim, snap, timers, cfg)
    assert chosen_obj <= default_obj
    assert tuner.last["objective"] == chosen_obj and tuner.last["default_objective"] == default_obj
    logged = [e for e in sim.log if e.get("event") == "delay_tuner" and e["time"] == sim.now]
    assert {e["class"] for e in logged} == set(chosen)


def test_the_tuner_logs_its_choices_over_time_during_a_replay():
    sim = simulator("delay-tuned", "oracle", tuner=TunerConfig(period_s=1800.0, horizon_s=4 * 3600.0)).run()
    logged = [e for e in sim.log if e.get("event") == "delay_tuner"]
    assert logged
    assert all({"time", "class", "W_node", "W_rack", "objective"} <= set(e) for e in logged)
    assert all(e["objective"] <= e["default_objective"] for e in logged)
    assert sorted(e["time"] for e in logged) == [e["time"] for e in logged]


@pytest.mark.parametrize("policy", ["delay", "delay-tuned"])
@pytest.mark.parametrize("annotator", ["oracle", "none"])
def test_a_replay_with_the_same_seed_gives_the_same_result(policy, annotator):
    tuner = TunerConfig(period_s=1800.0, horizon_s=4 * 3600.0)
    runs = [simulator(policy, annotator, seed=3, tuner=tuner).run() for _ in range(2)]
    a, b = ([(js.job.id, js.first_start, js.end_time, js.preemptions, js.placement, js.max_nodes) for js in s.jobs]
            for s in runs)
    assert a == b
    assert runs[0].log == runs[1].log
    assert all(js.end_time is not None for js in runs[0].jobs)
