"""The store on its own: migrations, group commit, a failing write failing alone, and the same service on a
real PostgreSQL (a private cluster started for the test from the Debian packages; skipped when absent)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import MetaData, text

from schedmate.service import db as dbm
from schedmate.service.app import Settings, create_token
from schedmate.service.db import Store, StoreUnavailable

from .conftest import auth, free_port, serve_process, start


def test_a_version_1_database_is_migrated_forward_and_keeps_its_jobs(tmp_path):
    path = tmp_path / "old.sqlite"
    engine = dbm.connect(str(path))
    with engine.begin() as c:  # what the first release of the service created
        dbm.SCHEMA.to_metadata(MetaData()).create(c)
        dbm.MIGRATIONS[0](c)
        c.execute(text("INSERT INTO schema_version (version) VALUES (1)"))
        c.execute(text("INSERT INTO jobs (id, client, state, request, created, updated, log_bytes) "
                       "VALUES ('old1', 'c', 'submitted', '{\"id\": \"old1\", \"command\": \"ls\"}', 1, 1, 0)"))
    engine.dispose()
    store = Store(str(path))
    with store.engine.connect() as c:
        assert c.execute(text("SELECT version FROM schema_version")).scalar_one() == len(dbm.MIGRATIONS) == 2
    job = store.job("old1")
    assert job is not None and job["log_offset"] == 0 and job["log_path"] is None
    assert store.add_job("new1", "c", {"id": "new1"}, {"a": 1}, "static")


def test_a_database_newer_than_the_code_is_refused_with_a_clear_error(tmp_path):
    path = str(tmp_path / "new.sqlite")
    Store(path).close()
    engine = dbm.connect(path)
    with engine.begin() as c:
        c.execute(text("UPDATE schema_version SET version = 99"))
    with pytest.raises(StoreUnavailable, match="schema version 99 is newer"):
        Store(path)


def test_queued_writes_share_one_commit_and_a_failing_one_fails_alone(tmp_path):
    store = Store(str(tmp_path / "s.sqlite"))

    def queue_behind_a_held_writer(ops):
        gate = threading.Event()
        held = store.submit(lambda c: gate.wait(30))  # the writer is busy while the others queue up
        futures = [store.submit(op) for op in ops]
        before = store.batches
        gate.set()
        held.result(timeout=30)
        for f in futures:
            f.exception(timeout=30)
        return futures, store.batches - before

    futures, commits = queue_behind_a_held_writer(
        [store.op_add_job(f"j{i}", "c", {"id": f"j{i}"}, {"n": i}, "static") for i in range(100)])
    assert all(f.result() is True for f in futures)
    assert commits == 1  # the 100 queued writes went in one commit (batch_max is 512)

    futures, _ = queue_behind_a_held_writer(
        [store.op_add_job("k1", "c", {"id": "k1"}, {}, "static"),
         store.op_add_annotation("no-such-job", {"x": 1}, "static"),  # a foreign key violation
         store.op_add_job("j0", "c", {"id": "j0"}, {}, "static"),  # a duplicate id: an answer, not an error
         store.op_add_job("k2", "c", {"id": "k2"}, {}, "static")])
    good, bad, dup, good2 = futures
    assert good.result() is True and good2.result() is True and dup.result() is False
    with pytest.raises(Exception, match="FOREIGN KEY"):
        bad.result()
    assert store.counts() == {"jobs": 102, "annotations": 102}
    store.close()


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free loopback port, as the `postgres` user when we are root."""
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql; bootstrap.py does it)")
    as_user: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="schedmate-pg-"))
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running PostgreSQL as root needs runuser to switch to the postgres user")
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(base, "postgres")
    port = free_port()
    data = base / "data"
    try:
        subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                        "--no-sync"], check=True, capture_output=True, timeout=120)
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(base / "log"), "-o",
                        f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True, timeout=120)
    except subprocess.CalledProcessError as e:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {e.stderr.decode()[-1000:]}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60, check=False)
        shutil.rmtree(base, ignore_errors=True)


def test_the_service_runs_on_postgresql_with_the_same_answers_and_survives_a_restart(postgres, jobs_root):
    token = create_token(Store(postgres), "pg", ["submit", "read"])
    running = start(Settings(db=postgres, roots=[jobs_root], uploads_dir=jobs_root.parent / "uploads"))
    h = auth(token)
    try:
        body = {"id": "pg1", "command": "torchrun --nproc_per_node=8 train.py --max_steps 5000",
                "workdir": str(jobs_root / "gpt"), "num_gpus": 8}
        r = httpx.post(f"{running.url}/v1/jobs", json=body, headers=h, timeout=60)
        assert r.status_code == 201 and r.json()["code_profile"]["train_steps"] == 5000
        assert httpx.post(f"{running.url}/v1/jobs", json=body, headers=h).status_code == 409  # ON CONFLICT on PG
        log = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        assert httpx.post(f"{running.url}/v1/jobs/pg1/log", content=log, headers=h, timeout=60).status_code == 200
        assert httpx.post(f"{running.url}/v1/jobs/pg1/finish", json={"runtime_s": 60, "outcome": "failed"},
                          headers=h).status_code == 200
    finally:
        running.stop()
    again = start(Settings(db=postgres, roots=[jobs_root], uploads_dir=jobs_root.parent / "uploads"))
    try:
        got = httpx.get(f"{again.url}/v1/jobs/pg1", headers=h).json()
        assert got["state"] == "finished" and got["log_bytes"] == len(log)
        assert [j["id"] for j in httpx.get(f"{again.url}/v1/jobs", params={"state": "finished"},
                                           headers=h).json()["jobs"]] == ["pg1"]
        assert again.app.state.engine.history.count() == 1  # the history store rebuilt from PostgreSQL
    finally:
        again.stop()


@pytest.mark.slow
def test_a_lost_chroma_history_is_rebuilt_from_the_database_at_start(tmp_path):
    pytest.importorskip("chromadb")
    db, hist = str(tmp_path / "h.sqlite"), tmp_path / "history"
    token = create_token(Store(db), "h", ["submit", "read"])
    args = ("--history", "chroma", "--history-path", str(hist))
    svc = serve_process(db, *args)  # its own process: chromadb keeps an open store per path in a process
    try:
        for i in range(3):
            httpx.post(f"{svc.url}/v1/jobs", json={"id": f"h{i}", "command": f"python train.py --seed {i}",
                                                   "user": "ann"}, headers=auth(token), timeout=60)
            httpx.post(f"{svc.url}/v1/jobs/h{i}/finish", json={"runtime_s": 3600}, headers=auth(token), timeout=60)
        assert httpx.get(f"{svc.url}/readyz", timeout=30).json()["history"] == 3
    finally:
        svc.stop()
    shutil.rmtree(hist)  # the vector store is derived data: lose it
    again = serve_process(db, *args)
    try:
        assert httpx.get(f"{again.url}/readyz", timeout=30).json()["history"] == 3
        assert 'event="history_rebuilt"} 3.0' in httpx.get(f"{again.url}/metrics").text
        r = httpx.post(f"{again.url}/v1/jobs", json={"id": "h9", "command": "python train.py --seed 9", "user": "ann"},
                       headers=auth(token), timeout=60).json()
        assert r["annotation"]["predicted_duration"]["p50"] == pytest.approx(3600, rel=0.2)  # from the rebuilt history
    finally:
        again.stop()
