"""Fixtures for the LLM layer's tests: real servers found through `running_server()`, never mocks.

Tests marked `llm` need a server started by `schedmate llm serve` (or `python3 bootstrap.py test`). Without one
they are skipped, unless `SCHEDMATE_REQUIRE_LLM=1` (CI), where a missing server FAILS the test.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from schedmate.llm import LLMCache, LLMClient, LLMConfig
from schedmate.llm.serving import ENGINES, ServerState, running_server


def _server_or_skip(engine: str | None) -> ServerState:
    state = running_server(engine)
    if state is None:
        what = f"a {engine} server" if engine else "an LLM server"
        msg = f"{what} is not up: start it with `schedmate llm serve --engine {engine or 'vllm'}`"
        if os.environ.get("SCHEDMATE_REQUIRE_LLM") == "1":
            pytest.fail(f"SCHEDMATE_REQUIRE_LLM=1 but {msg}", pytrace=False)
        pytest.skip(msg)
    return state


def engines_under_test() -> tuple[str, ...]:
    """`SCHEDMATE_TEST_ENGINES` (comma-separated; `python3 bootstrap.py test` sets it), else every engine."""
    raw = os.environ.get("SCHEDMATE_TEST_ENGINES", "")
    return tuple(e.strip() for e in raw.split(",") if e.strip()) or ENGINES


@pytest.fixture(params=ENGINES)
def engine_server(request: pytest.FixtureRequest) -> ServerState:
    """Each engine of this run in turn (all must be up when SCHEDMATE_REQUIRE_LLM=1)."""
    if request.param not in engines_under_test():
        pytest.skip(f"{request.param} is not part of this run (SCHEDMATE_TEST_ENGINES={','.join(engines_under_test())})")
    return _server_or_skip(request.param)


@pytest.fixture
def any_server() -> ServerState:
    """The server `running_server()` picks (vllm, else llamacpp)."""
    return _server_or_skip(None)


@pytest.fixture
def make_client(tmp_path) -> Callable[..., LLMClient]:
    """`make_client(state, **config)`: a client of that server with a private cache in tmp_path."""
    clients: list[LLMClient] = []

    def make(state: ServerState, **config: object) -> LLMClient:
        cfg = LLMConfig(base_url=state.base_url, model=state.model_alias, **config)
        client = LLMClient(cfg, cache=LLMCache(tmp_path / "llm.sqlite"))
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()
