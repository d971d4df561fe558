"""The annotation service over real HTTP and a real database: auth, answers, logs, persistence, bad input."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import httpx

from schedmate.service.app import Settings

from .conftest import start


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def job(root, job_id="j1", **kw):
    return {"id": job_id, "command": "torchrun --nproc_per_node=8 train.py --max_steps 5000",
            "workdir": str(root / "gpt"), "user": "alice", "num_gpus": 8, **kw}


def test_no_token_is_401_and_a_read_token_cannot_submit(service, jobs_root):
    running, tokens = service
    assert httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root)).status_code == 401
    r = httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root), headers=auth(tokens["read"]))
    assert r.status_code == 403
    assert httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root), headers=auth("smt_wrong")).status_code == 401


def test_a_submitted_job_gets_its_code_profile_and_the_instructions_in_its_code_change_nothing(service, jobs_root):
    running, tokens = service
    r = httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root), headers=auth(tokens["submit"]), timeout=60)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["source"] == "static"
    assert body["code_profile"]["num_gpus"] == 8 and body["code_profile"]["train_steps"] == 5000
    got = httpx.get(f"{running.url}/v1/jobs/j1", headers=auth(tokens["read"])).json()
    assert got["state"] == "submitted" and got["annotation"]["code_profile"]["num_gpus"] == 8
    assert httpx.get(f"{running.url}/v1/jobs/nope", headers=auth(tokens["read"])).status_code == 404


def test_a_log_chunk_refreshes_progress_and_a_failure_marks_the_job_failed(service, jobs_root):
    running, tokens = service
    h = auth(tokens["submit"])
    llama = Path(__file__).resolve().parents[2] / "eval" / "datasets" / "code" / "jobs" / "fsdp_llama7b_four_nodes"
    shutil.copytree(llama, jobs_root / "llama")
    body = job(jobs_root) | {"workdir": str(jobs_root / "llama"), "command": (llama / "command.txt").read_text()}
    submitted = httpx.post(f"{running.url}/v1/jobs", json=body, headers=h, timeout=60).json()
    assert submitted["annotation"]["network_sensitivity"] == 1.0
    lines = "".join(f" iteration       {i * 10}/    5000 | elapsed time per iteration (ms): 1000.0 | lm loss: 2.{i}E+00 |\n"
                    for i in range(1, 6))
    r = httpx.post(f"{running.url}/v1/jobs/j1/log", content=lines, headers=h, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["progress"]["current_step"] == 50 and r.json()["progress"]["total_steps"] == 5000
    crash = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    r = httpx.post(f"{running.url}/v1/jobs/j1/log", content=crash, headers=h, timeout=60)
    assert r.json()["annotation"]["failure"]["category"] == "oom"
    # what the log cannot tell stays from the submission: the code's network sensitivity
    assert r.json()["annotation"]["network_sensitivity"] == submitted["annotation"]["network_sensitivity"] is not None
    components = [p["component"] for p in r.json()["annotation"]["provenance"]]
    assert "code" in components and "logs" in components
    listed = httpx.get(f"{running.url}/v1/jobs", params={"state": "failed"}, headers=h).json()["jobs"]
    assert [j["id"] for j in listed] == ["j1"]


def test_every_accepted_job_is_there_after_a_restart(service, jobs_root):
    running, tokens = service
    h = auth(tokens["submit"])
    for i in range(5):
        assert httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root, f"k{i}"), headers=h, timeout=60).status_code == 201
    running.stop()
    again = start(Settings(db=running.db, roots=[jobs_root.resolve()]))
    try:
        ids = [j["id"] for j in httpx.get(f"{again.url}/v1/jobs", headers=h).json()["jobs"]]
        assert ids == [f"k{i}" for i in range(5)]
    finally:
        again.stop()


def test_bad_input_gets_a_clear_status_not_a_crash(service, jobs_root, tmp_path):
    running, tokens = service
    h = auth(tokens["submit"])
    outside = job(jobs_root, "x1") | {"workdir": str(tmp_path)}
    r = httpx.post(f"{running.url}/v1/jobs", json=outside, headers=h)
    assert r.status_code == 400 and "outside the allowed roots" in r.json()["detail"]
    assert httpx.post(f"{running.url}/v1/jobs", json={"id": "x2"}, headers=h).status_code == 422
    big = job(jobs_root, "x3") | {"command": "x" * (2 << 20)}
    assert httpx.post(f"{running.url}/v1/jobs", json=big, headers=h).status_code == 413
    httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root, "x4"), headers=h, timeout=60)
    assert httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root, "x4"), headers=h).status_code == 409


def test_a_read_only_database_gives_503_with_the_reason_and_loses_nothing(service, jobs_root):
    running, tokens = service
    h = auth(tokens["submit"])
    assert httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root, "ro1"), headers=h, timeout=60).status_code == 201
    running.stop()
    if os.geteuid() == 0:  # root ignores file modes: open the database read-only instead
        db = f"sqlite:///file:{running.db}?mode=ro&uri=true"
    else:
        os.chmod(running.db, stat.S_IRUSR)
        db = running.db
    ro = start(Settings(db=db, roots=[jobs_root.resolve()]))
    try:
        r = httpx.post(f"{ro.url}/v1/jobs", json=job(jobs_root, "ro2"), headers=h, timeout=60)
        assert r.status_code == 503 and "readonly" in r.json()["detail"].replace("-", "").replace(" ", "").lower()
        assert httpx.get(f"{ro.url}/v1/jobs/ro1", headers=h).json()["id"] == "ro1"
    finally:
        ro.stop()


def test_metrics_count_requests_in_prometheus_format(service, jobs_root):
    running, tokens = service
    httpx.post(f"{running.url}/v1/jobs", json=job(jobs_root, "m1"), headers=auth(tokens["submit"]), timeout=60)
    text = httpx.get(f"{running.url}/metrics").text
    assert 'schedmate_events_total{event="jobs_submitted"} 1.0' in text
    assert 'schedmate_http_request_duration_seconds_count{route="/v1/jobs"} 1.0' in text
    assert "schedmate_llm_queue_depth 0.0" in text and "schedmate_llm_calls_total 0.0" in text


def test_the_openapi_document_lists_every_endpoint_and_docs_are_served(service):
    running, _ = service
    paths = httpx.get(f"{running.url}/openapi.json").json()["paths"]
    for path in ("/v1/jobs", "/v1/jobs/upload", "/v1/jobs/{job_id}/log", "/v1/jobs/{job_id}/finish",
                 "/v1/jobs/{job_id}", "/v1/admission/kubernetes", "/v1/clients", "/healthz", "/readyz", "/metrics"):
        assert path in paths, path
    assert "text/plain" in paths["/v1/jobs/{job_id}/log"]["post"]["requestBody"]["content"]
    assert httpx.get(f"{running.url}/docs").status_code == 200
