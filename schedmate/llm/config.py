"""Client configuration: explicit arguments or `SCHEDMATE_LLM_*` environment variables.

| variable | field | default |
|---|---|---|
| `SCHEDMATE_LLM_BASE_URL` | `base_url` | the server recorded by `schedmate llm serve`, if one is running |
| `SCHEDMATE_LLM_MODEL` | `model` | that server's model alias, else `qwen2.5-coder-0.5b` |
| `SCHEDMATE_LLM_API_KEY` | `api_key` | `sk-local` |
| `SCHEDMATE_LLM_DIALECT` | `dialect` | `auto` (ask the server: `/v1/models` `owned_by`, or the recorded state) |
| `SCHEDMATE_LLM_TIMEOUT` | `timeout_s` | 120 |
| `SCHEDMATE_LLM_MAX_CONCURRENCY` | `max_concurrency` | 2 |
| `SCHEDMATE_LLM_CACHE` | `cache` | `1` (`0` disables the disk cache) |
| `SCHEDMATE_HOME` | cache location | `~/.schedmate` -> `$SCHEDMATE_HOME/cache/llm.sqlite` |
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Dialect = Literal["auto", "vllm", "llamacpp", "openai"]
DEFAULT_MODEL = "qwen2.5-coder-0.5b"


def default_cache_path() -> Path:
    home = Path(os.environ.get("SCHEDMATE_HOME") or "~/.schedmate").expanduser()
    return home / "cache" / "llm.sqlite"


class LLMConfig(BaseModel):
    """Where the OpenAI-compatible server is and how to talk to it."""

    model_config = ConfigDict(frozen=True)

    base_url: str | None = None
    """e.g. `http://127.0.0.1:8101/v1`; None means no server configured (calls raise LLMUnavailableError)."""
    model: str = DEFAULT_MODEL
    api_key: str = "sk-local"
    dialect: Dialect = "auto"
    """How to ask for structured output: `vllm`/`openai` json_schema, `llamacpp` json_object + schema."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Read timeout of one request (a CPU server answers in seconds; long prompts take longer)."""
    connect_timeout_s: float = Field(default=5.0, gt=0)
    max_retries: int = Field(default=3, ge=1)
    """Attempts per request on connection errors, timeouts and 5xx (exponential backoff between them)."""
    backoff_s: float = Field(default=0.5, ge=0)
    """First backoff; doubles each retry, capped at 8 s."""
    max_concurrency: int = Field(default=2, ge=1)
    """Requests in flight at once per client (sync and async each have their own limit)."""
    cache: bool = True
    cache_path: Path | None = None
    """SQLite cache file; None means `$SCHEDMATE_HOME/cache/llm.sqlite`."""

    @classmethod
    def from_env(cls, **overrides: object) -> LLMConfig:
        """Config from `SCHEDMATE_LLM_*` (see module docstring); keyword arguments win over the environment.

        Without `SCHEDMATE_LLM_BASE_URL`, uses a server started by `schedmate llm serve` if one answers.
        """
        env = os.environ
        values: dict[str, object] = {}
        if env.get("SCHEDMATE_LLM_BASE_URL"):
            values["base_url"] = env["SCHEDMATE_LLM_BASE_URL"]
        if env.get("SCHEDMATE_LLM_MODEL"):
            values["model"] = env["SCHEDMATE_LLM_MODEL"]
        if env.get("SCHEDMATE_LLM_API_KEY"):
            values["api_key"] = env["SCHEDMATE_LLM_API_KEY"]
        if env.get("SCHEDMATE_LLM_DIALECT"):
            values["dialect"] = env["SCHEDMATE_LLM_DIALECT"]
        if env.get("SCHEDMATE_LLM_TIMEOUT"):
            values["timeout_s"] = env["SCHEDMATE_LLM_TIMEOUT"]
        if env.get("SCHEDMATE_LLM_MAX_CONCURRENCY"):
            values["max_concurrency"] = env["SCHEDMATE_LLM_MAX_CONCURRENCY"]
        if env.get("SCHEDMATE_LLM_CACHE"):
            values["cache"] = env["SCHEDMATE_LLM_CACHE"].strip().lower() not in ("0", "false", "no", "off")
        values.update(overrides)
        if not values.get("base_url"):
            from schedmate.llm.serving import running_server

            state = running_server()
            if state is not None:
                values["base_url"] = state.base_url
                values.setdefault("model", state.model_alias)
                if values.get("dialect", "auto") == "auto":
                    values["dialect"] = state.dialect
        return cls.model_validate(values)

    def resolved_cache_path(self) -> Path:
        return self.cache_path if self.cache_path is not None else default_cache_path()
