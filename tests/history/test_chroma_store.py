"""The chromadb backend, for real: a PersistentClient in tmp_path, embeddings from the offline MiniLM."""

import pytest
from history_support import rec

from schedmate.history.retriever import HistoryRetriever
from schedmate.history.store import ChromaStore, MemoryStore

pytestmark = pytest.mark.slow


def test_a_persistent_store_survives_reopening(tmp_path, minilm):
    s = ChromaStore(path=tmp_path / "h", embedder=minilm)
    s.add([rec("a", dur=120.0, end=200.0, name="finetune-llama-lora", profile={"model_family": "llama"}),
           rec("b", dur=30.0, end=210.0, name="resnet50-imagenet-eval", user="bob")])
    s.close()
    del s
    again = ChromaStore(path=tmp_path / "h", embedder=minilm)
    assert again.count() == 2
    assert again.get("a") == rec("a", dur=120.0, end=200.0, name="finetune-llama-lora", profile={"model_family": "llama"})
    hits = again.query("name: finetune-llama-0", now=1000.0, k=1)
    assert hits[0].record.job_id == "a" and hits[0].similarity > 0.5


def test_the_chroma_where_filter_hides_jobs_that_finish_after_the_query(tmp_path, minilm):
    s = ChromaStore(path=tmp_path / "h", embedder=minilm)
    s.add([rec("future", dur=1e7, end=5000.0, name="pretrain-gpt-large"),
           rec("past", dur=60.0, end=900.0, name="debug-unet-small")])
    assert [h.record.job_id for h in s.query("name: pretrain-gpt-large", now=1000.0, k=5)] == ["past"]
    assert [r.job_id for r in s.recent(now=1000.0, k=5)] == ["past"]
    assert s.query("name: pretrain-gpt-large", now=6000.0, k=1)[0].record.job_id == "future"


def test_chroma_and_the_exact_memory_store_return_the_same_neighbours(tmp_path, minilm):
    recs = [rec(f"j{i}", dur=10.0 * (i + 1), end=float(i + 1), name=n, user=u)
            for i, (n, u) in enumerate([("train-bert-base", "alice"), ("train-bert-large", "bob"),
                                        ("resnet-imagenet", "alice"), ("gpt-pretrain", "carol"),
                                        ("bert-finetune-squad", "bob"), ("unet-segmentation", "alice")])]
    c, m = ChromaStore(path=tmp_path / "h", embedder=minilm), MemoryStore(embedder=minilm)
    for s in (c, m):
        s.add(recs)
    for user in (None, "bob"):
        got_c = [(h.record.job_id, round(h.similarity, 4)) for h in c.query("name: bert-0", now=5.5, k=3, user=user)]
        got_m = [(h.record.job_id, round(h.similarity, 4)) for h in m.query("name: bert-0", now=5.5, k=3, user=user)]
        assert got_c == got_m
    est = HistoryRetriever(c, min_neighbors=2).estimate("name: bert-0", "bob", now=5.5)
    assert est.source == "neighbors" and est.evidence[0].job_id == "j4"


def test_a_bad_record_never_reaches_chroma_and_the_good_ones_do(tmp_path, minilm):
    s = ChromaStore(path=tmp_path / "h", embedder=minilm)
    s.add([rec("kept", dur=10.0, end=10.0)])
    s.flush()
    res = s.add([{"job_id": "bad", "num_gpus": -1, "duration_s": 1.0, "submit_time": 0.0, "end_time": 1.0},
                 rec("new", dur=5.0, end=12.0)])
    assert res.accepted == 1 and res.rejected[0].job_id == "bad" and "num_gpus" in res.rejected[0].error
    assert s.count() == 2 and s.get("bad") is None


def test_an_unreachable_chroma_server_is_a_clear_error(monkeypatch, minilm):
    from schedmate.history.store import StoreUnavailable

    monkeypatch.setenv("SCHEDMATE_CHROMA_URL", "http://127.0.0.1:9")
    with pytest.raises(StoreUnavailable, match="127.0.0.1:9 is not reachable"):
        ChromaStore(embedder=minilm)


@pytest.fixture()
def chroma_server(tmp_path):
    """A real `chroma run` server on loopback (started and stopped by this test, by PID)."""
    import shutil
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    if not Path(exe).exists():
        pytest.skip("the chroma CLI is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "chroma.log", "w")  # noqa: SIM115 - closed in the finally below
    proc = subprocess.Popen([exe, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"chroma server exited: {(tmp_path / 'chroma.log').read_text()[-2000:]}")
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def test_a_shared_chroma_server_serves_the_history_through_the_url_setting(chroma_server, monkeypatch, minilm):
    monkeypatch.setenv("SCHEDMATE_CHROMA_URL", chroma_server)
    writer = ChromaStore(embedder=minilm)
    assert writer.where == chroma_server
    writer.add([rec("srv-1", dur=300.0, end=400.0, name="finetune-llama"),
                rec("srv-2", dur=9e6, end=9e6, name="finetune-llama")])
    writer.flush()
    reader = ChromaStore(embedder=minilm)  # another client of the same server sees the same history
    assert reader.count() == 2
    assert [h.record.job_id for h in reader.query("name: finetune-llama", now=1000.0, k=5)] == ["srv-1"]
