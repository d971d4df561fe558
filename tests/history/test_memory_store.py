import pytest
from history_support import rec

from schedmate.history.records import HistoryRecord, mask_digits
from schedmate.history.retriever import HistoryRetriever
from schedmate.history.store import STORES, MemoryStore


def store() -> MemoryStore:
    return STORES.create("memory", embedder="hashed")


def test_a_job_finishing_after_the_query_time_is_never_retrieved_even_as_the_nearest_text():
    s = store()
    s.add([rec("long", dur=1e7, end=5000.0, name="train-gpt-exact"),
           rec("short", dur=60.0, end=900.0, name="eval-resnet-other")])
    hits = s.query("name: train-gpt-exact", now=1000.0, k=5)
    assert [h.record.job_id for h in hits] == ["short"]
    assert s.recent(now=1000.0, k=5) == [s.get("short")]
    # at the finish instant itself it is still not visible (strictly before)
    assert "long" not in [h.record.job_id for h in s.query("name: train-gpt-exact", now=5000.0, k=5)]
    assert s.query("name: train-gpt-exact", now=5000.1, k=1)[0].record.job_id == "long"


def test_the_retriever_estimate_ignores_a_job_that_finishes_after_the_query():
    s = store()
    s.add([rec(f"j{i}", dur=100.0, end=100.0 + i, name="train-gpt") for i in range(5)])
    s.add([rec("future", dur=1e7, end=2e7, name="train-gpt")])
    r = HistoryRetriever(s).estimate("name: train-gpt", "alice", now=1000.0)
    assert r.source == "neighbors"
    assert "future" not in {e.job_id for e in r.evidence}
    assert r.estimate.p90 == pytest.approx(100.0)


def test_the_users_own_similar_jobs_come_first_and_weigh_more():
    s = store()
    s.add([rec(f"b{i}", dur=50.0, end=10.0 + i, name="train-bert", user="bob") for i in range(10)])
    s.add([rec(f"a{i}", dur=5000.0, end=10.0 + i, name="train-bert", user="alice") for i in range(3)])
    r = HistoryRetriever(s, k=8).estimate("name: train-bert", "alice", now=100.0)
    assert [e.job_id for e in r.evidence[:3]] == ["a2", "a1", "a0"]
    assert all(e.same_user for e in r.evidence[:3]) and not any(e.same_user for e in r.evidence[3:])
    # 3 of alice's (weight 2 each) vs 5 of bob's (weight 1 each): the median lands on alice's 5000 s
    assert r.estimate.p50 > 1000.0
    bob = HistoryRetriever(s, k=8).estimate("name: train-bert", "bob", now=100.0)
    assert bob.estimate.p50 == pytest.approx(50.0)


def test_the_fallback_chain_uses_recent_user_jobs_then_everyone():
    s = store()
    r = HistoryRetriever(s, min_similarity=0.99)
    assert r.estimate("name: x", "alice", now=10.0).source == "none"
    s.add([rec("g1", dur=30.0, end=5.0, name="zzz", user="carol")])
    got = r.estimate("name: x", "alice", now=10.0)
    assert got.source == "global" and got.estimate.p50 == pytest.approx(30.0)
    s.add([rec("a1", dur=300.0, end=6.0, name="qqq"), rec("a2", dur=300.0, end=7.0, name="www")])
    got = r.estimate("name: x", "alice", now=10.0)
    assert got.source == "user_recent" and got.estimate.p50 == pytest.approx(300.0)


def test_a_bad_record_is_rejected_with_its_field_and_the_rest_of_the_batch_goes_in():
    s = store()
    s.add([rec("old", dur=10.0, end=10.0)])
    s.flush()
    bad_dict = {"job_id": "neg", "num_gpus": 1, "duration_s": -5.0, "submit_time": 0.0, "end_time": 1.0}
    backwards = {"job_id": "back", "num_gpus": 1, "duration_s": 5.0, "submit_time": 50.0, "end_time": 1.0}
    nan = {"job_id": "nan", "num_gpus": 1, "duration_s": 5.0, "submit_time": 0.0, "end_time": float("inf")}
    result = s.add([rec("good1", dur=20.0, end=20.0), bad_dict, backwards, nan, "not a record",
                    rec("good2", dur=30.0, end=30.0)])
    assert result.accepted == 2
    assert [(r.index, r.job_id) for r in result.rejected] == [(1, "neg"), (2, "back"), (3, "nan"), (4, None)]
    assert "duration_s" in result.rejected[0].error and "greater than or equal to 0" in result.rejected[0].error
    assert "before submit_time" in result.rejected[1].error
    assert "end_time" in result.rejected[2].error and "finite" in result.rejected[2].error
    assert "expected a HistoryRecord" in str(result.rejected[3])
    assert s.count() == 3 and {s.get(i).job_id for i in ("old", "good1", "good2")} == {"old", "good1", "good2"}


def test_adding_a_job_again_replaces_it_instead_of_duplicating_it():
    s = store()
    s.add([rec("j", dur=10.0, end=10.0, name="a-run", user="alice")])
    s.flush()
    s.add([rec("j", dur=99.0, end=120.0, name="another-name", user="bob")])
    assert s.count() == 1
    assert s.get("j").duration_s == 99.0
    assert s.recent(now=1e9, k=5, user="alice") == []
    assert [h.record.job_id for h in s.query("name: another-name", now=1e9, k=5, user="bob")] == ["j"]
    assert [h.record.duration_s for h in s.query("name: a-run", now=1e9, k=5)] == [99.0]


def test_a_write_that_fails_keeps_the_buffer_and_everything_already_stored():
    class Broken:
        name, dim = "broken", 4

        def __init__(self):
            self.fail = False

        def embed(self, texts):
            if self.fail:
                raise RuntimeError("model crashed")
            import numpy as np
            return np.ones((len(texts), 4), dtype="float32") / 2

    emb = Broken()
    s = MemoryStore(embedder=emb)
    s.add([rec("kept", dur=10.0, end=10.0)])
    assert s.count() == 1
    emb.fail = True
    s.add([rec("pending", dur=10.0, end=11.0)])
    with pytest.raises(RuntimeError, match="model crashed"):
        s.flush()
    emb.fail = False
    assert s.count() == 2 and s.get("kept") is not None and s.get("pending") is not None


def test_identical_texts_are_ranked_most_recent_first():
    s = store()
    s.add([rec(f"r{i}", dur=10.0 * (i + 1), end=float(i), name=f"sweep-{i:04d}") for i in range(6)])
    assert mask_digits("sweep-0003") == "sweep-0"
    hits = s.query("name: sweep-0", now=4.5, k=3)
    assert [h.record.job_id for h in hits] == ["r4", "r3", "r2"]
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)


def test_record_text_masks_digits_and_leaves_out_the_workload():
    r = rec("x", dur=1.0, end=1.0, name="bert-000123", workload="bert", job_type="SFT", command="python t.py --lr 3")
    assert r.text == "name: bert-0 | type: SFT | command: python t.py --lr 0"
    assert HistoryRecord.from_metadata(r.metadata()) == r
