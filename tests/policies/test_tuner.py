"""The delay auto-tuner: never worse than the fixed default on its own window; deterministic replays;
its cost controls (memo, back-off, event budget)."""

from __future__ import annotations

import random

import pytest

from schedmate.annotators import ANNOTATORS
from schedmate.policies import build_scheduler
from schedmate.policies.delay import DelayConfig, DelayTimers
from schedmate.policies.tuner import DelayTuner, TunerConfig, evaluate, snapshot
from schedmate.policies.tuner.config import GUARD
from schedmate.policies.tuner.forward import default_knobs
from schedmate.records import ClusterSpec, Job, NetworkSpec
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.workloads import CATALOGUE

SLOWDOWNS = sorted({w.spread_slowdown for w in CATALOGUE.values()})


def workload(n: int, seed: int, gap_s: float = 120.0) -> list[Job]:
    """Literal-ish jobs: 1-8 GPUs, catalogue slowdowns, minutes to hours, arrivals every ~`gap_s`
    (2 min: overloaded, jobs mostly wait for GPUs; 5 min: jobs often find GPUs but no free node, so
    the delay timers hold them)."""
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(n):
        t += rng.expovariate(1 / gap_s)
        jobs.append(Job(id=f"j{i:03d}", user="u", submit_time=round(t, 1), num_gpus=rng.choice([1, 1, 2, 4, 4, 8]),
                        duration_s=float(rng.choice([300, 900, 1800, 3600, 7200])),
                        spread_slowdown=rng.choice(SLOWDOWNS)))
    return jobs


def cluster() -> ClusterSpec:
    return ClusterSpec.uniform(8, 4, 4, network=NetworkSpec.parse("congested:4"))


def simulator(policy: str, annotator: str, seed: int = 0, tuner: TunerConfig | None = None,
              gap_s: float = 120.0) -> Simulator:
    sched = build_scheduler(policy, config=DelayConfig(node_factor=1.0, rack_factor=2.0), tuner=tuner)
    return Simulator(workload(160, seed, gap_s), cluster(), sched, ANNOTATORS.create(annotator),
                     ReplayConfig(seed=seed))


@pytest.mark.parametrize("search", ["local", "grid"])
@pytest.mark.parametrize("objective", ["avg_jct", "makespan", "p99_jct", "0.5*avg_jct+0.5*p99_jct"])
@pytest.mark.parametrize("annotator", ["oracle", "none"])
@pytest.mark.parametrize("at", [4 * 3600.0, 6 * 3600.0])
def test_the_tuners_choice_is_never_worse_on_its_own_objective_than_the_fixed_default_on_its_window(
    search, objective, annotator, at
):
    cfg = TunerConfig(objective=objective, horizon_s=6 * 3600.0, search=search, event_budget=None,
                      tune_unknown=True)
    sim = simulator("delay-tuned", annotator, tuner=cfg)
    sim.run(until=at)  # stop mid-replay, with jobs waiting
    assert sim.waiting, "the window must have waiting jobs to tune on"
    tuner = sim.scheduler.on_tick
    chosen = tuner.tune(sim, sim.now)
    timers = sim.scheduler.placement.timers
    assert timers.per_class == chosen
    snap = snapshot(sim, sim.now, timers, cfg)
    default_obj, _ = evaluate(sim, snap, default_knobs(timers), cfg)
    chosen_obj, _ = evaluate(sim, snap, timers, cfg)
    assert chosen_obj <= default_obj
    assert tuner.last["objective"] == chosen_obj and tuner.last["default_objective"] == default_obj
    logged = [e for e in sim.log if e.get("event") == "delay_tuner" and e["time"] == sim.now]
    assert {e["class"] for e in logged} - {GUARD} == set(chosen)


def test_the_tuner_logs_its_choices_over_time_during_a_replay():
    cfg = TunerConfig(period_s=1800.0, horizon_s=4 * 3600.0, event_budget=None)
    sim = simulator("delay-tuned", "oracle", tuner=cfg, gap_s=300.0).run()
    logged = [e for e in sim.log if e.get("event") == "delay_tuner"]
    assert logged
    assert all({"time", "class", "objective"} <= set(e) for e in logged)
    assert all({"W_node", "W_rack"} <= set(e) if e["class"] != GUARD else "guard_factor" in e for e in logged)
    assert all(e["objective"] <= e["default_objective"] for e in logged)
    assert sorted(e["time"] for e in logged) == [e["time"] for e in logged]


@pytest.mark.parametrize("budget", [None, 2.0])
@pytest.mark.parametrize("policy", ["delay", "delay-tuned"])
@pytest.mark.parametrize("annotator", ["oracle", "none"])
def test_a_replay_with_the_same_seed_gives_the_same_result(policy, annotator, budget):
    tuner = TunerConfig(period_s=1800.0, horizon_s=4 * 3600.0, event_budget=budget)
    runs = [simulator(policy, annotator, seed=3, tuner=tuner).run() for _ in range(2)]
    a, b = ([(js.job.id, js.first_start, js.end_time, js.preemptions, js.placement, js.max_nodes) for js in s.jobs]
            for s in runs)
    assert a == b
    assert runs[0].log == runs[1].log
    assert all(js.end_time is not None for js in runs[0].jobs)


def paused(annotator: str = "oracle", at: float = 6 * 3600.0, **cfg: object) -> tuple[Simulator, DelayTuner]:
    """A tuned replay stopped mid-way with jobs waiting, and its tuner."""
    sim = simulator("delay-tuned", annotator, tuner=TunerConfig(horizon_s=6 * 3600.0, **cfg), gap_s=300.0)
    sim.run(until=at)
    assert sim.waiting
    return sim, sim.scheduler.on_tick


def test_changing_the_factors_of_a_class_whose_timers_the_forward_run_never_read_leaves_its_objective():
    sim, tuner = paused(event_budget=None)
    cfg = tuner.config
    snap = snapshot(sim, sim.now, tuner.timers, cfg)
    base = tuner.timers.copy()
    base.per_class = {}
    from schedmate.policies.tuner.forward import _Forward

    metrics, _, read = _Forward(sim, snap, cfg).run(base)
    unread = [c for c in ("unknown", "mid", "high") if c not in read]
    assert unread and read, "the window must read some classes' timers and not others'"
    for c in unread:
        other = base.copy()
        other.per_class[c] = (0.0, 0.0)
        assert evaluate(sim, snap, other, cfg)[0] == metrics[cfg.objective]


def test_the_local_search_needs_fewer_forward_runs_than_the_grid_and_both_beat_or_match_the_default():
    runs = {}
    for search in ("local", "grid"):
        sim, tuner = paused(search=search, event_budget=None)
        tuner.tune(sim, sim.now)
        runs[search] = tuner.forward_runs
        assert tuner.last["objective"] <= tuner.last["default_objective"]
    assert 2 <= runs["local"] < runs["grid"]


def fresh(sim: Simulator, **cfg: object) -> DelayTuner:
    """A new tuner (no history) on the replay's own timers."""
    return DelayTuner(sim.scheduler.placement.timers, TunerConfig(horizon_s=6 * 3600.0, **cfg))


def test_after_tunes_that_keep_their_choice_the_tuner_waits_twice_as_many_periods_up_to_the_cap():
    sim, _ = paused()
    tuner = fresh(sim, event_budget=None, max_backoff=4)
    skips, choices = [], []
    for _ in range(8):  # the same window again and again: the search settles and then keeps its choice
        tuner.tune(sim, sim.now)
        skips.append(tuner._skip)
        choices.append(tuner.choice)
    expected, streak, prev = [], 0, {}
    for choice in choices:
        kept = choice == {c: prev.get(c, 1.0) for c in choice}
        streak = streak + 1 if kept else 0
        expected.append(min(2**streak, 4) - 1)
        prev = choice
    assert skips == expected
    assert skips[-3:] == [3, 3, 3] and 1 in skips  # it settled, then waited 2, 4, 4, ... periods
    tuned = tuner.tuned
    for _ in range(3):  # the skipped ticks do not tune
        tuner(sim, sim.now)
    assert tuner.tuned == tuned and tuner._skip == 0


def test_a_tick_with_the_same_held_jobs_as_the_last_tune_does_not_tune_again():
    sim, _ = paused()
    tuner = fresh(sim, event_budget=None, max_backoff=1)
    tuner(sim, sim.now)
    assert tuner.tuned == 1
    tuner(sim, sim.now)
    assert tuner.tuned == 1


@pytest.mark.parametrize("budget", [0.0, 0.5, 4.0])
def test_forward_runs_stay_within_the_event_budget_up_to_one_run_and_a_zero_budget_never_tunes(budget):
    cfg = TunerConfig(period_s=1800.0, horizon_s=4 * 3600.0, event_budget=budget)
    sim = simulator("delay-tuned", "oracle", tuner=cfg, gap_s=300.0).run()
    tuner = sim.scheduler.on_tick
    unlimited = simulator("delay-tuned", "oracle", gap_s=300.0,
                          tuner=TunerConfig(period_s=1800.0, horizon_s=4 * 3600.0, event_budget=None)).run()
    assert unlimited.scheduler.on_tick.forward_runs > 0, "the replay must give the tuner something to tune"
    biggest_run = unlimited.scheduler.on_tick.forward_events  # a loose bound on one run's events
    assert tuner.forward_events <= budget * sim.events + biggest_run
    if budget == 0.0:
        assert tuner.forward_runs == 0 and not [e for e in sim.log if e.get("event") == "delay_tuner"]
    assert tuner.forward_events <= unlimited.scheduler.on_tick.forward_events


def test_without_known_sensitivities_the_tuner_keeps_the_fixed_timers_unless_told_to_tune_them():
    # annotator `none`: every job is class `unknown`; its forward runs would only simulate a guess.
    for tune_unknown, expect_tunes in ((False, False), (True, True)):
        cfg = TunerConfig(period_s=1800.0, horizon_s=4 * 3600.0, event_budget=None, tune_unknown=tune_unknown,
                          tune_guard=False)
        sim = simulator("delay-tuned", "none", tuner=cfg, gap_s=300.0).run()
        tuner = sim.scheduler.on_tick
        assert (tuner.forward_runs > 0) is expect_tunes
        assert bool([e for e in sim.log if e.get("event") == "delay_tuner"]) is expect_tunes
        if not expect_tunes:
            assert sim.scheduler.placement.timers.per_class == {}


@pytest.mark.parametrize("annotator", ["oracle", "none"])
def test_a_tuner_that_changes_nothing_leaves_the_replay_exactly_as_the_fixed_timers_make_it(annotator):
    # A zero budget never tunes: its ticks must not add scheduling passes that move any decision.
    fixed = simulator("delay", annotator, gap_s=300.0).run()
    idle = simulator("delay-tuned", annotator, gap_s=300.0,
                     tuner=TunerConfig(period_s=1800.0, event_budget=0.0)).run()
    assert idle.scheduler.on_tick.ticks > 0
    assert [(js.first_start, js.end_time, js.placement) for js in idle.jobs] == \
        [(js.first_start, js.end_time, js.placement) for js in fixed.jobs]
    assert idle.passes == fixed.passes


@pytest.mark.parametrize("text, terms", [
    ("avg_jct", ((1.0, "avg_jct"),)),
    ("p99_jct", ((1.0, "p99_jct"),)),
    ("0.7*avg_jct + 0.3*p99_jct", ((0.7, "avg_jct"), (0.3, "p99_jct"))),
    ("2*makespan+avg_jct", ((2.0, "makespan"), (1.0, "avg_jct"))),
])
def test_the_objective_is_one_metric_or_a_weighted_mix(text, terms):
    assert TunerConfig(objective=text).terms == terms


@pytest.mark.parametrize("text, named", [("mean", "'mean'"), ("x*avg_jct", "'x'"), ("0*p99_jct", "> 0"),
                                         ("avg_jct+avg_jct", "twice")])
def test_a_bad_objective_is_refused_naming_what_is_wrong(text, named):
    with pytest.raises(ValueError, match=named):
        TunerConfig(objective=text)


def test_a_mixed_objective_weighs_each_metrics_change_against_the_defaults():
    from schedmate.policies.tuner.config import objective_value

    terms = TunerConfig(objective="0.5*avg_jct+0.5*p99_jct").terms
    default = {"avg_jct": 100.0, "p99_jct": 1000.0, "makespan": 5000.0}
    assert objective_value(terms, default, default) == pytest.approx(1.0)
    # -10 % mean for +5 % tail is a gain, -10 % mean for +20 % tail a loss, whatever the units
    assert objective_value(terms, {**default, "avg_jct": 90.0, "p99_jct": 1050.0}, default) < 1.0
    assert objective_value(terms, {**default, "avg_jct": 90.0, "p99_jct": 1200.0}, default) > 1.0


def test_the_guards_factor_is_a_knob_when_jobs_wait_and_its_choice_is_logged():
    sim, tuner = paused(event_budget=None, objective="p99_jct", search="grid", tune_guard=True)
    snap = snapshot(sim, sim.now, tuner.timers, tuner.config)
    assert snap.classes[-1] == GUARD
    tuner.tune(sim, sim.now, snap)
    logged = [e for e in sim.log if e.get("event") == "delay_tuner" and e["class"] == GUARD]
    assert logged and logged[-1]["guard_factor"] == pytest.approx(
        tuner.timers.config.guard_factor * tuner.choice[GUARD])
    assert tuner.last["objective"] <= tuner.last["default_objective"]
    # with the age rule there is no factor to tune
    aged = DelayTuner(DelayTimers(DelayConfig(guard="age")), tuner.config)
    assert GUARD not in snapshot(sim, sim.now, aged.timers, tuner.config).classes


def test_the_tuners_options_reach_its_config_from_the_command_line():
    from schedmate.policies import policy_options

    got = policy_options("delay-tuned", ["tuner.objective=0.5*avg_jct+0.5*p99_jct", "tuner.event_budget=none",
                                         "tuner.tune_guard=false", "guard_factor=10"])
    assert got["tuner"].terms == ((0.5, "avg_jct"), (0.5, "p99_jct"))
    assert got["tuner"].event_budget is None and got["tuner"].tune_guard is False
    assert got["config"].guard_factor == 10.0
    with pytest.raises(ValueError, match="tuner.objective"):
        policy_options("delay", ["tuner.objective=p99_jct"])  # the fixed policy has no tuner
    with pytest.raises(ValueError, match="cannot be given"):
        policy_options("delay-tuned", ["tuner.multipliers=1"])
