"""`Transport`: the HTTP side of `LLMClient` — OpenAI clients (sync and one per event loop), the concurrency
limit, retries with backoff, error translation and the server's structured-output dialect.

Connection errors, timeouts and 5xx are retried with exponential backoff (tenacity, `LLMConfig.max_retries`
attempts), then raise `LLMUnavailableError`; 4xx raise `LLMRequestError` at once. At most
`LLMConfig.max_concurrency` requests are in flight per transport (a threading semaphore for sync calls, an
asyncio one per event loop for async calls).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

import httpx
import openai
from tenacity import AsyncRetrying, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from schedmate.llm.config import LLMConfig
from schedmate.llm.errors import LLMError, LLMRequestError, LLMUnavailableError


def _transient(e: BaseException) -> bool:
    if isinstance(e, openai.APIConnectionError):  # includes APITimeoutError
        return True
    return isinstance(e, openai.APIStatusError) and e.status_code >= 500


def dialect_from_models(data: list[dict[str, Any]]) -> str:
    """The dialect a `/v1/models` answer reveals (`owned_by`): vllm, llamacpp, else openai."""
    owners = {str(m.get("owned_by", "")).lower() for m in data if isinstance(m, dict)}
    if "vllm" in owners:
        return "vllm"
    if owners & {"me", "llamacpp", "llama.cpp", "llama-cpp-python"}:
        return "llamacpp"
    return "openai"


class Transport:
    """Requests to one OpenAI-compatible server. Thread-safe; usable from several event loops."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._sync: openai.OpenAI | None = None
        self._sem = threading.BoundedSemaphore(config.max_concurrency)
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[openai.AsyncOpenAI, asyncio.Semaphore]]
        self._async = weakref.WeakKeyDictionary()

    def base_url(self) -> str:
        if not self.config.base_url:
            raise LLMUnavailableError(
                "no LLM server configured: set SCHEDMATE_LLM_BASE_URL or start one with `schedmate llm serve`"
            )
        return self.config.base_url

    def _timeout(self) -> openai.Timeout:
        return openai.Timeout(self.config.timeout_s, connect=self.config.connect_timeout_s)

    def _client(self) -> openai.OpenAI:
        with self._lock:
            if self._sync is None:
                self._sync = openai.OpenAI(base_url=self.base_url(), api_key=self.config.api_key,
                                           timeout=self._timeout(), max_retries=0)
            return self._sync

    def _aclient(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async.get(loop)
            if entry is None:
                entry = (
                    openai.AsyncOpenAI(base_url=self.base_url(), api_key=self.config.api_key,
                                       timeout=self._timeout(), max_retries=0),
                    asyncio.Semaphore(self.config.max_concurrency),
                )
                self._async[loop] = entry
            return entry

    def _retry_kwargs(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.config.max_retries),
            "wait": wait_exponential(multiplier=self.config.backoff_s, min=self.config.backoff_s, max=8.0),
            "retry": retry_if_exception(_transient),
            "reraise": True,
        }

    def translate(self, e: Exception) -> LLMError:
        where = self.config.base_url
        if isinstance(e, openai.APIConnectionError):
            return LLMUnavailableError(f"LLM server {where} unreachable after {self.config.max_retries} attempts: {e}")
        if isinstance(e, openai.APIStatusError):
            if e.status_code >= 500:
                return LLMUnavailableError(f"LLM server {where} answered {e.status_code}: {e.message}")
            return LLMRequestError(f"LLM server {where} refused the request ({e.status_code}): {e.message}",
                                   status_code=e.status_code)
        return LLMError(f"LLM call to {where} failed: {e!r}")

    def create(self, kwargs: dict[str, Any]) -> Any:
        """One chat completion (`kwargs` for `chat.completions.create`), retried; raises an `LLMError`."""
        client = self._client()

        def attempt() -> Any:
            with self._sem:
                return client.chat.completions.create(**kwargs)

        try:
            return Retrying(**self._retry_kwargs())(attempt)
        except openai.OpenAIError as e:
            raise self.translate(e) from e

    async def acreate(self, kwargs: dict[str, Any]) -> Any:
        """Async twin of `create`."""
        client, sem = self._aclient()
        try:
            async for attempt in AsyncRetrying(**self._retry_kwargs()):
                with attempt:
                    async with sem:
                        return await client.chat.completions.create(**kwargs)
        except openai.OpenAIError as e:
            raise self.translate(e) from e
        raise AssertionError("unreachable")  # pragma: no cover

    def detect_dialect(self) -> str:
        """The dialect of the server: from the state of a server we started, else from its `/models` answer."""
        base = self.base_url().rstrip("/")
        from schedmate.llm.serving import ENGINES, read_state

        for engine in ENGINES:  # a server we started ourselves says what it is
            state = read_state(engine)
            if state is not None and state.base_url.rstrip("/") == base:
                return state.dialect
        try:
            r = httpx.get(base + "/models", timeout=httpx.Timeout(self.config.timeout_s, connect=self.config.connect_timeout_s),
                          headers={"Authorization": f"Bearer {self.config.api_key}"})
            r.raise_for_status()
            data = r.json().get("data", [])
        except (httpx.HTTPError, ValueError, AttributeError) as e:
            raise LLMUnavailableError(f"LLM server {base} unreachable (GET /models: {e!r})") from e
        return dialect_from_models(data if isinstance(data, list) else [])

    def models(self) -> list[str]:
        try:
            return [m.id for m in self._client().models.list().data]
        except openai.OpenAIError as e:
            raise self.translate(e) from e

    def close(self) -> None:
        with self._lock:
            if self._sync is not None:
                self._sync.close()
                self._sync = None

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async.pop(loop, None)
        if entry is not None:
            await entry[0].close()
