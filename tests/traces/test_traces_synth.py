"""Synthetic generators: determinism, spec parsing, and calibration against the published targets."""

from __future__ import annotations

import pytest

from schedmate.traces import calibration_report, load_trace
from schedmate.traces.synth import TOLERANCES, generate
from schedmate.workloads import CATALOGUE

KINDS = ["philly", "helios", "acme"]


@pytest.fixture(scope="module")
def big():
    return {k: generate(k, 20_000, seed=11) for k in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_seed_gives_the_same_jobs(kind):
    a = load_trace(f"synth:{kind}:300:7").jobs
    b = load_trace(f"synth:{kind}:300", seed=7).jobs
    assert a == b
    c = load_trace(f"synth:{kind}:300:8").jobs
    assert [j.duration_s for j in a] != [j.duration_s for j in c]


@pytest.mark.parametrize("kind", KINDS)
def test_synthetic_jobs_are_sorted_and_carry_a_catalogue_workload(kind):
    jobs = load_trace(f"synth:{kind}:500").jobs
    assert [j.submit_time for j in jobs] == sorted(j.submit_time for j in jobs)
    assert all(j.workload in CATALOGUE and j.spread_slowdown == CATALOGUE[j.workload].spread_slowdown for j in jobs)
    assert len({j.id for j in jobs}) == 500 and all(j.user for j in jobs)


def test_acme_jobs_carry_the_acme_job_types():
    jobs = load_trace("synth:acme:2000").jobs
    assert {j.job_type for j in jobs} == {"Eval", "Pretrain", "SFT", "MLLM", "Debug", "Other"}


@pytest.mark.parametrize("kind", KINDS)
def test_generated_marginals_match_the_calibration_targets(big, kind):
    report = calibration_report(kind, big[kind])
    bad = report[~report["ok"]]
    assert bad.empty, f"calibration drifted:\n{bad.to_string()}"
    assert {"median_duration_s", "fail_rate", "cancel_rate", "gpu1_share", "hourly_shape_corr"} <= set(report["metric"])


def test_the_calibration_report_flags_a_drifted_workload(big):
    drifted = [j.model_copy(update={"duration_s": j.duration_s * 1.3, "num_gpus": 2 if j.num_gpus == 1 and i % 5 == 0
                                    else j.num_gpus}) for i, j in enumerate(big["philly"])]
    report = calibration_report("philly", drifted).set_index("metric")
    assert not report.loc["median_duration_s", "ok"] and not report.loc["gpu1_share", "ok"]
    assert report.loc["fail_rate", "ok"]
    assert TOLERANCES["median_duration_s"] == ("rel", 0.15)


def test_a_target_load_rescales_arrivals_to_that_load():
    jobs = generate("helios", 3000, seed=1, target_load=0.9, cluster_gpus=256, max_gpus=64)
    work = sum(j.num_gpus * j.duration_s for j in jobs)
    span = jobs[-1].submit_time - jobs[0].submit_time
    assert abs(work / (256 * span) - 0.9) < 1e-6 and max(j.num_gpus for j in jobs) <= 64


@pytest.mark.parametrize("spec", ["synth:slurm:10", "synth:philly", "synth:philly:ten", "synth:philly:10:1:2"])
def test_a_malformed_synth_spec_is_refused(spec):
    with pytest.raises(ValueError):
        load_trace(spec)
