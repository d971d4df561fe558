"""Faults: the service killed with SIGKILL under load, the model down, the disk full. An acknowledged
submission is always there afterwards, answers keep coming from the static path, and a database that
cannot write gives 503 with its reason instead of a crash."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from schedmate.service.app import Settings, create_token
from schedmate.service.db import Store

from .conftest import auth, free_port, serve_process, start


def all_ids(url: str, token: str) -> set[str]:
    ids: set[str] = set()
    after = None
    while True:
        params = {"limit": 500} | ({"after": after} if after else {})
        page = [j["id"] for j in httpx.get(f"{url}/v1/jobs", params=params, headers=auth(token), timeout=30).json()["jobs"]]
        ids.update(page)
        if len(page) < 500:
            return ids
        after = page[-1]


def test_every_acknowledged_submission_survives_a_kill_9_in_the_middle_of_the_load(tmp_path):
    db = str(tmp_path / "service.sqlite")
    token = create_token(Store(db), "load", ["submit", "read"])
    svc = serve_process(db, "--rate", "100000")
    acked: set[str] = set()
    errors: list[str] = []
    lock = threading.Lock()
    killed = threading.Event()
    counter = iter(range(100_000))

    def client(k: int) -> None:
        with httpx.Client(headers=auth(token), timeout=30) as c:
            for i in counter:
                if len(acked) > 2000:
                    return  # a bound in case the kill never came
                try:
                    r = c.post(f"{svc.url}/v1/jobs", json={"id": f"k{i}", "command": f"python train.py --seed {i}",
                                                           "user": f"u{k}", "num_gpus": 8})
                except httpx.TransportError as e:
                    errors.append(type(e).__name__)
                    return  # the service is gone
                if r.status_code == 201:
                    with lock:
                        acked.add(f"k{i}")
                        if len(acked) >= 300 and not killed.is_set():
                            killed.set()
                            svc.kill9()  # while the other clients' requests are in flight

    threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert killed.is_set() and errors, "the service was not killed under load"
    again = serve_process(db)
    try:
        stored = all_ids(again.url, token)
        assert acked <= stored, f"{len(acked - stored)} acknowledged submissions lost"
        # what was committed but not acknowledged is at most what was in flight (one per client)
        assert len(stored - acked) <= len(threads)
        assert httpx.get(f"{again.url}/readyz").json()["jobs"] == len(stored)
    finally:
        again.stop()


def test_with_the_model_down_answers_keep_coming_from_the_static_path_and_say_why_they_stay(tmp_path, jobs_root,
                                                                                             monkeypatch):
    dead = free_port()  # nothing listens there
    monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", f"http://127.0.0.1:{dead}/v1")
    monkeypatch.setenv("SCHEDMATE_LLM_MODEL", "qwen2.5-coder-0.5b")
    (jobs_root / "open").mkdir()
    (jobs_root / "open" / "train.py").write_text(
        "from mylib import build_model, load_data, CONFIG\nmodel = build_model(CONFIG)\n"
        "for step, batch in enumerate(load_data()):\n    model(batch)\n")
    db = str(tmp_path / "llm.sqlite")
    token = create_token(Store(db), "c", ["submit", "read"])
    running = start(Settings(db=db, roots=[jobs_root], use_llm=True, queue_size=2))
    try:
        h = auth(token)
        answers = [httpx.post(f"{running.url}/v1/jobs", json={"id": f"m{i}", "command": "python train.py",
                                                              "workdir": str(jobs_root / "open")},
                              headers=h, timeout=60).json() for i in range(6)]
        assert all(a["source"] == "static" for a in answers)
        assert answers[0]["refinement"] == "queued"
        for _ in range(600):  # the worker gives up on each queued job; bounded wait, no timing asserted
            got = httpx.get(f"{running.url}/v1/jobs/m0", headers=h).json()
            if "refinement" in got["annotation"]:
                break
            time.sleep(0.1)
        assert got["source"] == "static"
        assert got["annotation"]["refinement"].startswith("failed: LLM call failed")
        assert "unreachable" in got["annotation"]["refinement"]
        metrics = httpx.get(f"{running.url}/metrics").text
        assert 'schedmate_events_total{event="llm_failures"}' in metrics
    finally:
        running.stop()


def test_a_full_disk_gives_503_with_the_reason_and_the_service_keeps_answering(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True, check=False).returncode:
        pytest.skip("mount -t tmpfs is not allowed here")
    try:
        db = str(disk / "service.sqlite")
        token = create_token(Store(db), "c", ["submit", "read"])
        running = start(Settings(db=db, uploads_dir=tmp_path / "uploads"))
        try:
            h = auth(token)
            filler = "x" * 7000
            statuses = []
            for i in range(400):
                r = httpx.post(f"{running.url}/v1/jobs", json={"id": f"f{i}", "command": f"{filler} {i}"},
                               headers=h, timeout=30)
                statuses.append(r.status_code)
                if r.status_code == 503:
                    break
            assert statuses[0] == 201 and statuses[-1] == 503
            assert "database or disk is full" in r.json()["detail"]
            assert httpx.get(f"{running.url}/healthz").status_code == 200
            assert httpx.get(f"{running.url}/v1/jobs/f0", headers=h).json()["id"] == "f0"
            assert httpx.get(f"{running.url}/v1/jobs/f{len(statuses) - 1}", headers=h).status_code == 404
        finally:
            running.stop()
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_database_it_cannot_reach_stops_serve_with_a_clear_error():
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-m", "schedmate.cli", "serve", "--db", "postgresql://nobody@127.0.0.1:1/none"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120,
                       cwd=root, check=False)
    assert p.returncode == 2 and "error:" in p.stderr and "127.0.0.1" in p.stderr


def test_a_model_that_never_answers_fills_the_bounded_queue_and_answers_stay_static_at_once(tmp_path, jobs_root,
                                                                                              monkeypatch):
    silent = socket.socket()  # a real server that accepts connections and never says a word
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", f"http://127.0.0.1:{silent.getsockname()[1]}/v1")
    monkeypatch.setenv("SCHEDMATE_LLM_MODEL", "qwen2.5-coder-0.5b")
    monkeypatch.setenv("SCHEDMATE_LLM_TIMEOUT", "30")
    (jobs_root / "open").mkdir()
    (jobs_root / "open" / "train.py").write_text("from mylib import build_model, CONFIG\nmodel = build_model(CONFIG)\n")
    db = str(tmp_path / "slow.sqlite")
    token = create_token(Store(db), "c", ["submit", "read"])
    running = start(Settings(db=db, roots=[jobs_root], use_llm=True, queue_size=1))
    try:
        answers = [httpx.post(f"{running.url}/v1/jobs", json={"id": f"s{i}", "command": "python train.py",
                                                              "workdir": str(jobs_root / "open")},
                              headers=auth(token), timeout=60).json() for i in range(5)]
        assert [a["source"] for a in answers] == ["static"] * 5
        assert answers[0]["refinement"] == "queued"
        full = [a for a in answers if a["refinement"].startswith("queue full")]
        assert len(full) >= 3  # one job with the model, one waiting, the rest turned away
        assert 'schedmate_events_total{event="llm_queue_full"}' in httpx.get(f"{running.url}/metrics").text
        plain = httpx.post(f"{running.url}/v1/jobs", json={"id": "s9", "command": "python train.py"},
                           headers=auth(token), timeout=60).json()
        assert plain["refinement"] == "nothing for the model: no code to read"  # takes no place in the queue
    finally:
        running.stop()
        silent.close()
