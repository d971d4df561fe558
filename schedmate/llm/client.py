"""`LLMClient`: structured output and chat against any OpenAI-compatible server, sync and async.

Structured output (`structured` / `astructured`):

1. render the prompt (`schema_json` is passed to the template unless the caller gives it);
2. look the call up in the disk cache (deterministic calls only: temperature 0 or an explicit seed);
3. ask the server with constrained decoding in its dialect: `vllm` and `openai` get
   `response_format={"type": "json_schema", "json_schema": {...}}`; `llamacpp` (llama-cpp-python, which
   rejects json_schema with a 500) gets `{"type": "json_object", "schema": {...}}`;
4. validate the answer with the pydantic model; if it fails, send the answer back with the validation error
   and ask once for a corrected answer; if that fails too, raise `LLMSchemaError`;
5. store the validated answer in the cache and account tokens and time in `client.usage` under `component`.

The protocol itself, without I/O, is `schedmate.llm.structured`; requests, retries and the dialect are
`schedmate.llm.transport`. Transport: connection errors, timeouts and 5xx are retried with exponential
backoff (tenacity, `LLMConfig.max_retries` attempts), then raise `LLMUnavailableError`; 4xx raise
`LLMRequestError` at once. At most `LLMConfig.max_concurrency` requests are in flight per client (a
threading semaphore for sync calls, an asyncio one per event loop for async calls).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Self

from schedmate.llm.cache import LLMCache
from schedmate.llm.config import LLMConfig
from schedmate.llm.errors import LLMError, LLMSchemaError
from schedmate.llm.prompts import Prompt
from schedmate.llm.structured import Ledger, StructuredResult, T, account, ask, prepare
from schedmate.llm.transport import Transport
from schedmate.llm.usage import CallUsage, Usage

__all__ = ["LLMClient", "StructuredResult"]


class LLMClient:
    """Client of one OpenAI-compatible server. Thread-safe; usable from several event loops."""

    def __init__(
        self,
        config: LLMConfig | None = None,
        *,
        usage: Usage | None = None,
        cache: LLMCache | bool | None = None,
    ) -> None:
        """`cache`: an `LLMCache`, False for none, None to follow `config.cache`."""
        self.config = config if config is not None else LLMConfig.from_env()
        self.usage = usage if usage is not None else Usage()
        if isinstance(cache, LLMCache):
            self.cache: LLMCache | None = cache
        elif cache is False or (cache is None and not self.config.cache):
            self.cache = None
        else:
            self.cache = LLMCache(self.config.resolved_cache_path())
        self._dialect: str | None = None if self.config.dialect == "auto" else self.config.dialect
        self._transport = Transport(self.config)
        self._ledger = Ledger(model=self.config.model, cache=self.cache, usage=self.usage)

    # ------------------------------------------------------------------ dialect

    def dialect(self) -> str:
        """`vllm`, `llamacpp` or `openai`: the configured one, else detected once from the server."""
        if self._dialect is None:
            self._dialect = self._transport.detect_dialect()
        return self._dialect

    async def adialect(self) -> str:
        if self._dialect is None:
            self._dialect = await asyncio.to_thread(self._transport.detect_dialect)
        return self._dialect

    def models(self) -> list[str]:
        """Model ids the server serves (a health check)."""
        return self._transport.models()

    def _fail(self, component: str, call: CallUsage, started: float) -> None:
        call.seconds = time.monotonic() - started
        self.usage.record(component, call, failed=True)

    # ------------------------------------------------------------------ structured output

    def structured(
        self,
        prompt: Prompt | str,
        variables: dict[str, Any] | None = None,
        *,
        schema: type[T],
        component: str = "default",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        top_p: float | None = None,
        use_cache: bool = True,
    ) -> StructuredResult[T]:
        """Ask `prompt` (a `Prompt` or a prompt id) and return a value of `schema`.

        Decoding parameters default to the prompt's `params`; the keyword arguments override them.
        Raises `LLMSchemaError`, `LLMUnavailableError`, `LLMRequestError` (all `LLMError`).
        """
        started = time.monotonic()
        params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "top_p": top_p}
        prep = None
        try:
            dialect = self.dialect()
            prep = prepare(prompt, variables, schema, params, self._ledger, use_cache, dialect, started)
            flow = ask(prep, schema, component, dialect, self._ledger)
            request = next(flow)
            while True:
                request = flow.send(self._transport.create(request))
        except StopIteration as done:
            return done.value
        except LLMError as e:
            if not isinstance(e, LLMSchemaError):
                self._fail(component, prep.call if prep is not None else CallUsage(), started)
            raise

    async def astructured(
        self,
        prompt: Prompt | str,
        variables: dict[str, Any] | None = None,
        *,
        schema: type[T],
        component: str = "default",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        top_p: float | None = None,
        use_cache: bool = True,
    ) -> StructuredResult[T]:
        """Async twin of `structured` (the cache lookup and write are short blocking SQLite calls)."""
        started = time.monotonic()
        params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "top_p": top_p}
        prep = None
        try:
            dialect = await self.adialect()
            prep = prepare(prompt, variables, schema, params, self._ledger, use_cache, dialect, started)
            flow = ask(prep, schema, component, dialect, self._ledger)
            request = next(flow)
            while True:
                request = flow.send(await self._transport.acreate(request))
        except StopIteration as done:
            return done.value
        except LLMError as e:
            if not isinstance(e, LLMSchemaError):
                self._fail(component, prep.call if prep is not None else CallUsage(), started)
            raise

    # ------------------------------------------------------------------ plain chat / tools

    def _chat_kwargs(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                     tool_choice: Any, temperature: float, max_tokens: int, extra: dict[str, Any]) -> dict[str, Any]:
        kw: dict[str, Any] = dict(model=self.config.model, messages=messages, temperature=temperature,
                                  max_tokens=max_tokens, **extra)
        if tools:
            kw["tools"] = tools
            if tool_choice is not None:
                if isinstance(tool_choice, str) and tool_choice not in ("auto", "none", "required"):
                    tool_choice = {"type": "function", "function": {"name": tool_choice}}
                kw["tool_choice"] = tool_choice
        return kw

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | dict[str, Any] | None = None,
        component: str = "chat",
        temperature: float = 0.0,
        max_tokens: int = 512,
        **extra: Any,
    ) -> Any:
        """One chat round trip, uncached; returns the raw assistant message (`.content`, `.tool_calls`).

        `tools` are OpenAI function specs; `tool_choice` is "auto", "none", "required", a function name (forces
        that call) or an OpenAI tool_choice dict. Append the message and `{"role": "tool", "tool_call_id": ...,
        "content": ...}` answers to `messages` and call again to continue the loop.
        """
        started = time.monotonic()
        call = CallUsage()
        try:
            response = self._transport.create(self._chat_kwargs(messages, tools, tool_choice, temperature, max_tokens, extra))
        except LLMError:
            self._fail(component, call, started)
            raise
        account(call, response)
        call.seconds = time.monotonic() - started
        self.usage.record(component, call)
        return response.choices[0].message

    async def achat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | dict[str, Any] | None = None,
        component: str = "chat",
        temperature: float = 0.0,
        max_tokens: int = 512,
        **extra: Any,
    ) -> Any:
        """Async twin of `chat`."""
        started = time.monotonic()
        call = CallUsage()
        try:
            response = await self._transport.acreate(
                self._chat_kwargs(messages, tools, tool_choice, temperature, max_tokens, extra))
        except LLMError:
            self._fail(component, call, started)
            raise
        account(call, response)
        call.seconds = time.monotonic() - started
        self.usage.record(component, call)
        return response.choices[0].message

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self._transport.close()

    async def aclose(self) -> None:
        await self._transport.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
