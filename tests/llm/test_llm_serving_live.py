"""`serve` / `stop` for real: a second llama.cpp server in a private $SCHEDMATE_HOME (seconds to start).

The private home links to the installed llamacpp engine and the pulled model of the real $SCHEDMATE_HOME, so
nothing is installed or downloaded here.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from schedmate.llm.errors import ServeError
from schedmate.llm.serving import (
    QWEN_CODER_05B,
    engine_installed,
    env_lines,
    read_state,
    running_server,
    serve,
    status,
    stop,
)

pytestmark = pytest.mark.llm


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def private_home(tmp_path, monkeypatch) -> Path:
    real_engine = Path(os.environ.get("SCHEDMATE_HOME") or "~/.schedmate").expanduser() / "engines" / "llamacpp"
    real_model = QWEN_CODER_05B.path
    if not (engine_installed("llamacpp") and real_model.exists()):
        msg = "the llamacpp engine and the model are not installed: run `schedmate llm install --engine llamacpp`"
        if os.environ.get("SCHEDMATE_REQUIRE_LLM") == "1":
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    home = tmp_path / "home"
    (home / "engines").mkdir(parents=True)
    (home / "models").mkdir()
    (home / "engines" / "llamacpp").symlink_to(real_engine)
    (home / "models" / real_model.name).symlink_to(real_model)
    monkeypatch.setenv("SCHEDMATE_HOME", str(home))
    yield home
    stop("llamacpp")


def test_a_served_llamacpp_server_is_found_answers_and_stops_with_its_process_group(private_home):
    port = free_port()
    messages: list[str] = []
    state = serve("llamacpp", port=port, report=messages.append)

    assert state.base_url == f"http://127.0.0.1:{port}/v1"
    assert running_server("llamacpp") == state == running_server()
    assert serve("llamacpp", port=port) == state  # already running: same server, no second process
    assert "export SCHEDMATE_LLM_BASE_URL=" + state.base_url in env_lines("llamacpp")
    row = {r.engine: r for r in status()}["llamacpp"]
    assert row.healthy and row.models == ["qwen2.5-coder-0.5b"]

    assert stop("llamacpp") == ["llamacpp"]
    with pytest.raises(ProcessLookupError):
        os.killpg(state.pid, 0)
    assert running_server("llamacpp") is None and read_state("llamacpp") is None


def test_a_server_that_dies_at_start_raises_serve_error_with_the_log_tail(private_home):
    garbage = private_home / "models" / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file" * 1000)
    with pytest.raises(ServeError, match=r"llamacpp server exited with code \d+; last lines of .*llamacpp\.log"):
        serve("llamacpp", model=garbage, port=free_port())
    assert read_state("llamacpp") is None
