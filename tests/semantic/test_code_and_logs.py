"""Our readers on augmented material: the code analyzer on rendered workdirs, the log monitor on logs the
simulator wrote through `SemanticLogAnnotator` (real files in tmp_path)."""

from collections import Counter
from pathlib import Path

import pytest
from helpers import cluster, spreading_fifo

from schedmate.annotators.builtin import NoAnnotator
from schedmate.codeprof.analyzer import analyze_code
from schedmate.logmon import Monitor
from schedmate.policies import build_scheduler
from schedmate.records import FailureCategory, Job, Outcome
from schedmate.semantic import TEMPLATES, SemanticLogAnnotator, augment, load_plan
from schedmate.semantic.augment import materialize
from schedmate.semantic.catalogue import default_params
from schedmate.semantic.check import check_code, check_log
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.traces import load_trace


def _gpu_counts(t):
    counts = [g for g in (0, 1, 2, 4, 8, 16, 32, 64, 12, 11) if t.fits(g)]
    return counts[:2] + counts[-1:] if len(counts) > 2 else counts


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_code_analyzers_static_pass_reads_each_templates_gpus_and_steps(name, tmp_path):
    t = TEMPLATES[name]
    counts = _gpu_counts(t)
    assert counts, f"{name} fits no GPU count"
    for g in counts:
        p = default_params(t, g, 12345)
        wd = tmp_path / f"g{g}"
        for rel, text in t.render(p).items():
            (wd / rel).parent.mkdir(parents=True, exist_ok=True)
            (wd / rel).write_text(text)
        prof = analyze_code(wd, None, use_llm=False).to_contract()
        got = {k: prof.get(k) for k in t.expected(p)}
        assert got == t.expected(p), (name, g)


def test_the_code_analyzer_agrees_with_augmented_trace_jobs(tmp_path):
    jobs = load_trace("synth:philly:60:3").jobs
    out = augment(jobs, tmp_path, seed=5, write=False)
    for j in out:
        materialize(load_plan(j))  # lazy mode: write the workdir when it is needed
    results = [check_code(j) for j in out]
    bad = [(a.job_id, a.template, {k: a.fields[k] for k, ok in a.ok.items() if not ok}) for a in results if not a.all_ok]
    assert not bad


def _replay(jobs, spec, scheduler=None, interval=120.0, policy="fifo"):
    ann = SemanticLogAnnotator(NoAnnotator(), monitor_interval_s=interval)
    sim = Simulator(jobs, spec, scheduler or build_scheduler(policy), ann, ReplayConfig())
    return sim.run()


def test_the_log_monitor_reads_progress_and_failures_from_simulator_written_logs(tmp_path):
    jobs = load_trace("synth:philly:150:7", max_gpus=16, target_load=2.0, cluster_gpus=32).jobs
    out = augment(jobs, tmp_path, seed=2)
    sim = _replay(out, cluster(4, 8, network="congested"), policy="tiresias")
    tally, bad = Counter(), Counter()
    for js in sim.jobs:
        assert js.ended_by == "trace"
        a = check_log(js.job, mean_speed=js.job.duration_s / js.executed_s if js.executed_s else 1.0)
        for k, ok in a.ok.items():
            tally[k] += 1
            bad[k] += not ok
    assert sum(js.preemptions for js in sim.jobs) > 0  # restarts were logged too
    for k in ("category", "current_step", "total_steps", "iteration_time_s"):
        assert tally[k] >= 100, (k, tally)
        assert bad[k] <= 0.05 * tally[k], (k, bad[k], tally[k])


@pytest.mark.parametrize("category", ["oom", "nccl", "nan", "dataloader", "segfault", "node", "preempted",
                                      "user_code", "other", "hang"])
def test_each_failure_category_is_read_back_from_the_log(category, tmp_path):
    jobs = [Job(id=f"{category}-{i}", user="u", submit_time=i * 10, num_gpus=g, duration_s=4 * 3600,
                outcome=Outcome.failed, failure_category=FailureCategory(category))
            for i, g in enumerate((1, 2, 4, 8, 8))]
    if category == "hang":
        jobs = [j.model_copy(update={"hang_onset_s": 3600.0}) for j in jobs]
    out = augment(jobs, tmp_path, seed=1)
    sim = _replay(out, cluster(6, 8))
    for js in sim.jobs:
        mon = Monitor()
        mon.feed(Path(js.job.semantic.log_source).read_text())
        rep = mon.finish()
        assert rep.failure.category.value == category, (js.job.semantic.template, rep.failure)


def test_a_hung_jobs_log_stops_progressing_at_its_hang_onset_while_it_keeps_running(tmp_path):
    j = Job(id="h", submit_time=0, num_gpus=8, duration_s=6 * 3600, outcome=Outcome.failed,
            failure_category=FailureCategory.hang, hang_onset_s=2 * 3600, job_type="Pretrain", workload="gpt")
    (aj,) = augment([j], tmp_path, seed=0)
    sim = _replay([aj], cluster(1, 8))
    assert sim.jobs[0].end_time == pytest.approx(6 * 3600)
    plan = load_plan(aj)
    text = Path(aj.semantic.log_source).read_text()
    mon = Monitor()
    mon.feed(text)
    rep = mon.finish()
    assert rep.progress.current_step <= plan.step_at_work(2 * 3600)
    assert rep.progress.current_step >= plan.step_at_work(2 * 3600) - 2 * plan.params["log_every"]
    assert rep.failure.category is FailureCategory.hang
    assert "system-monitor gpu_util=0%" in text.splitlines()[-1]


def test_a_spread_jobs_log_shows_slower_iterations_than_the_same_job_packed(tmp_path):
    j = Job(id="s", submit_time=0, num_gpus=4, duration_s=3 * 3600, job_type="Pretrain", workload="gpt")
    (aj,) = augment([j], tmp_path, seed=3)
    times = {}
    for label, spec, sched in (("packed", cluster(1, 8, network="congested"), None), ("spread", cluster(4, 8, network="congested"), spreading_fifo())):
        sim = _replay([aj], spec, scheduler=sched)
        js = sim.jobs[0]
        mon = Monitor()
        mon.feed(Path(aj.semantic.log_source).read_text())  # each replay rewrites the log
        rep = mon.finish()
        times[label] = (rep.progress.iteration_time_s, js.executed_s, js.max_nodes)
    (it_p, run_p, nodes_p), (it_s, run_s, nodes_s) = times["packed"], times["spread"]
    assert (nodes_p, nodes_s) == (1, 4)
    assert run_s > 1.5 * run_p
    assert it_s / it_p == pytest.approx(run_s / run_p, rel=0.2)
    assert it_p == pytest.approx(load_plan(aj).iter_s, rel=0.2)


def test_a_job_shorter_than_one_monitoring_interval_still_gets_its_whole_log(tmp_path):
    j = Job(id="short", submit_time=0, num_gpus=1, duration_s=90, job_type="Debug")
    (aj,) = augment([j], tmp_path, seed=0)
    _replay([aj], cluster(1, 8), interval=600)
    text = Path(aj.semantic.log_source).read_text()
    plan = load_plan(aj)
    mon = Monitor()
    mon.feed(text)
    rep = mon.finish()
    assert rep.progress.current_step == plan.params["steps"] or plan.early_stop
    assert rep.failure.category is FailureCategory.none
