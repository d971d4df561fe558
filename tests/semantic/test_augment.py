"""Semantic trace augmentation: templates, determinism, documented mixes, resubmissions, bad input."""

import json
from collections import Counter
from pathlib import Path

import pytest

from schedmate.records import FailureCategory, Job, Outcome
from schedmate.semantic import FAILURE_MIX, TEMPLATES, augment, load_plan
from schedmate.semantic.augment import EARLY_STOP_SHARE, RESUBMIT_SHARE
from schedmate.semantic.catalogue import CATCH_ALL, KINDS
from schedmate.traces import load_trace
from schedmate.workloads import CATALOGUE, GAVEL_JOB_TYPES


def _rel(job: Job, root) -> tuple:
    s = job.semantic
    return (job.id, s.template, s.command, str(s.workdir).replace(str(root), "<root>"), job.workload,
            job.spread_slowdown, job.failure_category, job.hang_onset_s)


def test_augmentation_is_deterministic_for_a_seed(tmp_path):
    jobs = load_trace("synth:philly:300:2").jobs
    a = augment(jobs, tmp_path / "a", seed=11)
    b = augment(jobs, tmp_path / "b", seed=11)
    c = augment(jobs, tmp_path / "c", seed=12)
    assert [_rel(j, tmp_path / "a") for j in a] == [_rel(j, tmp_path / "b") for j in b]
    assert [_rel(j, tmp_path / "a") for j in a] != [_rel(j, tmp_path / "c") for j in c]
    pa = json.loads((tmp_path / "a" / "_plans" / f"{a[7].id}.json").read_text())
    pb = json.loads((tmp_path / "b" / "_plans" / f"{b[7].id}.json").read_text())
    strip = lambda d: {k: v for k, v in d.items() if k not in ("workdir", "log_path")}
    assert strip(pa) == strip(pb)
    for name in ("train.py", "command.txt"):
        fa, fb = tmp_path / "a" / a[7].id / name, tmp_path / "b" / b[7].id / name
        if fa.exists():
            assert fa.read_text() == fb.read_text()


def test_augmented_jobs_keep_their_trace_fields_and_order(tmp_path):
    jobs = load_trace("synth:helios:200:3").jobs
    out = augment(jobs, tmp_path, seed=1)
    assert [j.id for j in out] == [j.id for j in jobs]
    for before, after in zip(jobs, out):
        assert (after.submit_time, after.num_gpus, after.duration_s, after.outcome, after.user) == (
            before.submit_time, before.num_gpus, before.duration_s, before.outcome, before.user)
        assert after.semantic.log_source.endswith(".log")
        assert (tmp_path / after.id / "command.txt").read_text().strip() == after.semantic.command


def test_the_catalogue_has_at_least_thirty_templates_covering_every_workload_class_and_kind():
    assert len(TEMPLATES) >= 30
    assert {t.workload for t in TEMPLATES.values()} >= set(CATALOGUE)
    assert set().union(*(t.kinds for t in TEMPLATES.values())) == set(KINDS)
    assert len({t.style for t in TEMPLATES.values()}) >= 10
    assert [n for n, t in TEMPLATES.items() if t.fits(0)] == ["cpu_tabular_mlp"]


def test_templates_agree_with_gpu_counts_and_acme_job_types(tmp_path):
    jobs = load_trace("synth:acme:2000:5").jobs
    out = augment(jobs, tmp_path, seed=3, write=False)
    wanted = {"Pretrain": {"pretrain"}, "SFT": {"sft"}, "MLLM": {"mllm", "sft"}, "Eval": {"eval"},
              "Debug": {"debug"}, "Other": {"train", "sft", "pretrain"}}
    by_type = Counter()
    for j in out:
        t = TEMPLATES[j.semantic.template]
        assert t.fits(j.num_gpus), (j.id, j.num_gpus, t.name)
        if t.name != CATCH_ALL:
            assert t.kinds & wanted[j.job_type], (j.job_type, t.name)
            by_type[j.job_type] += 1
        if j.num_gpus:
            assert j.workload == (t.workload or j.workload)
            assert j.spread_slowdown == CATALOGUE[j.workload].spread_slowdown
        plan = load_plan(j)
        assert plan.expected["num_gpus"] == j.num_gpus
    assert set(by_type) == set(wanted)  # every type found a matching template at least once
    pre = [TEMPLATES[j.semantic.template] for j in out if j.job_type == "Pretrain"]
    assert all(t.workload == "gpt" for t in pre)


def test_gavel_job_types_map_to_templates_of_their_workload_class(tmp_path):
    jobs = [Job(id=f"g{i}-{k}", user=f"u{i}", submit_time=i, num_gpus=g, duration_s=3600, job_type=jt,
                workload=wl, spread_slowdown=CATALOGUE[wl].spread_slowdown)
            for i, (jt, wl) in enumerate(GAVEL_JOB_TYPES.items()) for k, g in enumerate((1, 2, 4, 8))]
    out = augment(jobs, tmp_path, seed=0, write=False)
    for j in out:
        t = TEMPLATES[j.semantic.template]
        assert t.workload == j.workload, (j.job_type, j.num_gpus, t.name)
        assert t.fits(j.num_gpus)


def test_odd_gpu_counts_and_cpu_jobs_get_templates_that_can_run_them(tmp_path):
    jobs = [Job(id=f"j{g}", submit_time=0, num_gpus=g, duration_s=600) for g in (0, 3, 11, 13, 24, 96)]
    out = {j.id: j for j in augment(jobs, tmp_path, seed=0)}
    assert out["j0"].semantic.template == "cpu_tabular_mlp" and out["j0"].spread_slowdown == 1.0
    assert out["j11"].semantic.template == CATCH_ALL and "--ntasks=11" in out["j11"].semantic.command
    for j in out.values():
        assert TEMPLATES[j.semantic.template].fits(j.num_gpus)


def test_the_early_stop_share_and_failure_mix_follow_the_documented_figures(tmp_path):
    jobs = load_trace("synth:acme:5000:9").jobs
    out = augment(jobs, tmp_path, seed=4, write=False)
    plans = [load_plan(j) for j in out]
    completed = [p for p in plans if p.outcome == "completed"]
    share = sum(p.early_stop for p in completed) / len(completed)
    assert abs(share - EARLY_STOP_SHARE) < 0.03, share
    for p in completed:
        assert (p.planned_s > p.duration_s) == p.early_stop
    failed = [j for j in out if j.outcome is Outcome.failed]
    assert len(failed) > 1500
    mix = Counter(j.failure_category.value for j in failed)
    for cat, want in FAILURE_MIX.items():
        assert abs(mix[cat] / len(failed) - want) < 0.03, (cat, mix[cat] / len(failed), want)
    assert all(j.failure_category is None for j in out if j.outcome is not Outcome.failed)
    for j in out:
        if j.failure_category is FailureCategory.hang:
            assert 0 < j.hang_onset_s < j.duration_s
    # configured steps overstate the runtime of jobs that end early
    for p in plans:
        if p.outcome in ("failed", "cancelled", "timeout") or p.early_stop:
            assert p.work_at_step(p.params["steps"]) > p.duration_s


def test_a_failure_category_from_the_trace_is_kept(tmp_path):
    j = Job(id="n1", submit_time=0, num_gpus=8, duration_s=5000, outcome=Outcome.failed,
            failure_category=FailureCategory.node)
    (out,) = augment([j], tmp_path, seed=0)
    assert out.failure_category is FailureCategory.node


def test_configured_steps_times_the_iteration_time_match_the_planned_runtime(tmp_path):
    out = augment(load_trace("synth:philly:400:1").jobs, tmp_path, seed=2, write=False)
    for j in out:
        p = load_plan(j)
        assert p.work_at_step(p.params["steps"]) == pytest.approx(p.planned_s, rel=1e-6, abs=1e-6)
        assert p.iter_s > 0


def test_a_resubmitted_job_reuses_its_users_template_with_an_edit(tmp_path):
    jobs = load_trace("synth:helios:1500:6").jobs
    out = augment(jobs, tmp_path, seed=8, write=False)
    by_id = {j.id: j for j in out}
    resub = [(j, load_plan(j)) for j in out if load_plan(j).base_job]
    eligible = sum(1 for j in out if j.num_gpus > 0)
    assert 0.1 * eligible < len(resub) < RESUBMIT_SHARE * eligible
    for j, plan in resub:
        base = by_id[plan.base_job]
        bplan = load_plan(base)
        assert base.user == j.user and base.submit_time <= j.submit_time
        assert plan.template == bplan.template
        assert plan.params["variant"] == bplan.params["variant"] + 1
        assert plan.params["lr"] != bplan.params["lr"] or plan.params["steps"] != bplan.params["steps"]
        assert plan.params["micro_batch"] == bplan.params["micro_batch"]


def test_duplicate_job_ids_are_refused_with_the_id_named(tmp_path):
    j = Job(id="same", submit_time=0, num_gpus=1, duration_s=10)
    with pytest.raises(ValueError, match="'same'"):
        augment([j, j], tmp_path, seed=0)


def test_a_garbled_plan_file_gives_an_error_naming_the_file(tmp_path):
    (out,) = augment([Job(id="x", submit_time=0, num_gpus=1, duration_s=10)], tmp_path, seed=0)
    path = tmp_path / "_plans" / "x.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="x.json: line 1"):
        load_plan(out)
    with pytest.raises(ValueError, match="not augmented"):
        load_plan(Job(id="y", submit_time=0, num_gpus=1, duration_s=1))


def test_job_ids_that_are_not_safe_file_names_get_distinct_workdirs(tmp_path):
    jobs = [Job(id=i, submit_time=0, num_gpus=1, duration_s=10) for i in ("../evil", "a/b", "a_b", "_x")]
    out = augment(jobs, tmp_path, seed=0)
    dirs = [j.semantic.workdir for j in out]
    assert len(set(dirs)) == 4
    for d in dirs:
        assert Path(d).parent == tmp_path.resolve() and ".." not in Path(d).name
