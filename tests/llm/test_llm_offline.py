"""Client, cache and serving behaviour that needs no model: closed ports, corrupt caches, stale state files."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from llm_test_support import JobFacts
from typer.testing import CliRunner

from schedmate.cli import app
from schedmate.llm import LLMCache, LLMClient, LLMConfig, LLMUnavailableError, Usage
from schedmate.llm.cache import cache_key, is_cacheable
from schedmate.llm.errors import ServeError
from schedmate.llm.serving import (
    WARM_STRING_BOUNDS,
    ModelArtifact,
    ServerState,
    llama_threads,
    pull,
    read_state,
    running_server,
    server_command,
    sha256_file,
    state_path,
    stop,
    warm_structured_output,
)
from schedmate.llm.usage import CallUsage


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path / "home"))
    for var in ("SCHEDMATE_LLM_BASE_URL", "SCHEDMATE_LLM_MODEL", "SCHEDMATE_LLM_DIALECT", "SCHEDMATE_LLM_CACHE"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "home"


# --------------------------------------------------------------------------- server down


@pytest.mark.parametrize("dialect", ["auto", "llamacpp"])
def test_a_server_that_is_down_raises_llm_unavailable_error(home, dialect):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    client = LLMClient(LLMConfig(base_url=url, dialect=dialect, max_retries=2, backoff_s=0.01), cache=False)
    with pytest.raises(LLMUnavailableError, match=r"127\.0\.0\.1"):
        client.structured("_example_job_facts", {"command": "python x.py"}, schema=JobFacts, component="code")
    code = client.usage.get("code")
    assert (code.calls, code.failures, code.requests) == (1, 1, 0)


def test_a_chat_to_a_server_that_is_down_raises_llm_unavailable_error(home):
    client = LLMClient(LLMConfig(base_url=f"http://127.0.0.1:{closed_port()}/v1", dialect="vllm",
                                 max_retries=1), cache=False)
    with pytest.raises(LLMUnavailableError, match="unreachable after 1 attempts"):
        client.chat([{"role": "user", "content": "hi"}])


def test_no_configured_server_raises_llm_unavailable_error_naming_the_fix(home):
    config = LLMConfig.from_env()
    assert config.base_url is None
    with pytest.raises(LLMUnavailableError, match="SCHEDMATE_LLM_BASE_URL"):
        LLMClient(config, cache=False).structured("_example_job_facts", {"command": "x"}, schema=JobFacts)


def test_the_config_reads_the_environment_and_arguments_win(home, monkeypatch):
    monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SCHEDMATE_LLM_MODEL", "m")
    monkeypatch.setenv("SCHEDMATE_LLM_DIALECT", "llamacpp")
    monkeypatch.setenv("SCHEDMATE_LLM_CACHE", "0")
    config = LLMConfig.from_env(model="other")
    assert (config.base_url, config.model, config.dialect, config.api_key, config.cache) == (
        "http://127.0.0.1:9/v1", "other", "llamacpp", "sk-local", False)
    assert config.resolved_cache_path() == home / "cache" / "llm.sqlite"
    monkeypatch.setenv("SCHEDMATE_LLM_DIALECT", "tgi")
    with pytest.raises(ValueError, match="dialect"):
        LLMConfig.from_env()


# --------------------------------------------------------------------------- cache


def test_only_greedy_or_seeded_calls_are_cacheable():
    assert is_cacheable(0.0, None) and is_cacheable(0.8, 1)
    assert not is_cacheable(0.8, None)


def test_the_cache_key_changes_with_every_part():
    base = {"prompt_id": "p", "prompt_version": "1", "messages": [{"role": "user", "content": "x"}], "model": "m",
            "params": {"temperature": 0}, "schema": {"type": "object"}, "dialect": "vllm"}
    keys = {cache_key(**base)}
    for field, other in [("prompt_id", "q"), ("prompt_version", "2"), ("messages", []), ("model", "n"),
                         ("params", {"temperature": 0.1}), ("schema", {}), ("dialect", "llamacpp")]:
        keys.add(cache_key(**{**base, field: other}))
    assert len(keys) == 8
    assert cache_key(**base) == cache_key(**dict(reversed(list(base.items()))))


def test_corrupt_rows_and_a_garbage_cache_file_are_misses_not_crashes(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    cache.put("k", {"raw": "{}"})
    assert cache.get("k") == {"raw": "{}"}
    import sqlite3

    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.execute("UPDATE answers SET value = '[1, 2'")
    assert cache.get("k") is None

    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    broken = LLMCache(garbage)
    assert broken.get("k") is None
    broken.put("k", {"raw": "{}"})  # logged and dropped
    assert len(broken) == 0


def _writer(path: str, prefix: str, n: int) -> None:
    cache = LLMCache(path)
    for i in range(n):
        cache.put(f"{prefix}{i}", {"raw": str(i)})


def test_processes_writing_the_same_cache_at_once_lose_nothing(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, p, 40)) for p in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    cache = LLMCache(path)
    assert len(cache) == 80
    assert cache.get("b39") == {"raw": "39"}


def test_the_usage_ledger_sums_per_component_and_in_total():
    usage = Usage()
    usage.record("code", CallUsage(requests=1, prompt_tokens=100, completion_tokens=20, seconds=2.0))
    usage.record("code", CallUsage(cached=True))
    usage.record("log", CallUsage(requests=2, prompt_tokens=50, completion_tokens=5, seconds=1.0, repaired=True),
                 failed=True)
    s = usage.summary()
    assert s["code"] | {} == {"calls": 2, "cache_hits": 1, "requests": 1, "repairs": 0, "failures": 0,
                              "prompt_tokens": 100, "completion_tokens": 20, "seconds": 2.0}
    assert (s["log"]["repairs"], s["log"]["failures"]) == (1, 1)
    assert (s["_total"]["calls"], s["_total"]["prompt_tokens"], s["_total"]["requests"]) == (3, 150, 3)


# --------------------------------------------------------------------------- serving bookkeeping


def test_pull_keeps_a_present_file_whose_hash_matches_without_downloading(home):
    content = b"GGUF fake weights"
    art = ModelArtifact(name="tiny", filename="tiny.gguf", sha256=__import__("hashlib").sha256(content).hexdigest(),
                        parts=(("no-such-package-xyz==0", "x.bin"),))
    art.path.parent.mkdir(parents=True)
    art.path.write_bytes(content)
    messages = []
    assert pull(art, report=messages.append) == art.path
    assert "sha256 OK" in messages[0] and sha256_file(art.path) == art.sha256


def _record(engine: str, pid: int, port: int) -> ServerState:
    state = ServerState(engine=engine, pid=pid, port=port, base_url=f"http://127.0.0.1:{port}/v1",
                        model_alias="m", model_path="/x", log_path="/x.log", started_at=0.0, command=["x"])
    state_path(engine).parent.mkdir(parents=True, exist_ok=True)
    state_path(engine).write_text(state.model_dump_json())
    return state


def test_a_recorded_server_whose_process_is_gone_is_not_running(home):
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    _record("llamacpp", int(proc.stdout), closed_port())
    assert read_state("llamacpp") is not None
    assert running_server("llamacpp") is None and running_server() is None


def test_stop_never_kills_a_recorded_pid_that_is_not_an_engine_server(home):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        _record("vllm", sleeper.pid, closed_port())
        assert stop("vllm") == []
        assert sleeper.poll() is None
        assert not state_path("vllm").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_env_and_status_commands_say_when_no_server_is_up(home):
    runner = CliRunner()
    env = runner.invoke(app, ["llm", "env", "--engine", "llamacpp"])
    assert env.exit_code == 1 and "schedmate llm serve" in env.output
    status = runner.invoke(app, ["llm", "status", "--json"])
    assert status.exit_code == 1
    assert {row["engine"]: row["healthy"] for row in json.loads(status.stdout)} == {"vllm": False, "llamacpp": False}


def test_the_vllm_command_line_carries_the_structured_output_and_tool_flags(home):
    cmd = server_command("vllm", Path("/models/q"), 8102)
    assert cmd[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    flags = " ".join(cmd)
    assert '--structured-outputs-config {"backend":"xgrammar","disable_any_whitespace":true}' in flags
    assert "--enable-auto-tool-choice --tool-call-parser hermes" in flags
    assert "--served-model-name qwen2.5-coder-0.5b" in flags and "--max-model-len 4096" in flags
    llama = server_command("llamacpp", Path("/models/q.gguf"), 8101)
    assert llama[1:3] == ["-m", "llama_cpp.server"] and "--model_alias" in llama
    assert os.path.basename(llama[0]) == "python"


def _string_bounds(schema: object) -> set[int]:
    if isinstance(schema, dict):
        own = {schema["maxLength"]} if isinstance(schema.get("maxLength"), int) else set()
        return own.union(*(_string_bounds(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_string_bounds(v) for v in schema))
    return set()


def test_the_vllm_warm_up_compiles_every_string_bound_of_the_output_schemas():
    from schedmate.codeprof.llm_fields import ASKABLE, field_model
    from schedmate.logmon.assist import LogDiagnosis, proposals_model

    used = set().union(*(_string_bounds(m.model_json_schema())
                         for m in (LogDiagnosis, proposals_model([1, 3]), field_model(list(ASKABLE)))))
    assert used and used <= set(WARM_STRING_BOUNDS)
    assert _string_bounds({"a": [{"maxLength": 7}, {"b": {"maxLength": 9}}]}) == {7, 9}


def test_the_vllm_warm_up_failing_is_reported_and_serving_goes_on(home):
    port = closed_port()
    state = ServerState(engine="vllm", pid=1, port=port, base_url=f"http://127.0.0.1:{port}/v1", model_alias="m",
                        model_path="/x", log_path="/x.log", started_at=0.0, command=["x"])
    messages: list[str] = []
    assert warm_structured_output(state, report=messages.append, timeout_s=5) is None
    assert len(messages) == 1 and "warm-up failed" in messages[0]


def test_llama_cpp_leaves_one_core_free_unless_told_its_thread_count(monkeypatch):
    monkeypatch.delenv("SCHEDMATE_LLM_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert llama_threads() == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert llama_threads() == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert llama_threads() == 15
    cmd = server_command("llamacpp", Path("/models/q.gguf"), 8101)
    assert cmd[cmd.index("--n_threads") + 1] == cmd[cmd.index("--n_threads_batch") + 1] == "15"
    monkeypatch.setenv("SCHEDMATE_LLM_THREADS", "2")
    assert llama_threads() == 2
    monkeypatch.setenv("SCHEDMATE_LLM_THREADS", "two")
    with pytest.raises(ServeError, match="SCHEDMATE_LLM_THREADS='two'"):
        llama_threads()
