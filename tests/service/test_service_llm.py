"""The service with a real model behind its queue: the static answer comes at once, the model's refinement
lands later as a newer annotation (`source: llm`); with the model server stopped mid-run, answers keep
coming from the static path and say why they were not refined. A model server of the test's own (the
project's model, one thread) is started so that stopping it hurts nobody."""

from __future__ import annotations

import os
import signal
import time

import httpx
import pytest

from eval.bench_service import start_llm
from schedmate.llm.serving import running_server
from schedmate.service.app import Settings, create_token
from schedmate.service.db import Store

from .conftest import auth, free_port, start

OPEN_CODE = ("import torch\nfrom transformers import AutoModelForCausalLM\n"
             "model = AutoModelForCausalLM.from_pretrained('gpt2-medium')\n"
             "for epoch in range(3):\n    for batch in loader:\n        model(**batch).loss.backward()\n")


def wait_for(url: str, h: dict, job_id: str, done) -> dict:
    for _ in range(1800):  # bounded; what is asserted is what arrived, never how fast
        got = httpx.get(f"{url}/v1/jobs/{job_id}", headers=h, timeout=30).json()
        if done(got):
            return got
        time.sleep(0.5)
    raise AssertionError(f"{job_id}: no refinement arrived: {got}")


@pytest.mark.llm
@pytest.mark.slow
def test_the_model_refines_later_and_when_it_stops_answers_stay_static(tmp_path, jobs_root, monkeypatch):
    state = running_server("llamacpp")
    if state is None:
        if os.environ.get("SCHEDMATE_REQUIRE_LLM") == "1":
            pytest.fail("SCHEDMATE_REQUIRE_LLM=1 but no llama.cpp server runs (schedmate llm serve --engine llamacpp)")
        pytest.skip("no llama.cpp server: its model is what this test serves")
    port = free_port()
    proc = start_llm(port, tmp_path, state.model_path)
    monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("SCHEDMATE_LLM_MODEL", state.model_alias)
    monkeypatch.setenv("SCHEDMATE_LLM_DIALECT", "llamacpp")
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path / "home"))  # a fresh LLM cache: real calls
    (jobs_root / "open").mkdir()
    (jobs_root / "open" / "train.py").write_text(OPEN_CODE)
    db = str(tmp_path / "llm.sqlite")
    token = create_token(Store(db), "c", ["submit", "read"])
    running = start(Settings(db=db, roots=[jobs_root], use_llm=True))
    h = auth(token)
    body = {"command": "python train.py", "workdir": str(jobs_root / "open"), "num_gpus": 1}
    try:
        first = httpx.post(f"{running.url}/v1/jobs", json={"id": "a1", **body}, headers=h, timeout=120).json()
        assert first["source"] == "static" and first["refinement"] == "queued"
        got = wait_for(running.url, h, "a1", lambda j: j["source"] != "static" or "refinement" in j["annotation"])
        assert got["source"] == "llm" and got["annotation"]["llm_calls"] >= 1
        assert got["annotation"]["code_profile"]["framework"] == first["code_profile"]["framework"]

        os.killpg(proc.pid, signal.SIGKILL)  # the model server dies mid-run
        proc.wait(timeout=30)
        (jobs_root / "other").mkdir()  # other code: the first job's profile is cached and would need no call
        (jobs_root / "other" / "train.py").write_text(OPEN_CODE.replace("gpt2-medium", "gpt2-large"))
        body["workdir"] = str(jobs_root / "other")
        second = httpx.post(f"{running.url}/v1/jobs", json={"id": "a2", **body}, headers=h, timeout=120).json()
        assert second["source"] == "static"
        got = wait_for(running.url, h, "a2", lambda j: "refinement" in j["annotation"])
        assert got["source"] == "static" and got["annotation"]["refinement"].startswith("failed: LLM call failed")
    finally:
        running.stop()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
