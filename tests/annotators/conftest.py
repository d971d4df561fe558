"""Real local LLM server for the `llm`-marked tests here (see tests/llm/conftest.py for the rules)."""

import os

import pytest

from schedmate.llm.serving import running_server


@pytest.fixture
def llm_server():
    state = running_server()
    if state is None:
        msg = "no LLM server is up: start one with `schedmate llm serve`"
        if os.environ.get("SCHEDMATE_REQUIRE_LLM") == "1":
            pytest.fail(f"SCHEDMATE_REQUIRE_LLM=1 but {msg}", pytrace=False)
        pytest.skip(msg)
    return state
