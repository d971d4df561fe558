"""eval/realjobs/calibrate.py: each knob from its observations, as the README says."""

from __future__ import annotations

import json
import math

import pytest

from eval.realjobs.calibrate import iteration_dispersion, no_length, stop_fraction, stop_share


def test_stopped_runs_give_a_uniform_range_with_their_mean_and_spread_and_timeouts_do_not_count(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text("source,corpus_item,current,total,ended,note\n"
                   "a,a,20,100,stopped,x\nb,b,40,100,early_stopping,x\nc,c,5,100,time_limit,x\nd,d,9,9,full,x\n")
    lo, hi = stop_fraction(csv).value
    assert (lo + hi) / 2 == pytest.approx(0.30, abs=0.005)
    assert (hi - lo) / math.sqrt(12) == pytest.approx(0.1414, abs=0.005)  # sd of 0.2 and 0.4


def test_the_iteration_dispersion_pools_systems_and_ignores_groups_with_one_system(tmp_path):
    csv = tmp_path / "mlperf.csv"
    rows = ["source,benchmark,submitter,system,gpu,gpus,run,global_batch,epochs_timed,median_epoch_s"]
    for sys_, s in (("s1", 100.0), ("s2", 100.0 * math.e ** 0.2)):
        for run in range(3):
            rows.append(f"x/training_results_v1.0@c:p,resnet,o,{sys_},A100,8,{run},256,10,{s}")
    rows.append("x/training_results_v1.0@c:p,ssd,o,alone,A100,8,0,256,10,999")  # one system: not a group
    csv.write_text("\n".join(rows) + "\n")
    assert iteration_dispersion(csv).value == pytest.approx(0.2 / math.sqrt(2), abs=0.001)


def test_the_stop_share_is_three_quarters_of_the_median_cancel_share_among_runs_that_did_not_fail(tmp_path):
    (tmp_path / "helios").mkdir()
    (tmp_path / "acme").mkdir()
    (tmp_path / "helios" / "helios_cluster_summary.csv").write_text(
        "id,complete_rate_gpu,cancel_rate_gpu\nA,0.6,0.2\nB,0.8,0.2\ntotal,0.7,0.2\n")
    (tmp_path / "acme" / "cluster_summary.csv").write_text(
        "id,complete_rate_gpu,cancel_rate_gpu\nPhilly,0.9,0.1\nPAI,,\n")
    assert stop_share(tmp_path).value == pytest.approx(0.75 * 0.2, abs=0.001)  # median of 0.25, 0.2, 0.1


def test_no_length_counts_jobs_that_state_neither_steps_nor_epochs(tmp_path):
    items = [{"id": "a", "labels": {"train_steps": None, "epochs": None}},
             {"id": "b", "labels": {"train_steps": None, "epochs": 3}},
             {"id": "c", "labels": {"train_steps": 100, "epochs": None}},
             {"id": "d", "labels": {"train_steps": 100, "epochs": None}}]
    (tmp_path / "x.jsonl").write_text("\n".join(json.dumps(i) for i in items) + "\n")
    got = no_length(tmp_path)
    assert got.value == 0.25 and "epochs only (steps need the dataset size): 1 (25.0%)" in got.lines[0]
