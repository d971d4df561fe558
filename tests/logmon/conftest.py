from __future__ import annotations

import os

import pytest

_ORIGINAL_HOME = os.environ.get("SCHEDMATE_HOME")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own SCHEDMATE_HOME (rule store, failure memory, LLM cache)."""
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield


@pytest.fixture
def llm_server(monkeypatch):
    """The running local LLM server (started by `python3 bootstrap.py test` or `schedmate llm serve`), found
    under the real SCHEDMATE_HOME and pinned through SCHEDMATE_LLM_* so the isolated home (fresh LLM cache,
    fresh rule store) still reaches it."""
    from schedmate.llm.serving import running_server

    if not os.environ.get("SCHEDMATE_LLM_BASE_URL"):
        isolated = os.environ.get("SCHEDMATE_HOME")
        if _ORIGINAL_HOME is None:
            os.environ.pop("SCHEDMATE_HOME", None)
        else:
            os.environ["SCHEDMATE_HOME"] = _ORIGINAL_HOME
        try:
            state = running_server()
        finally:
            os.environ["SCHEDMATE_HOME"] = isolated or ""
        if state is None:
            pytest.skip("no local LLM server running (python3 bootstrap.py test starts one)")
        monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", state.base_url)
        monkeypatch.setenv("SCHEDMATE_LLM_MODEL", state.model_alias)
        monkeypatch.setenv("SCHEDMATE_LLM_DIALECT", state.dialect)
    return os.environ["SCHEDMATE_LLM_BASE_URL"]
